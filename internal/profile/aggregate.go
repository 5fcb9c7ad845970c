// Package profile turns a stream of access-log lines (JuiceFS's format,
// see package accesslog) into per-operation statistics over windows of
// time: live (windows of wall-clock time while the log grows), replayed
// (windows that follow the log's own timestamps) or one summary over the
// whole log. It is what `fsbench profile` runs; it knows nothing of cobra.
//
// It only reads logs: it runs none of the operations they record (package
// replay does).
package profile

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"

	"github.com/fsbench/fsbench/internal/accesslog"
)

// Filter selects the entries that count. An empty list selects everything.
type Filter struct {
	UIDs, GIDs, PIDs []uint32
	Ops              []string
	Path             string // a substring of the arguments
}

func (f *Filter) match(e *accesslog.Entry, path []byte) bool {
	if len(f.UIDs) > 0 && !slices.Contains(f.UIDs, e.UID) ||
		len(f.GIDs) > 0 && !slices.Contains(f.GIDs, e.GID) ||
		len(f.PIDs) > 0 && !slices.Contains(f.PIDs, e.PID) {
		return false
	}
	if len(f.Ops) > 0 {
		found := false
		for _, op := range f.Ops {
			if string(e.Op) == op {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return len(path) == 0 || bytes.Contains(e.Args, path)
}

// Skipped counts the lines that are not entries, by reason.
type Skipped struct {
	Blank     int64 `json:"blank"`
	KeepAlive int64 `json:"keep_alive"`
	Malformed int64 `json:"malformed"` // truncated, run together, bad fields
	NotUTF8   int64 `json:"not_utf8"`
}

// Total is the number of lines skipped for any reason.
func (s Skipped) Total() int64 { return s.Blank + s.KeepAlive + s.Malformed + s.NotUTF8 }

// Bad is the number of lines skipped because they are damaged (not blank
// lines or keep-alives, which are expected).
func (s Skipped) Bad() int64 { return s.Malformed + s.NotUTF8 }

func (s *Skipped) add(o Skipped) {
	s.Blank += o.Blank
	s.KeepAlive += o.KeepAlive
	s.Malformed += o.Malformed
	s.NotUTF8 += o.NotUTF8
}

// Window is the statistics of one window of time, as rendered in a table
// or as one JSON object.
type Window struct {
	Mode     string    `json:"mode"` // live, replay or summary
	Source   string    `json:"source"`
	Start    time.Time `json:"start,omitzero"`
	End      time.Time `json:"end,omitzero"`
	Seconds  float64   `json:"seconds"`      // End - Start: what Percent is relative to
	Lines    int64     `json:"lines"`        // lines read in the window
	Entries  int64     `json:"entries"`      // entries counted (after the filters)
	Filtered int64     `json:"filtered_out"` // entries the filters left out
	Skipped  Skipped   `json:"skipped"`      // lines that are not entries, in the window
	// SkippedTotal is every line skipped since the start, of all reasons.
	SkippedTotal int64     `json:"skipped_total"`
	Operations   []OpStats `json:"operations"`
	Last         bool      `json:"last,omitempty"` // the last window of a replay
	// Interrupted marks a summary cut short by Ctrl-C: it holds what was
	// read until then.
	Interrupted bool `json:"interrupted,omitempty"`
}

// OpStats is one operation's row. Times are in microseconds.
type OpStats struct {
	Op      string  `json:"operation"`
	Count   int64   `json:"count"`
	Errors  int64   `json:"errors"`
	AvgUs   float64 `json:"average_us"`
	TotalUs float64 `json:"total_us"`
	// Percent is the time spent in the operation over the window's time;
	// it exceeds 100 when operations run concurrently.
	Percent float64 `json:"percent"`
	P50Us   float64 `json:"p50_us"`
	P99Us   float64 `json:"p99_us"`
	MaxUs   float64 `json:"max_us"`
}

// Sort orders of the rows.
const (
	SortTotal = "total"
	SortCount = "count"
	SortAvg   = "avg"
	SortP99   = "p99"
)

// SortKeys lists the accepted sort orders.
var SortKeys = []string{SortTotal, SortCount, SortAvg, SortP99}

const hourUs = int64(time.Hour / time.Microsecond)

// maxOps bounds the distinct operation names kept, so that a log of
// garbage cannot grow memory without bound; lines with further names are
// counted as malformed.
const maxOps = 256

type opStat struct {
	name   string
	count  int64
	errors int64
	total  time.Duration
	max    time.Duration
	hist   *hdrhistogram.Histogram // microseconds
}

// Latencies are kept in whole microseconds (the log's own resolution) up to
// an hour, with two significant digits (1% error): 26 KiB per operation,
// small enough to summarise and clear at every window. (metrics.Histogram
// keeps nanoseconds to three digits in 256 KiB, which suits a benchmark's
// few phases but not thousands of replay windows.)
func newHist() *hdrhistogram.Histogram {
	return hdrhistogram.New(1, int64(time.Hour/time.Microsecond), 2)
}

// aggregator counts the entries of the current window. Its histograms are
// reused from window to window, so memory stays constant.
type aggregator struct {
	parser *accesslog.Parser
	filter Filter
	path   []byte
	ops    map[string]*opStat
	list   []*opStat
	last   *opStat // the previous entry's operation: logs repeat them

	lines, entries, filtered int64
	skipped, skippedAll      Skipped
	first, latest            int64 // times of the window's first and latest entries
	entry                    accesslog.Entry
}

func newAggregator(loc *time.Location, f Filter) *aggregator {
	return &aggregator{parser: accesslog.NewParser(loc), filter: f, path: []byte(f.Path), ops: map[string]*opStat{}}
}

// parse reads one line. It returns the entry, to be passed to add, or nil
// when the line was skipped (and counted).
func (a *aggregator) parse(line []byte) *accesslog.Entry {
	err := a.parser.Parse(line, &a.entry)
	if err == nil {
		return &a.entry
	}
	a.lines++
	switch {
	case errors.Is(err, accesslog.ErrBlank):
		a.skipped.Blank++
	case errors.Is(err, accesslog.ErrKeepAlive):
		a.skipped.KeepAlive++
	case errors.Is(err, accesslog.ErrNotUTF8):
		a.skipped.NotUTF8++
	default:
		a.skipped.Malformed++
	}
	return nil
}

// add counts an entry that parse returned, if the filters select it.
func (a *aggregator) add(e *accesslog.Entry) {
	a.lines++
	if !a.filter.match(e, a.path) {
		a.filtered++
		return
	}
	s := a.last
	if s == nil || s.name != string(e.Op) {
		s = a.lookup(e.Op)
		if s == nil {
			if len(a.list) >= maxOps {
				a.skipped.Malformed++
				return
			}
			s = &opStat{name: string(e.Op), hist: newHist()}
			a.ops[s.name] = s
			a.list = append(a.list, s)
		}
		a.last = s
	}
	s.count++
	if !e.OK() {
		s.errors++
	}
	s.total += e.Latency
	s.max = max(s.max, e.Latency)
	_ = s.hist.RecordValue(min((int64(e.Latency)+500)/1000, hourUs))
	if a.entries == 0 {
		a.first, a.latest = e.Time, e.Time
	}
	a.first = min(a.first, e.Time)
	a.latest = max(a.latest, e.Time)
	a.entries++
}

// lookup finds an operation's counters: by a scan while there are few
// (cheaper than hashing), else in the map.
func (a *aggregator) lookup(op []byte) *opStat {
	if len(a.list) <= 16 {
		for _, s := range a.list {
			if s.name == string(op) {
				return s
			}
		}
		return nil
	}
	return a.ops[string(op)]
}

// merge adds what o counted to a (for a summary counted in parallel).
func (a *aggregator) merge(o *aggregator) {
	for _, os := range o.list {
		s := a.ops[os.name]
		if s == nil {
			if len(a.list) >= maxOps {
				a.skipped.Malformed += os.count
				a.entries -= os.count // added back with o.entries below
				continue
			}
			s = &opStat{name: os.name, hist: newHist()}
			a.ops[s.name] = s
			a.list = append(a.list, s)
		}
		s.count += os.count
		s.errors += os.errors
		s.total += os.total
		s.max = max(s.max, os.max)
		s.hist.Merge(os.hist)
	}
	if o.entries > 0 {
		if a.entries == 0 {
			a.first, a.latest = o.first, o.latest
		}
		a.first = min(a.first, o.first)
		a.latest = max(a.latest, o.latest)
	}
	a.lines += o.lines
	a.entries += o.entries
	a.filtered += o.filtered
	a.skipped.add(o.skipped)
}

// window returns the statistics since the last call and starts a new
// window.
func (a *aggregator) window(mode string, start, end time.Time, sortBy string, top int) *Window {
	w := &Window{
		Mode: mode, Start: start, End: end, Seconds: end.Sub(start).Seconds(),
		Lines: a.lines, Entries: a.entries, Filtered: a.filtered, Skipped: a.skipped,
	}
	a.skippedAll.add(a.skipped)
	w.SkippedTotal = a.skippedAll.Total()
	for _, s := range a.list {
		if s.count == 0 {
			continue
		}
		us := func(d time.Duration) float64 { return round3(float64(d) / 1e3) }
		row := OpStats{
			Op: s.name, Count: s.count, Errors: s.errors,
			AvgUs:   round3(float64(s.total) / 1e3 / float64(s.count)),
			TotalUs: us(s.total),
			MaxUs:   us(s.max),
		}
		row.P50Us = min(float64(s.hist.ValueAtQuantile(50)), row.MaxUs)
		row.P99Us = min(float64(s.hist.ValueAtQuantile(99)), row.MaxUs)
		if w.Seconds > 0 {
			row.Percent = round3(float64(s.total) / 1e9 / w.Seconds * 100)
		}
		w.Operations = append(w.Operations, row)
		s.count, s.errors, s.total, s.max = 0, 0, 0, 0
		s.hist.Reset()
	}
	SortOps(w.Operations, sortBy)
	if top > 0 && len(w.Operations) > top {
		w.Operations = w.Operations[:top]
	}
	a.lines, a.entries, a.filtered = 0, 0, 0
	a.skipped = Skipped{}
	return w
}

func round3(v float64) float64 {
	if v < 0 {
		return v
	}
	return float64(int64(v*1000+0.5)) / 1000
}

// SortOps orders rows by key, largest first; ties go by name.
func SortOps(rows []OpStats, key string) {
	val := func(r *OpStats) float64 {
		switch key {
		case SortCount:
			return float64(r.Count)
		case SortAvg:
			return r.AvgUs
		case SortP99:
			return r.P99Us
		}
		return r.TotalUs
	}
	slices.SortStableFunc(rows, func(a, b OpStats) int {
		va, vb := val(&a), val(&b)
		switch {
		case va > vb:
			return -1
		case va < vb:
			return 1
		}
		return strings.Compare(a.Op, b.Op)
	})
}

// CheckSort validates a sort key.
func CheckSort(key string) error {
	if slices.Contains(SortKeys, key) {
		return nil
	}
	return fmt.Errorf("unknown sort order %q (want one of %s)", key, strings.Join(SortKeys, ", "))
}
