// Package history keeps fsbench results over time and judges them as a
// series: a store of results in a directory or under a bucket prefix,
// series keyed by what makes runs comparable, each figure's change points
// (E-Divisive with means) and whether a new result lies outside what the
// latest stretch of its series allows.
//
// A result is kept twice: whole (for its own report) and as an Entry, the
// few numbers a series needs, so that loading a long history reads small
// files only.
package history

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/report"
)

// Key is what makes two runs comparable: the command, its parameters, the
// target and how many hosts ran it. Runs of equal keys form one series.
type Key struct {
	Command string `json:"command"`
	// Params are the result's parameters as text, sorted by name.
	Params []Param `json:"params"`
	Target string  `json:"target"`
	Hosts  int     `json:"hosts"`
	// Phases are the phases run, each with what one of its operations is
	// ("read: 64 KiB read"): a job file's sizes are not parameters.
	Phases []string `json:"phases,omitempty"`
}

// Param is one parameter of a Key.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Figure is one number of a run: a phase's throughput (Name is the phase,
// as --expect and compare name it) or a latency percentile ("read.p99").
type Figure struct {
	Name  string  `json:"name"`
	Unit  string  `json:"unit"`
	Value float64 `json:"value"`
}

// Entry is one result as a series holds it.
type Entry struct {
	Series    string    `json:"series"`
	Key       Key       `json:"key"`
	StartedAt time.Time `json:"started_at"`
	// Label names the run: a commit, a build, a deploy (history add
	// --label, or the CI's commit variable).
	Label string `json:"label,omitempty"`
	// Result is the key of the whole result in the store.
	Result  string   `json:"result"`
	Load    float64  `json:"load,omitempty"`
	Figures []Figure `json:"figures"`
}

// Higher reports whether a larger value of the figure is better: true for
// a throughput, false for a latency.
func Higher(figure string) bool { return !strings.Contains(figure, ".") }

// KeyOf is the series key of a result.
func KeyOf(r *report.Result) Key {
	k := Key{Command: r.Command, Target: target(r), Hosts: max(len(r.Hosts), 1)}
	for _, p := range r.Parameters {
		k.Params = append(k.Params, Param{Name: p.Key, Value: fmt.Sprint(p.Value)})
	}
	sort.Slice(k.Params, func(i, j int) bool { return k.Params[i].Name < k.Params[j].Name })
	for _, p := range r.Phases {
		// A paced phase's description ends with its measured service
		// times, which differ in every run.
		of, _, _ := strings.Cut(p.LatencyOf, " (service time ")
		k.Phases = append(k.Phases, p.Name+": "+of)
	}
	return k
}

func target(r *report.Result) string {
	if r.Target.URL != "" {
		return r.Target.URL
	}
	return r.Target.Path
}

// ID is the series' name in the store: a hash of the key.
func (k Key) ID() string {
	b, _ := json.Marshal(k)
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:6])
}

// String is the key in one line: the command, target, hosts and
// parameters.
func (k Key) String() string {
	var ps []string
	for _, p := range k.Params {
		ps = append(ps, p.Name+"="+p.Value)
	}
	s := fmt.Sprintf("%s %s", k.Command, k.Target)
	if k.Hosts > 1 {
		s += fmt.Sprintf(" on %d hosts", k.Hosts)
	}
	if len(ps) > 0 {
		s += " (" + strings.Join(ps, ", ") + ")"
	}
	return s
}

// Diff lists how other's parameters differ from k's, as "name a -> b".
func (k Key) Diff(other Key) []string {
	m := map[string]string{}
	for _, p := range k.Params {
		m[p.Name] = p.Value
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range other.Params {
		seen[p.Name] = true
		if v, ok := m[p.Name]; !ok {
			out = append(out, fmt.Sprintf("%s unset -> %s", p.Name, p.Value))
		} else if v != p.Value {
			out = append(out, fmt.Sprintf("%s %s -> %s", p.Name, v, p.Value))
		}
	}
	for _, p := range k.Params {
		if !seen[p.Name] {
			out = append(out, fmt.Sprintf("%s %s -> unset", p.Name, p.Value))
		}
	}
	if a, b := strings.Join(k.Phases, ", "), strings.Join(other.Phases, ", "); a != b {
		out = append(out, fmt.Sprintf("phases %s -> %s", a, b))
	}
	return out
}

// sameKind reports whether two keys differ only in their parameters.
func (k Key) sameKind(o Key) bool {
	return k.Command == o.Command && k.Target == o.Target && k.Hosts == o.Hosts
}

// Figures are the numbers of a result a series follows: each phase's
// throughput (its VALUE; the median of a repeated run) and its p50 and p99
// latency where the phase timed operations. Phases that did not complete
// are left out.
func Figures(r *report.Result) []Figure {
	var out []Figure
	for _, p := range r.Phases {
		if p.Incomplete || p.Value.Unit == report.UnitNotSupported {
			continue
		}
		out = append(out, Figure{Name: p.Name, Unit: string(p.Value.Unit), Value: p.Value.Value})
		if p.Latency.Count > 0 {
			out = append(out, Figure{Name: p.Name + ".p50", Unit: "us", Value: p.Latency.P50},
				Figure{Name: p.Name + ".p99", Unit: "us", Value: p.Latency.P99})
		}
	}
	return out
}

// EntryOf is the entry of a result; label names the run.
func EntryOf(r *report.Result, label string) Entry {
	k := KeyOf(r)
	e := Entry{Series: k.ID(), Key: k, StartedAt: r.StartedAt.UTC(), Label: label, Load: r.Host.Load, Figures: Figures(r)}
	e.Result = "results/" + e.Series + "/" + e.name()
	return e
}

// name is the entry's file name: its start time, then a hash of its
// figures, so that adding one result twice keeps it once.
func (e Entry) name() string {
	b, _ := json.Marshal(e.Figures)
	h := sha256.Sum256(b)
	return e.StartedAt.Format("20060102T150405.000Z") + "-" + hex.EncodeToString(h[:4]) + ".json"
}

// Value is the entry's figure of that name.
func (e Entry) Value(figure string) (float64, bool) {
	for _, f := range e.Figures {
		if f.Name == figure {
			return f.Value, true
		}
	}
	return 0, false
}
