package objbench

import (
	"math"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
)

// AutoTerm ends a workload's timed phase before --duration once its
// throughput is stable, by warp's rule (warp --autoterm): the phase has
// been measured for longer than MinDur, and each of the Samples-1
// intervals before the last is within Pct percent of the last interval's
// throughput (bytes/s when the phase moves data, else operations/s).
// warp's defaults are 15 s, 7 intervals (of one second) and 7.5%.
type AutoTerm struct {
	On      bool
	MinDur  time.Duration
	Pct     float64
	Samples int
}

// Stable reports whether the series of a phase in progress meets the rule.
// It is a pure function of its input.
func (a AutoTerm) Stable(series []engine.Sample) bool {
	n := len(series)
	if n < max(a.Samples, 2) {
		return false
	}
	last := series[n-1]
	if last.Start+last.Dur <= a.MinDur {
		return false
	}
	byBytes := last.Bytes > 0
	base := rateOf(last, byBytes)
	if base <= 0 {
		return false
	}
	for _, s := range series[n-a.Samples : n-1] {
		if math.Abs(base-rateOf(s, byBytes)) > a.Pct/100*base {
			return false
		}
	}
	return true
}

// rateOf is an interval's bytes/s, or its operations/s.
func rateOf(s engine.Sample, bytes bool) float64 {
	sec := s.Dur.Seconds()
	switch {
	case sec <= 0:
		return 0
	case bytes:
		return float64(s.Bytes) / sec
	}
	return float64(s.Ops) / sec
}
