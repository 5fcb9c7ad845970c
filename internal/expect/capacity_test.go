package expect

import (
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
)

func TestCapacityExpectation(t *testing.T) {
	res := &report.Result{Capacity: &report.Capacity{Phase: "randread", Objective: "p99<5ms",
		Answer: &report.CapacityAnswer{OpsPerSec: 4000, Low: 4000, High: 4100, BytesPerSec: 4000 * 4096}}}
	for _, c := range []struct {
		expr string
		pass bool
	}{
		{"capacity>=3000ops/s", true},
		{"capacity>=5000ops/s", false},
		{"capacity>=15MiB/s", true},
		{"capacity>=16MiB/s", false},
		{"capacity<5000ops/s", true},
	} {
		e, err := Parse(c.expr)
		if err != nil {
			t.Fatal(err)
		}
		if err := Bench.Check(e); err != nil {
			t.Fatalf("%s: %v", c.expr, err)
		}
		x := Eval(e, res)
		if x.Pass != c.pass || x.Measured == 0 {
			t.Errorf("%s: pass %v (%s, measured %v), want %v", c.expr, x.Pass, x.Reason, x.Measured, c.pass)
		}
	}
	e, _ := Parse("capacity>=1ops/s")
	if x := Eval(e, &report.Result{}); x.Pass || !strings.Contains(x.Reason, "--slo") {
		t.Errorf("no search: %+v, want a failure naming --slo", x)
	}
	none := &report.Result{Capacity: &report.Capacity{Answer: &report.CapacityAnswer{High: 10}}}
	if x := Eval(e, none); x.Pass {
		t.Errorf("no rate held: %+v, want a failure", x)
	}
	for _, bad := range []string{"capacity>=5ms", "capacity>=5", "capacity.p99<5ms", "capacity>=5files/s"} {
		e, err := Parse(bad)
		if err == nil {
			err = Bench.Check(e)
		}
		if err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}
