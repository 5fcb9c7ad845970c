package capacity

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
)

// queue is a model of storage with a known knee: one server taking
// exponentially distributed service times at mu operations a second (an
// M/M/1 queue). In an open loop at rate lambda < mu the response time is
// exponential with mean 1/(mu-lambda), so p99 < T holds exactly below
// mu - ln(100)/T; at or above mu the queue grows and operations are missed.
type queue struct {
	mu     float64
	probes []float64 // rates asked for, in order
	minOps []int64
}

func (q *queue) probe(_ context.Context, rate float64, minOps int64) (Measurement, error) {
	q.probes = append(q.probes, rate)
	q.minOps = append(q.minOps, minOps)
	n := max(minOps, 2000)
	m := Measurement{Rate: rate, Ops: n, Hist: metrics.NewHistogram()}
	mean := 1 / (q.mu - rate)
	if rate == 0 { // closed loop, one thread: the service time alone
		mean = 1 / q.mu
	}
	if rate >= q.mu {
		mean, m.Missed = 10, n
	}
	for i := int64(0); i < n; i++ {
		p := (float64(i) + 0.5) / float64(n)
		m.Hist.Record(time.Duration(-math.Log(1-p) * mean * 1e9))
	}
	served := q.mu
	if rate > 0 && rate < q.mu {
		served = rate
	}
	m.Seconds = float64(n) / served
	m.Bytes = n * 4096
	return m, nil
}

