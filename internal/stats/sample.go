// Package stats is the engine of `fsbench stats`: sources that read metrics
// (a JuiceFS .stats file, the kernel's /proc files, a Prometheus endpoint,
// running fsbench benchmarks) into flat samples, the sections and columns
// that say what to show of them, the rate logic that turns two samples into
// one row, and the renderers of rows (a coloured terminal view in the manner
// of `juicefs stats`, plain lines, NDJSON, CSV).
//
// Everything but the sources is pure: a row is a function of two samples,
// and a sample carries the time it was taken, so the rate logic and the
// renderers are tested with made-up samples and a fake clock.
//
// It only reads counters: it changes nothing on the mount or the host it
// watches.
package stats

import (
	"math"
	"time"
)

// Sample is one reading of every source, taken at Time: counter and gauge
// values under flat names (JuiceFS's .stats names, "sys.cpu.user",
// "disk.read_bytes", ...) and a few strings (the phase of a running bench).
type Sample struct {
	Time   time.Time
	Values map[string]float64
	Text   map[string]string
}

// NewSample returns an empty sample taken at t.
func NewSample(t time.Time) *Sample {
	return &Sample{Time: t, Values: map[string]float64{}, Text: map[string]string{}}
}

// Set stores a value.
func (s *Sample) Set(name string, v float64) { s.Values[name] = v }

// Add adds to a value (missing counts as zero).
func (s *Sample) Add(name string, v float64) { s.Values[name] += v }

// Kind says how a column is computed from two samples.
type Kind uint8

// The kinds of columns.
const (
	// Rate is the per-second increase of a counter: (cur-prev)/seconds.
	Rate Kind = iota
	// Gauge is the current value.
	Gauge
	// Mean is increase(Key)/increase(Count) times Scale: the mean latency
	// of a histogram (its _sum over its _total), for example.
	Mean
	// Share is increase(Key)/increase(Count) as a percentage: a CPU mode's
	// share of all CPU time.
	Share
	// WallTime is the time the sample was taken (the t section).
	WallTime
	// Text is a string of the sample (Sample.Text[Key]).
	Text
)

// Unit says how a column's value is printed.
type Unit uint8

// The units of columns.
const (
	Count   Unit = iota // a number: 4 digits with K, M, G (1024-based, as JuiceFS)
	Bytes               // bytes: 4 digits with B, K, M, G
	Millis              // milliseconds, as JuiceFS prints latencies
	Percent             // a percentage of one core or of a total
	Time                // a clock time, HH:MM:SS
	String              // free text, truncated to the column width
)

// Column is one figure of a section.
type Column struct {
	Nick  string  // header, at most Width characters
	Field string  // name in JSON and CSV, with its unit: "read_bytes_per_s"
	Kind  Kind    // how it is computed
	Unit  Unit    // how it is printed
	Key   string  // the sample value it is computed from
	Count string  // the denominator of Mean and Share
	Scale float64 // multiplies the result; 0 means 1
	Width int     // characters in the terminal view; 0 means 5
}

// width is the column's width on a terminal.
func (c Column) width() int {
	if c.Width > 0 {
		return c.Width
	}
	return 5
}

// Section is a named group of columns, chosen by a schema letter.
type Section struct {
	Letter  byte
	Name    string // "fuse", "disk", ...
	Columns []Column
}

// Value is one computed figure. OK is false for a gap: a value that cannot
// be known (no previous sample, a missing metric, a counter that went
// backwards because its process restarted).
type Value struct {
	V   float64
	S   string // for WallTime and Text columns
	OK  bool
	Col *Column
}

// Row is one line of output: the figures of every column of the schema
// over the interval from Start to End.
type Row struct {
	Start, End time.Time
	Partial    bool // an in-place update between full rows
	Sections   []RowSection
}

// RowSection holds the values of one section of a row.
type RowSection struct {
	Section *Section
	Values  []Value
}

// Seconds is the length of the row's interval.
func (r *Row) Seconds() float64 { return r.End.Sub(r.Start).Seconds() }

