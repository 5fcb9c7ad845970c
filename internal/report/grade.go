package report

import "github.com/fsbench/fsbench/internal/units"

// Ranges are JuiceFS's colour ranges for one item of its tables: the value
// is good above Good and fair above Fair; the cost is good below CostGood
// and fair below CostFair. Anything else is poor.
type Ranges struct {
	Fair, Good         float64
	CostGood, CostFair float64
}

// GradeValue rates a value such as a throughput (higher is better).
func (r Ranges) GradeValue(v float64) Grade {
	switch {
	case v > r.Good:
		return Good
	case v > r.Fair:
		return Fair
	}
	return Poor
}

// GradeCost rates a cost (lower is better).
func (r Ranges) GradeCost(c float64) Grade {
	switch {
	case c < r.CostGood:
		return Good
	case c < r.CostFair:
		return Fair
	}
	return Poor
}

// Grade rates the value and the cost of p.
func (r Ranges) Grade(p *PhaseResult) {
	p.Value.Grade = r.GradeValue(p.Value.Value)
	p.Cost.Grade = r.GradeCost(p.Cost.Value)
}

// ThroughputValue is p's bytes per second as a value in MiB/s.
func (p *PhaseResult) ThroughputValue() Measure {
	return Measure{Value: p.BytesPerSec / float64(units.MiB), Unit: UnitMiBPerSec}
}

// PerUnit is the table's COST in seconds: the time the phase's
// operations took, by their latencies, per each of n units of work
// (files, objects, listings, operations): the mean time a thread spent on
// one. Where one operation is one unit it is the mean latency, so never
// below the phase's fastest operation nor above its slowest; a 1 GiB file
// written in 1 MiB blocks costs 1024 blocks' mean latency. 0 without
// units or latencies.
func (p *PhaseResult) PerUnit(n int64) float64 {
	if n <= 0 || p.Latency.Count == 0 {
		return 0
	}
	return p.Latency.Mean / 1e6 * float64(p.Latency.Count) / float64(n)
}