func TestSearchFindsTheKneeOfAQueue(t *testing.T) {
	for _, c := range []struct {
		slo  string
		want float64 // the exact answer of the model
	}{
		{"p99<20ms", 1000 - math.Log(100)/0.020},
		{"p99<5ms", 1000 - math.Log(100)/0.005},
		{"p50<2ms,p99<50ms", 1000 - math.Log(2)/0.002},
		{"mean<4ms", 1000 - 1/0.004},
	} {
		q := &queue{mu: 1000}
		slo, err := ParseSLO(c.slo)
		if err != nil {
			t.Fatal(err)
		}
		r := &Runner{Probe: q.probe, SLO: slo}
		a, err := r.Search(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		// The histogram's buckets round latencies by a few per mille:
		// allow 2% beyond the interval's ends.
		if !(a.Low <= c.want*1.02 && a.High >= c.want*0.98) {
			t.Errorf("%s: interval [%.1f, %.1f) misses the knee %.1f; probes %v", c.slo, a.Low, a.High, c.want, q.probes)
		}
		if a.High-a.Low > Tolerance*a.High || a.Rate != a.Low || a.At == nil || !a.At.Holds {
			t.Errorf("%s: answer %+v not narrowed to %g", c.slo, a, Tolerance)
		}
		if math.Abs(a.MaxRate-1000) > 1 || q.probes[0] != 0 || len(q.probes) > MaxProbes {
			t.Errorf("%s: max %.1f, probes %v", c.slo, a.MaxRate, q.probes)
		}
	}
}

func TestSearchAnswersTheMaximumAndNone(t *testing.T) {
	q := &queue{mu: 1000}
	loose, _ := ParseSLO("p99<100s")
	r := &Runner{Probe: func(ctx context.Context, rate float64, minOps int64) (Measurement, error) {
		if rate >= q.mu*0.999 { // an open loop at the maximum, kept up
			rate = q.mu * 0.5
		}
		return q.probe(ctx, rate, minOps)
	}, SLO: loose}
	a, err := r.Search(context.Background())
	if err != nil || a.Rate != a.MaxRate || a.High != a.Low || len(r.Steps()) != 2 {
		t.Errorf("loose objective: %+v, %v, %d steps; want the maximum in 2 steps", a, err, len(r.Steps()))
	}
	tight, _ := ParseSLO("p99<1us")
	q = &queue{mu: 1000}
	r = &Runner{Probe: q.probe, SLO: tight}
	a, err = r.Search(context.Background())
	if err != nil || a.Rate != 0 || a.At != nil || a.High > 1000*Lowest*2 {
		t.Errorf("impossible objective: %+v, %v; want no rate", a, err)
	}
}

func TestSearchAsksForSamplesEnough(t *testing.T) {
	q := &queue{mu: 1000}
	slo, _ := ParseSLO("p99.9<50ms")
	if _, err := (&Runner{Probe: q.probe, SLO: slo}).Search(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, n := range q.minOps {
		if want := int64(10000); q.probes[i] > 0 && n != want {
			t.Errorf("probe at %.0f asked for %d operations, want %d for p99.9", q.probes[i], n, want)
		}
	}
	few := Measurement{Rate: 100, Ops: 999, Seconds: 1, Hist: metrics.NewHistogram()}
	few.Hist.Record(time.Millisecond)
	p99, _ := ParseSLO("p99<1s")
	if ok, why := p99.Check(few); ok || !strings.Contains(why, "too few") {
		t.Errorf("999 samples for p99: %v %q, want too few", ok, why)
	}
}

// TestSearchRepeatNeedsEveryRun: with --repeat 3, a rate holds only when
// the objective holds in each run; a model whose third run at a rate is
// slow lowers the answer to where even that run holds.
func TestSearchRepeatNeedsEveryRun(t *testing.T) {
	q := &queue{mu: 1000}
	calls := map[float64]int{}
	slow := func(ctx context.Context, rate float64, minOps int64) (Measurement, error) {
		calls[rate]++
		if calls[rate] == 3 && rate > 0 { // the third run sees half the service rate
			m, err := (&queue{mu: 500}).probe(ctx, rate, minOps)
			return m, err
		}
		return q.probe(ctx, rate, minOps)
	}
	slo, _ := ParseSLO("p99<20ms")
	a, err := (&Runner{Probe: slow, SLO: slo, Repeat: 3}).Search(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := 500 - math.Log(100)/0.020
	if !(a.Low <= want*1.02 && a.High >= want*0.98) {
		t.Errorf("repeat 3: [%.1f, %.1f), want around %.1f (the slow run's knee)", a.Low, a.High, want)
	}
	for rate, n := range calls {
		if n != 3 {
			t.Errorf("rate %.1f ran %d times, want 3", rate, n)
		}
	}
}

func TestCurveRunsEachPercentOfTheMaximum(t *testing.T) {
	q := &queue{mu: 2000}
	r := &Runner{Probe: q.probe}
	x, err := r.Curve(context.Background(), DefaultCurve)
	if err != nil || math.Abs(x-2000) > 1 {
		t.Fatalf("max %v, %v", x, err)
	}
	want := []float64{0, 200, 1000, 1400, 1600, 1800, 2000}
	if len(q.probes) != len(want) {
		t.Fatalf("probes %v, want %v", q.probes, want)
	}
	for i := range want {
		if math.Abs(q.probes[i]-want[i]) > 1 {
			t.Errorf("probe %d at %.1f, want %.1f", i, q.probes[i], want[i])
		}
	}
	st := r.Steps()
	if st[2].Merged().Hist.Quantile(99) >= st[5].Merged().Hist.Quantile(99) {
		t.Errorf("p99 at 50%% not below p99 at 90%%")
	}
}

func TestSearchStopsOnProbeError(t *testing.T) {
	boom := errors.New("boom")
	n := 0
	p := func(ctx context.Context, rate float64, minOps int64) (Measurement, error) {
		if n++; n == 3 {
			return Measurement{}, boom
		}
		return (&queue{mu: 1000}).probe(ctx, rate, minOps)
	}
	slo, _ := ParseSLO("p99<5ms")
	if _, err := (&Runner{Probe: p, SLO: slo}).Search(context.Background()); !errors.Is(err, boom) {
		t.Errorf("err %v, want the probe's", err)
	}
}

// TestSearchStopsAtMinRate: the search tries no rate below MinRate, so
// that no probe is stretched beyond bounds to gather its samples.
func TestSearchStopsAtMinRate(t *testing.T) {
	q := &queue{mu: 1000}
	tight, _ := ParseSLO("p99<1us")
	a, err := (&Runner{Probe: q.probe, SLO: tight, MinRate: 100}).Search(context.Background())
	if err != nil || a.Rate != 0 {
		t.Fatalf("%+v %v", a, err)
	}
	for _, r := range q.probes[1:] {
		if r < 100 {
			t.Errorf("probed %.1f ops/s, below MinRate 100 (probes %v)", r, q.probes)
		}
	}
	// The closed loop missed p99<1us already: no open loop at its rate.
	if len(q.probes) != 4 || a.High != 125 {
		t.Errorf("probes %v, high %g; want 500, 250, 125 after the maximum", q.probes, a.High)
	}
}

// TestSearchSkipsTheMaximumTheClosedLoopMissed: an open loop at the
// closed loop's rate runs only when the closed loop met the latency
// objective (or when there is no latency clause).
func TestSearchSkipsTheMaximumTheClosedLoopMissed(t *testing.T) {
	for _, c := range []struct {
		slo      string
		repeat   int
		flaky    bool // the closed loop meets it in one run of its repeats
		wantNext float64
	}{
		{slo: "p99<2ms", wantNext: 500},  // the closed loop's p99 is 4.6 ms
		{slo: "p99<5ms", wantNext: 1000}, // it held there
		{slo: "errors<1%", wantNext: 1000},
		{slo: "p99<2ms", repeat: 3, wantNext: 500},
		{slo: "p99<2ms", repeat: 3, flaky: true, wantNext: 1000},
	} {
		q := &queue{mu: 1000}
		probe := q.probe
		if c.flaky {
			n := 0
			probe = func(ctx context.Context, rate float64, minOps int64) (Measurement, error) {
				if n++; n == 2 { // the second run of the maximum: served four times as fast
					q.mu *= 4
					defer func() { q.mu /= 4 }()
				}
				return q.probe(ctx, rate, minOps)
			}
		}
		slo, _ := ParseSLO(c.slo)
		if _, err := (&Runner{Probe: probe, SLO: slo, Repeat: c.repeat}).Search(context.Background()); err != nil {
			t.Fatal(err)
		}
		next := q.probes[max(1, c.repeat)]
		if math.Abs(next-c.wantNext) > 1 {
			t.Errorf("%s (repeat %d, flaky %v): probes %v; want %g after the maximum", c.slo, c.repeat, c.flaky, q.probes, c.wantNext)
		}
	}
}

func TestKneeOfAQueue(t *testing.T) {
	q := &queue{mu: 1000}
	r := &Runner{Probe: q.probe}
	if _, err := r.Curve(context.Background(), []float64{10, 50, 60, 75, 90, 100}); err != nil {
		t.Fatal(err)
	}
	// The median grows as 1/(mu-rate): 2.25 times that at 100 ops/s at
	// 600 ops/s, 3.6 times at 750; the steps at 750 and beyond are past
	// the knee.
	k := Knee(r.Steps())
	if k < 0 || r.Steps()[k].Rate < 599 || r.Steps()[k].Rate > 601 {
		t.Errorf("knee at step %d (%v), want the step at 600 ops/s", k, r.Steps()[k].Rate)
	}
	if Knee(r.Steps()[:1]) != -1 {
		t.Errorf("a curve of the maximum alone has no knee")
	}
}

// TestKneeIgnoresOneDisturbedStep: one step slowed by something else
// (a busy machine) does not end the curve before the real knee.
func TestKneeIgnoresOneDisturbedStep(t *testing.T) {
	q := &queue{mu: 1000}
	probe := func(ctx context.Context, rate float64, minOps int64) (Measurement, error) {
		if rate > 290 && rate < 310 { // the 30% step: as if the server were five times slower
			return (&queue{mu: 310}).probe(ctx, rate*0.99, minOps)
		}
		return q.probe(ctx, rate, minOps)
	}
	r := &Runner{Probe: probe}
	if _, err := r.Curve(context.Background(), []float64{10, 30, 50, 60, 75, 90}); err != nil {
		t.Fatal(err)
	}
	if k := Knee(r.Steps()); k < 0 || math.Abs(r.Steps()[k].Rate-600) > 1 {
		t.Errorf("knee at step %d, want the step at 600 ops/s", k)
	}
}

// TestCurveFullIsTheMaximum: the curve's 100% step runs at the closed
// loop's rate itself, whatever its last bits (x*100/100 is not always x).
func TestCurveFullIsTheMaximum(t *testing.T) {
	for _, mu := range []float64{13437.29004699601, 2835.719304724109, 211.60322905771815, 1000} {
		var rates []float64
		probe := func(_ context.Context, rate float64, minOps int64) (Measurement, error) {
			rates = append(rates, rate)
			m := Measurement{Rate: rate, Ops: 1000, Seconds: 1000 / mu, Hist: metrics.NewHistogram()}
			m.Hist.Record(time.Millisecond)
			return m, nil
		}
		x, err := (&Runner{Probe: probe}).Curve(context.Background(), []float64{50, 100})
		if err != nil || rates[2] != x {
			t.Errorf("maximum %v, rates %v, %v", x, rates, err)
		}
	}
}
