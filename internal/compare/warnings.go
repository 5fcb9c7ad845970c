package compare

import (
	"fmt"
	"math"

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
