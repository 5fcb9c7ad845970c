package report

import "testing"

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

func TestSecondsPerAndThroughput(t *testing.T) {
	p := PhaseResult{Seconds: 2, BytesPerSec: 3 << 20}
	if got := p.SecondsPer(8, 4); got != 1 {
		t.Errorf("SecondsPer(8, 4) over 2 s = %v, want 1", got)
	}
	if got := p.SecondsPer(0, 4); got != 0 {
		t.Errorf("SecondsPer(0, 4) = %v, want 0", got)
	}
	if m := p.ThroughputValue(); m.Value != 3 || m.Unit != "MiB/s" {
		t.Errorf("ThroughputValue = %+v", m)
	}
}
