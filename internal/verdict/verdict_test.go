package verdict

import (
	"math"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

func TestMinSamples(t *testing.T) {
	for _, c := range []struct {
		kind  string
		count int64
		ok    bool
	}{
		{"p50", 19, false}, {"p50", 20, true}, {"p99", 999, false}, {"p99", 1000, true},
		{"p999", 1024, false}, {"p999", 10000, true}, {"max", 1 << 40, false}, {"throughput", 1, true},
	} {
		if got := Judgeable(c.kind, c.count); got != c.ok {
			t.Errorf("Judgeable(%s, %d) = %v, want %v", c.kind, c.count, got, c.ok)
		}
	}
}

func TestSummarize(t *testing.T) {
	s := Summarize([]float64{5, 1, 3, 2, 4})
	if s.Median != 3 || s.Min != 1 || s.Max != 5 || s.N != 5 {
		t.Fatalf("summary of 1..5 = %+v", s)
	}
	if !math.IsNaN(s.Low) {
		t.Errorf("five runs give a 95%% interval %v..%v, want none (six are needed)", s.Low, s.High)
	}
	s = Summarize([]float64{10, 11, 12, 13, 14, 15, 16, 17, 18, 19})
	if math.IsNaN(s.Low) || s.Low > s.Median || s.High < s.Median || s.Low < 10 || s.High > 19 {
		t.Errorf("ten runs: interval %v..%v around %v", s.Low, s.High, s.Median)
	}
}

func TestCompare(t *testing.T) {
	old := []float64{100, 101, 99, 100.5, 99.5}
	if c := Compare(old, []float64{80, 81, 79, 80.5, 79.5}); !c.Significant || c.P >= Alpha {
		t.Errorf("a 20%% drop with no overlap: %+v, want significant", c)
	}
	if c := Compare(old, []float64{100.2, 99.1, 101.2, 99.8, 100.1}); c.Significant {
		t.Errorf("interleaved runs: %+v, want not significant", c)
	}
	if c := Compare([]float64{100}, []float64{50}); c.Significant || !math.IsNaN(c.P) || c.Enough {
		t.Errorf("one run a side: %+v, want no test", c)
	}
	if c := Compare(old[:3], []float64{1, 2, 3}); c.Significant || c.Enough {
		t.Errorf("three runs a side cannot reach 5%%: %+v", c)
	}
	if n := minRuns(Alpha); n != 4 {
		t.Errorf("minRuns(5%%) = %d, want 4", n)
	}
}

func phase(name string, value float64, lat ...time.Duration) report.PhaseResult {
	h := metrics.NewHistogram()
	for _, d := range lat {
		h.Record(d)
	}
	p := report.PhaseResult{Name: name, Title: name, Ops: int64(len(lat)), Bytes: int64(len(lat)) << 20, Seconds: 1,
		Value: report.Measure{Value: value, Unit: "MiB/s"}, Cost: report.Measure{Value: 1 / value, Unit: "s/file"}}
	p.SetRates()
	if err := report.SetLatency(&p, h); err != nil {
		panic(err)
	}
	return p
}

func TestSummarizeRuns(t *testing.T) {
	res := &report.Result{Runs: []report.Run{
		{Index: 1, Phases: []report.PhaseResult{phase("write", 100, time.Millisecond), phase("read", 300, time.Millisecond)}},
		{Index: 2, Phases: []report.PhaseResult{phase("write", 120, 3*time.Millisecond)}},
		{Index: 3, Phases: []report.PhaseResult{phase("write", 110, 2*time.Millisecond), phase("read", 200, time.Millisecond)}},
	}}
	if err := SummarizeRuns(res); err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 2 || res.Phases[0].Name != "write" || res.Phases[1].Name != "read" {
		t.Fatalf("phases %+v", res.Phases)
	}
	w := res.Phases[0]
	if w.Value.Value != 110 || w.Spread == nil || w.Spread.Runs != 3 || w.Spread.Min != 100 || w.Spread.Max != 120 {
		t.Errorf("write summary: value %v spread %+v", w.Value.Value, w.Spread)
	}
	if w.Ops != 3 || w.Latency.Count != 3 || w.Latency.Max < 2900 {
		t.Errorf("write: ops %d, latency %+v: want every run's samples", w.Ops, w.Latency)
	}
	if got := w.Spread.Values; len(got) != 3 || got[0] != 100 || got[1] != 120 || got[2] != 110 {
		t.Errorf("values in run order: %v", got)
	}
	if r := res.Phases[1]; r.Spread.Runs != 2 || r.Value.Value != 250 {
		t.Errorf("read, in two of three runs: %+v %v", r.Spread, r.Value.Value)
	}
}

// TestSummarizeRunsKeepsRuns: the result of the first run is usually the
// result the runs are summarised into, so its phases share a slice with
// Runs[0]; the summary must not write over that run's figures.
func TestSummarizeRunsKeepsRuns(t *testing.T) {
	first := []report.PhaseResult{phase("write", 100, time.Millisecond)}
	res := &report.Result{Phases: first, Runs: []report.Run{
		{Index: 1, Phases: first}, {Index: 2, Phases: []report.PhaseResult{phase("write", 200, time.Millisecond)}},
	}}
	if err := SummarizeRuns(res); err != nil {
		t.Fatal(err)
	}
	if got := res.Runs[0].Phases[0].Value.Value; got != 100 || res.Runs[0].Phases[0].Spread != nil {
		t.Errorf("run 1's value became %v (spread %v) after the summary", got, res.Runs[0].Phases[0].Spread)
	}
	if res.Phases[0].Value.Value != 150 {
		t.Errorf("summary %v, want the median 150", res.Phases[0].Value.Value)
	}
}

// TestAdjustBH: the adjusted p-values of R's p.adjust(method = "BH") on
// the same p-values, NaN passing through untested.
func TestAdjustBH(t *testing.T) {
	ps := []float64{0.01, 0.04, math.NaN(), 0.03, 0.005, 0.5}
	// R: p.adjust(c(0.01, 0.04, 0.03, 0.005, 0.5), "BH")
	// 0.025 0.050 0.050 0.025 0.500
	want := []float64{0.025, 0.05, math.NaN(), 0.05, 0.025, 0.5}
	got := AdjustBH(ps)
	for i := range want {
		if math.IsNaN(want[i]) != math.IsNaN(got[i]) || !math.IsNaN(want[i]) && math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("AdjustBH(%v)[%d] = %v, want %v", ps, i, got[i], want[i])
		}
	}
	if got := AdjustBH(nil); len(got) != 0 {
		t.Errorf("AdjustBH(nil) = %v", got)
	}
}

