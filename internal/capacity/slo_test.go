package capacity

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseSLO(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"p99<5ms", "p99<5ms"},
		{" p99 < 5 ms ", "p99<5ms"},
		{"p99<5ms,p50<1ms", "p99<5ms,p50<1ms"},
		{"p99<5ms AND p50<=1ms", "p99<5ms,p50<=1ms"},
		{"p99.9<20ms && mean<2ms", "p99.9<20ms,mean<2ms"},
		{"P99<500us", "p99<500µs"},
		{"errors<1%", "errors<1%"},
		{"errors<=0%", "errors<=0%"},
		{"errors<=0", "errors<=0%"},
		{"p50<1.5s", "p50<1.5s"},
		{"p1<100s", "p1<100s"},
		{"p90<0.3s", "p90<300ms"},
		{"p90<1234567ns", "p90<1.234567ms"},
	} {
		s, err := ParseSLO(c.in)
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if s.String() != c.want {
			t.Errorf("%q: %s, want %s", c.in, s, c.want)
		}
	}
	s, _ := ParseSLO("p99.9<20ms,p90<1ms")
	if math.Abs(s[0].Q-0.999) > 1e-12 || s[0].Bound != 20*time.Millisecond || s.MinOps() != 10000 {
		t.Errorf("%+v, min ops %d", s, s.MinOps())
	}
}

func TestParseSLORefuses(t *testing.T) {
	for _, c := range []struct{ in, why string }{
		{"", "empty"},
		{"p99", "want STAT<BOUND"},
		{"p99>5ms", "upper bound"},
		{"p99=5ms", "upper bound"},
		{"p100<5ms", "percentile"},
		{"p0<5ms", "percentile"},
		{"pxx<5ms", "percentile"},
		{"p1e1<5ms", "percentile"},
		{"max<5ms", "unknown statistic"},
		{"p99<5", "needs a unit"},
		{"p99<5 parsecs", "unknown unit"},
		{"p99<ms", "not a latency"},
		{"p99<0ms", "never holds"},
		{"p99<5ms,", "empty clause"},
		{"p99<5ms,,p50<1ms", "empty clause"},
		{"p99<5ms and", "empty clause"},
		{"errors<1", "give a percentage"},
		{"errors<200%", "between 0 and 100"},
		{"errors<0%", "never holds"},
		{"errors<x%", "want a percentage"},
		{"p99<7200s", "above an hour"},
	} {
		_, err := ParseSLO(c.in)
		if err == nil || !errors.Is(err, ErrBadSLO) || !strings.Contains(err.Error(), c.why) {
			t.Errorf("%q: %v, want an error saying %q", c.in, err, c.why)
		}
	}
}

func TestParseCurve(t *testing.T) {
	got, err := ParseCurve("10, 50,95%,100")
	if err != nil || len(got) != 4 || got[2] != 95 {
		t.Errorf("%v %v", got, err)
	}
	for _, in := range []string{"", "0", "101", "10,,50", "ten", "-5"} {
		if _, err := ParseCurve(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

func FuzzParseSLO(f *testing.F) {
	for _, s := range []string{"p99<5ms", "p99<5ms,p50<1ms", "errors<1%", "mean<=2s and p90<1ms", "p99.99<1us"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		slo, err := ParseSLO(s)
		if err != nil {
			return
		}
		again, err := ParseSLO(slo.String())
		if err != nil || again.String() != slo.String() {
			t.Errorf("%q -> %q -> %q, %v", s, slo, again, err)
		}
	})
}
