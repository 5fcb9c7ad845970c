package compare

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/verdict"
)

// originDiff warns when the storage served one side of a read phase
// mostly and a cache the other: its figures then compare a cache with the
// storage, not two runs of one thing.
func originDiff(old, new report.PhaseResult) string {
	a, b := old.Origin, new.Origin
	if a == nil || b == nil || a.FromStorage == nil || b.FromStorage == nil {
		return ""
	}
	fa, fb := *a.FromStorage, *b.FromStorage
	if (fa >= report.MostlyFromStorage) == (fb >= report.MostlyFromStorage) {
		return ""
	}
	cached := "NEW"
	if fa < report.MostlyFromStorage {
		cached = "OLD"
	}
	return fmt.Sprintf("%s: %.1f%% of what OLD read came from the storage, %.1f%% of what NEW read: a cache served %s, so its figures are the cache's, not the storage's",
		old.Name, fa, fb, cached)
}

// loads are the machine's load averages at the end of each run of r; nil
// when any is unknown.
func loads(r *report.Result) []float64 {
	if len(r.Runs) == 0 {
		if r.Host.Load <= 0 {
			return nil
		}
		return []float64{r.Host.Load}
	}
	var out []float64
	for _, run := range r.Runs {
		if run.Load <= 0 {
			return nil
		}
		out = append(out, run.Load)
	}
	return out
}

// loadDiff warns when one side ran on a markedly busier machine than the
// other (by half its CPUs and a quarter of the higher load): a change of
// figures may then come from the machine rather than the storage.
func loadDiff(old, new *report.Result) string {
	a, b := loads(old), loads(new)
	if a == nil || b == nil || len(old.Hosts) > 0 || len(new.Hosts) > 0 {
		return "" // unknown, or the coordinator's load, not the clients'
	}
	la, lb := verdict.Summarize(a).Median, verdict.Summarize(b).Median
	cpus := float64(max(old.Host.CPUs, new.Host.CPUs, 1))
	if math.Abs(la-lb) < max(cpus/2, max(la, lb)/4) {
		return ""
	}
	busier := "NEW"
	if la > lb {
		busier = "OLD"
	}
	return fmt.Sprintf("the machine was busier during %s (load average %.1f in OLD, %.1f in NEW, on %d CPUs): changes may come from that, not from the storage",
		busier, la, lb, int(cpus))
}

// shortPhase is the time under which a phase measures a moment of the
// storage more than its rate: the storage's own swings (a journal commit
// or a writeback every few seconds, another client's burst) last longer,
// so runs minutes apart can differ by more than the repeats of either
// side, which follow each other within one such swing. Seen on a local
// disk: write-small of 200 files (20 ms) at 19,000 files/s in one result's
// four repeats and 5,600 in another's, taken seconds later.
const shortPhase = time.Second

// shortTime is a phase whose change was told from noise while it took
// under shortPhase a run: its name, and its times a run (OLD, NEW).
type shortTime struct {
	name     string
	old, new time.Duration
}

// shortTimes finds the phase's shortTime (items are its figures); ok is
// false when its change was not called or it took shortPhase or more.
func shortTimes(old, new report.PhaseResult, items []Item) (t shortTime, ok bool) {
	a := time.Duration(old.Seconds * float64(time.Second))
	b := time.Duration(new.Seconds * float64(time.Second))
	if a <= 0 || b <= 0 || min(a, b) >= shortPhase {
		return t, false
	}
	for _, it := range items {
		if it.Kind != "errors" && (it.Status == Better || it.Status == Worse || it.Status == Regression) {
			return shortTime{old.Name, roundShort(a), roundShort(b)}, true
		}
	}
	return t, false
}

// roundShort rounds a phase's time for the warning: to the millisecond,
// to the microsecond under one (a stat of a few files: not "0s").
func roundShort(d time.Duration) time.Duration {
	if d < time.Millisecond {
		return d.Round(time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

// shortDiff is the one warning for the phases of shortTimes: "NAME took
// A (OLD) and B (NEW) a run" for the first, "NAME A and B" for the rest.
func shortDiff(times []shortTime) string {
	parts := make([]string, len(times))
	for i, t := range times {
		if i == 0 {
			parts[i] = fmt.Sprintf("%s took %v (OLD) and %v (NEW) a run", t.name, t.old, t.new)
		} else {
			parts[i] = fmt.Sprintf("%s %v and %v", t.name, t.old, t.new)
		}
	}
	return fmt.Sprintf("%s: a phase under %v measures a moment of the storage, whose own swings last longer: runs made minutes apart can differ this much with nothing changed; give it more work (more files, a larger size, a --duration) before trusting its change",
		strings.Join(parts, ", "), shortPhase)
}