// TestBeyond: a change is beyond a 10% threshold only when the runs put
// its interval wholly beyond it. A 30% drop with tight runs is; a drop
// of 10.7% by the medians whose runs reach back within 10% is not,
// though every NEW run is below every OLD one (Compare calls it).
func TestBeyond(t *testing.T) {
	old := []float64{100, 101, 99, 100.5, 99.5}
	if p := Beyond(old, []float64{70, 71, 69, 70.5, 69.5}, 10, true); !(p < Alpha) {
		t.Errorf("a 30%% drop: p %v, want below %v", p, Alpha)
	}
	drift := []float64{84, 88, 89.3, 90.5, 91.5}
	if c := Compare(old, drift); !c.Significant {
		t.Fatalf("the drift is not significant: %+v", c)
	}
	if p := Beyond(old, drift, 10, true); p < Alpha {
		t.Errorf("a drop of 10.7%% reaching within 10%%: p %v, want %v or more", p, Alpha)
	}
	lat := []float64{1000, 1010, 990, 1005, 995}
	if p := Beyond(lat, []float64{1400, 1410, 1390, 1405, 1395}, 10, false); !(p < Alpha) {
		t.Errorf("a latency 40%% higher: p %v, want below %v", p, Alpha)
	}
	if p := Beyond(lat, []float64{1400, 1410, 1390, 1405, 1395}, 50, false); p < Alpha {
		t.Errorf("a latency 40%% higher against 50%%: p %v, want not beyond", p)
	}
	if p := Beyond(old, []float64{130, 131, 129, 130.5, 129.5}, 10, true); p != 1 {
		t.Errorf("a rise of a throughput: p %v, want 1 (not worse)", p)
	}
	if p := Beyond([]float64{100}, []float64{50}, 10, true); !math.IsNaN(p) {
		t.Errorf("one run a side: p %v, want NaN", p)
	}
}
