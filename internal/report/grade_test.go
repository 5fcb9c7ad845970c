package report

import (
	"testing"

	"github.com/fsbench/fsbench/internal/metrics"
)

func TestRangesGrade(t *testing.T) {
	r := Ranges{Fair: 10, Good: 20, CostGood: 1, CostFair: 5}
	for _, tt := range []struct {
		value, cost float64
		v, c        Grade
	}{
		{25, 0.5, Good, Good},
		{20, 1, Fair, Fair},
		{15, 4.9, Fair, Fair},
		{10, 5, Poor, Poor},
	} {
		p := PhaseResult{Value: Measure{Value: tt.value}, Cost: Measure{Value: tt.cost}}
		r.Grade(&p)
		if p.Value.Grade != tt.v || p.Cost.Grade != tt.c {
			t.Errorf("value %v cost %v: graded %s/%s, want %s/%s", tt.value, tt.cost, p.Value.Grade, p.Cost.Grade, tt.v, tt.c)
		}
	}
}

// COST is the operations' mean latency per unit of work: within the
// latencies' range where an operation is a unit, and their sum over a
// file's blocks where it is not.
func TestPerUnitAndThroughput(t *testing.T) {
	p := PhaseResult{Seconds: 2, BytesPerSec: 3 << 20, Ops: 8,
		Latency: metrics.Summary{Count: 8, Mean: 250_000, Min: 100_000, Max: 900_000}}
	if got := p.PerUnit(8); got != 0.25 {
		t.Errorf("PerUnit(8) of 8 ops of 250 ms mean = %v, want 0.25", got)
	}
	if got := p.PerUnit(2); got != 1 {
		t.Errorf("PerUnit(2) of 8 ops of 250 ms mean = %v, want 1 (4 ops each)", got)
	}
	if got := p.PerUnit(0); got != 0 {
		t.Errorf("PerUnit(0) = %v, want 0", got)
	}
	if m := p.ThroughputValue(); m.Value != 3 || m.Unit != "MiB/s" {
		t.Errorf("ThroughputValue = %+v", m)
	}
}