// Compute makes the row of sections over the interval from prev to cur.
// prev may be nil (the first sample): rates, means and shares are then
// gaps, gauges are shown.
//
// A counter that is missing from either sample, or that is smaller in cur
// than in prev (its process restarted, the mount was remounted), gives a
// gap, never a negative or made-up figure; so does a sample whose reset key
// changed (see ResetKeys).
func Compute(sections []*Section, prev, cur *Sample) *Row {
	row := &Row{End: cur.Time, Sections: make([]RowSection, len(sections))}
	secs := 0.0
	if prev != nil {
		row.Start = prev.Time
		secs = cur.Time.Sub(prev.Time).Seconds()
	}
	for i, s := range sections {
		rs := RowSection{Section: s, Values: make([]Value, len(s.Columns))}
		reset := prev != nil && sectionReset(s, prev, cur)
		born := prev != nil && !reset && sourceAlive(s, prev, cur)
		for j := range s.Columns {
			c := &s.Columns[j]
			v := compute(c, prev, cur, secs, born)
			if reset && c.Kind != Gauge && c.Kind != WallTime && c.Kind != Text {
				v = Value{}
			}
			v.Col = c
			rs.Values[j] = v
		}
		row.Sections[i] = rs
	}
	return row
}

// ResetKeys name, per section letter, a sample value that only grows while
// its source keeps running (an uptime, a start time): when it goes
// backwards or changes, every rate of the section is a gap.
var ResetKeys = map[byte][]string{
	'u': {"juicefs_uptime"},
	'f': {"juicefs_uptime"},
	'm': {"juicefs_uptime"},
	'c': {"juicefs_uptime"},
	'o': {"juicefs_uptime"},
	'g': {"juicefs_uptime"},
	'p': {"proc.start"},
}

func sectionReset(s *Section, prev, cur *Sample) bool {
	for _, k := range ResetKeys[s.Letter] {
		a, okA := prev.Values[k]
		b, okB := cur.Values[k]
		if !okA || !okB {
			continue
		}
		if k == "proc.start" {
			if a != b {
				return true
			}
		} else if b < a {
			return true
		}
	}
	return false
}

// sourceAlive reports whether the section's source was read in both
// samples without a restart: a counter it lacks in prev but has in cur was
// then created, and counts from zero (the JuiceFS client makes a labelled
// series, say the PUT requests, on first use).
func sourceAlive(s *Section, prev, cur *Sample) bool {
	keys := ResetKeys[s.Letter]
	if len(keys) == 0 {
		return false
	}
	for _, k := range keys {
		_, a := prev.Values[k]
		_, b := cur.Values[k]
		if !a || !b {
			return false
		}
	}
	return true
}

func compute(c *Column, prev, cur *Sample, secs float64, born bool) Value {
	scale := c.Scale
	if scale == 0 {
		scale = 1
	}
	switch c.Kind {
	case WallTime:
		return Value{S: cur.Time.Format("15:04:05"), OK: true}
	case Text:
		s, ok := cur.Text[c.Key]
		return Value{S: s, OK: ok}
	case Gauge:
		v, ok := cur.Values[c.Key]
		return finite(v*scale, ok)
	}
	if prev == nil {
		return Value{}
	}
	d, ok := delta(prev, cur, c.Key, born)
	if !ok {
		return Value{}
	}
	switch c.Kind {
	case Rate:
		if secs <= 0 {
			return Value{}
		}
		return finite(d/secs*scale, true)
	case Mean, Share:
		n, ok := delta(prev, cur, c.Count, born)
		if !ok {
			return Value{}
		}
		if n == 0 {
			return Value{V: 0, OK: true}
		}
		if c.Kind == Share {
			scale *= 100
		}
		return finite(d/n*scale, true)
	}
	return Value{}
}

// delta is the increase of a counter; ok is false when it is missing from
// cur, missing from prev (unless born: it was created since, from zero), or
// went backwards.
func delta(prev, cur *Sample, key string, born bool) (float64, bool) {
	a, okA := prev.Values[key]
	b, okB := cur.Values[key]
	if !okA && born {
		a, okA = 0, true
	}
	if !okA || !okB || b < a {
		return 0, false
	}
	return b - a, true
}

func finite(v float64, ok bool) Value {
	if !ok || math.IsNaN(v) || math.IsInf(v, 0) {
		return Value{}
	}
	return Value{V: v, OK: true}
}
