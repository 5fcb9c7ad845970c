package verdict

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

// TestJudgeAUShortButBelow: ten measured steps are too few to pass an AU
// against 90%, but when every step waits as long as it computes the whole
// interval is far below, and the AU fails; with the waits of a healthy
// run it stays too short to judge, never passes.
func TestJudgeAUShortButBelow(t *testing.T) {
	slow := make([]time.Duration, 10)
	for i := range slow {
		slow[i] = 224 * time.Millisecond
	}
	tr := tinyRun(t, slow...)
	if tr.Verdict != report.VerdictFail || *tr.AUHigh >= 90 || !strings.Contains(tr.VerdictReason, "wholly below") {
		t.Errorf("AU %.2f%% (%.2f-%.2f%%) of 10 steps: %s (%s), want a failure", tr.AU, *tr.AULow, *tr.AUHigh, tr.Verdict, tr.VerdictReason)
	}
	tr = tinyRun(t, make([]time.Duration, 10)...)
	if tr.Verdict != report.VerdictTooShort {
		t.Errorf("AU %.2f%% of 10 quiet steps: %s, want too short to judge", tr.AU, tr.Verdict)
	}
	// One long stall: the interval straddles 90%: too short, not failed.
	one := make([]time.Duration, 10)
	one[2] = 300 * time.Millisecond
	if tr = tinyRun(t, one...); tr.Verdict != report.VerdictTooShort || *tr.AUHigh < 90 {
		t.Errorf("AU %.2f%% (%.2f-%.2f%%) with one stall: %s, want too short to judge (a straddling interval)", tr.AU, *tr.AULow, *tr.AUHigh, tr.Verdict)
	}
}

// latencies is a histogram of n samples, k of them at slow and the rest
// at fast.
func latencies(n, k int, fast, slow time.Duration) *metrics.Histogram {
	h := metrics.NewHistogram()
	for i := range n {
		d := fast
		if i < k {
			d = slow
		}
		h.Record(d)
	}
	return h
}

// TestQuantileBounds: the order-statistic interval of a p99 from 80
// samples is open above (80 samples cannot bound a p99 from above) and
// reaches the slow samples from below only when enough are slow: one
// (or three) in 80 can be chance at p99, four or more cannot.
func TestQuantileBounds(t *testing.T) {
	lo, hi := QuantileBounds(latencies(80, 1, time.Millisecond, 10*time.Millisecond), 0.99)
	if lo > 2*time.Millisecond || hi != time.Duration(math.MaxInt64) {
		t.Errorf("p99 of 80 samples, 1 slow: %v-%v, want a low end among the fast and no high end", lo, hi)
	}
	lo, _ = QuantileBounds(latencies(80, 3, time.Millisecond, 10*time.Millisecond), 0.99)
	if lo > 2*time.Millisecond {
		t.Errorf("p99 of 80 samples, 3 slow: low end %v, want among the fast", lo)
	}
	lo, _ = QuantileBounds(latencies(80, 4, time.Millisecond, 10*time.Millisecond), 0.99)
	if lo < 9*time.Millisecond {
		t.Errorf("p99 of 80 samples, 4 slow: low end %v, want among the slow (10ms)", lo)
	}
	// The median of 100 samples half fast, half slow: both ends finite.
	lo, hi = QuantileBounds(latencies(100, 50, time.Millisecond, 10*time.Millisecond), 0.5)
	if lo > 2*time.Millisecond || hi < 9*time.Millisecond || hi > 11*time.Millisecond {
		t.Errorf("p50 of 100 samples, half slow: %v-%v, want 1ms-10ms", lo, hi)
	}
}

// TestPercentileWrongSide: a p99 of 80 samples whose interval lies wholly
// above 5ms fails stat.p99<5ms; one that straddles it is too short to
// judge, as is one without an interval; 1,000 samples are judged on the
// value.
func TestPercentileWrongSide(t *testing.T) {
	under5 := func(v float64) bool { return v < 5 }
	for _, c := range []struct {
		name      string
		count     int64
		v, lo, hi float64
		want      string
	}{
		{"wholly above", 80, 10, 9, math.Inf(1), report.VerdictFail},
		{"straddles", 80, 10, 1, math.Inf(1), report.VerdictTooShort},
		{"no interval", 80, 10, math.NaN(), math.NaN(), report.VerdictTooShort},
		{"wholly below, still short", 80, 1, 0.5, 2, report.VerdictTooShort},
		{"enough, fails", 1000, 10, 9, 11, report.VerdictFail},
		{"enough, passes", 1000, 1, 0.9, 1.1, report.VerdictPass},
	} {
		j := Percentile("p99", c.count, c.v, c.lo, c.hi, under5)
		if j.Verdict != c.want {
			t.Errorf("%s: %s (%s), want %s", c.name, j.Verdict, j.Reason, c.want)
		}
	}
}

// TestStrict: --strict fails what is too short to judge, keeping why, and
// leaves a pass and a failure alone.
func TestStrict(t *testing.T) {
	short := Percentile("p99", 80, 1, 0.5, math.Inf(1), func(v float64) bool { return v < 5 })
	if s := short.Strict(); s.Verdict != report.VerdictFail || s.Reason != "too short to judge (--strict): "+short.Reason {
		t.Errorf("strict of %+v: %+v", short, s)
	}
	for _, j := range []Judgement{{Verdict: report.VerdictPass}, {Verdict: report.VerdictFail, Reason: "x"}} {
		if s := j.Strict(); s != j {
			t.Errorf("strict of %+v: %+v", j, s)
		}
	}
}
