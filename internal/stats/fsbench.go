package stats

import (
	"context"
	"sort"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/live"
)

// FSBenchSource reads the counters that running fsbench benchmarks publish
// (package live) for targets on one mount, or for every target when Mount
// and Path are empty, and sums them into fsbench.* counters that only grow:
// a run that starts adds what it has done since, a run that ends stops
// adding, so neither makes a rate jump or go negative.
type FSBenchSource struct {
	Mount string // runs whose target is on this mount point
	Path  string // or below this path
	// List returns the live snapshots; nil means live.List.
	List func(now time.Time) []*live.Snapshot

	started bool
	runs    map[int]*live.Snapshot
	total   struct{ ops, read, write, errs, lat float64 }
}

// Name implements Source.
func (f *FSBenchSource) Name() string { return "fsbench" }

func (f *FSBenchSource) match(s *live.Snapshot) bool {
	if f.Mount == "" && f.Path == "" {
		return true
	}
	return (f.Mount != "" && s.Mount == f.Mount) || live.Within(s.Target, f.Path)
}

// Collect implements Source.
func (f *FSBenchSource) Collect(_ context.Context, sm *Sample) error {
	list := f.List
	if list == nil {
		list = live.List
	}
	if f.runs == nil {
		f.runs = map[int]*live.Snapshot{}
	}
	seen := map[int]*live.Snapshot{}
	var phases []string
	for _, s := range list(sm.Time) {
		if !f.match(s) {
			continue
		}
		seen[s.PID] = s
		if s.Phase != "" {
			phases = append(phases, s.Phase)
		}
		prev, known := f.runs[s.PID]
		switch {
		case !known && !f.started:
			// Running before the first sample: that is the baseline.
		case !known:
			f.add(s, &live.Snapshot{})
		default:
			f.add(s, prev)
		}
	}
	f.runs = seen
	f.started = true
	sm.Set("fsbench.ops", f.total.ops)
	sm.Set("fsbench.read_bytes", f.total.read)
	sm.Set("fsbench.write_bytes", f.total.write)
	sm.Set("fsbench.errors", f.total.errs)
	sm.Set("fsbench.latency_ns", f.total.lat)
	sm.Set("fsbench.runs", float64(len(seen)))
	sort.Strings(phases)
	if len(phases) > 0 {
		sm.Text["fsbench.phase"] = strings.Join(phases, ",")
	} else {
		sm.Text["fsbench.phase"] = ""
	}
	return nil
}

// add adds the growth of one run since prev; a counter that went backwards
// (it never should) adds nothing.
func (f *FSBenchSource) add(cur, prev *live.Snapshot) {
	d := func(a, b int64) float64 {
		if a < b {
			return 0
		}
		return float64(a - b)
	}
	f.total.ops += d(cur.Ops, prev.Ops)
	f.total.read += d(cur.ReadBytes, prev.ReadBytes)
	f.total.write += d(cur.WriteBytes, prev.WriteBytes)
	f.total.errs += d(cur.Errors, prev.Errors)
	f.total.lat += d(cur.LatencyNs, prev.LatencyNs)
}
