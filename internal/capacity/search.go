package capacity

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
)

// Measurement is what one probe measured of the phase the objective is
// about: its counters and its histogram of response times (from each
// operation's scheduled start, in an open loop).
type Measurement struct {
	Rate    float64 // the rate asked for, operations per second; 0 is flat out
	Seconds float64
	Ops     int64 // latency samples
	Errors  int64
	Missed  int64 // operations scheduled that never began
	Bytes   int64
	Hist    *metrics.Histogram
	// Detail is the caller's own record of the probe (its result phases),
	// carried back untouched.
	Detail any
}

// OpsPerSec is the throughput achieved.
func (m Measurement) OpsPerSec() float64 {
	if m.Seconds <= 0 {
		return 0
	}
	return float64(m.Ops) / m.Seconds
}

// BytesPerSec is the bandwidth achieved.
func (m Measurement) BytesPerSec() float64 {
	if m.Seconds <= 0 {
		return 0
	}
	return float64(m.Bytes) / m.Seconds
}

// Probe runs the workload once at rate operations per second (0: closed
// loop, as fast as the threads go), long enough for at least minOps
// operations at that rate, and returns the measurement.
type Probe func(ctx context.Context, rate float64, minOps int64) (Measurement, error)

// MaxMissed is the share of an open loop's scheduled operations that may
// never begin before the rate counts as not kept up with.
const MaxMissed = 0.01

// Check tells whether every clause of s holds for m, and if not, why.
func (s SLO) Check(m Measurement) (bool, string) {
	switch {
	case m.Ops == 0 || m.Hist == nil || m.Hist.Count() == 0:
		return false, "no operation completed"
	case m.Rate > 0 && float64(m.Missed) > MaxMissed*float64(m.Ops+m.Missed):
		return false, fmt.Sprintf("fell behind the rate: %d of %d scheduled operations never began", m.Missed, m.Ops+m.Missed)
	case m.Ops < s.MinOps():
		return false, fmt.Sprintf("%d operations are too few to judge %s (%d needed)", m.Ops, s, s.MinOps())
	}
	for _, o := range s {
		if ok, why := o.check(m); !ok {
			return false, why
		}
	}
	return true, ""
}

// latencyMissed tells whether a latency clause of s failed in every run
// of st, each with samples enough to judge it.
func (s SLO) latencyMissed(st Step) bool {
	if len(st.Runs) == 0 {
		return false
	}
	for _, m := range st.Runs {
		if m.Hist == nil || m.Ops < s.MinOps() || !s.latencyFails(m) {
			return false
		}
	}
	return true
}

func (s SLO) latencyFails(m Measurement) bool {
	for _, o := range s {
		if ok, _ := o.check(m); o.Stat != "errors" && !ok {
			return true
		}
	}
	return false
}

func (o Objective) check(m Measurement) (bool, string) {
	if o.Stat == "errors" {
		pct := 100 * float64(m.Errors) / float64(m.Ops+m.Errors)
		if pct < o.ErrorPct || o.OrEqual && pct <= o.ErrorPct {
			return true, ""
		}
		return false, fmt.Sprintf("errors %.3g%%, beyond %s", pct, o)
	}
	v := o.Value(m.Hist)
	if v < o.Bound || o.OrEqual && v <= o.Bound {
		return true, ""
	}
	return false, fmt.Sprintf("%s %v, beyond %s", o.Stat, threeDigits(v), o)
}

// threeDigits is d rounded to three significant digits (87.6ms, 1.23s).
func threeDigits(d time.Duration) time.Duration {
	r := time.Duration(1)
	for d >= 1000*r {
		r *= 10
	}
	return d.Round(r)
}

// Value is the clause's latency statistic of h.
func (o Objective) Value(h *metrics.Histogram) time.Duration {
	if o.Stat == "mean" {
		return time.Duration(h.Summary().Mean * 1e3)
	}
	return h.Quantile(100 * o.Q)
}

// Step is one rate a search or a curve ran, with each run's measurement.
type Step struct {
	Rate   float64 // asked for; 0 is the closed-loop maximum
	Runs   []Measurement
	Holds  bool
	Reason string // why the objective does not hold
}

// Merged is the step's runs as one measurement: counters summed,
// histograms merged; the Detail is the last run's.
func (s Step) Merged() Measurement {
	out := Measurement{Rate: s.Rate, Hist: metrics.NewHistogram()}
	for _, m := range s.Runs {
		out.Seconds += m.Seconds
		out.Ops += m.Ops
		out.Errors += m.Errors
		out.Missed += m.Missed
		out.Bytes += m.Bytes
		if m.Hist != nil {
			out.Hist.Merge(m.Hist)
		}
		out.Detail = m.Detail
	}
	return out
}

// Runner runs steps: each rate Repeat times through Probe, judged by SLO
// (when one is given) in every run.
type Runner struct {
	Probe  Probe
	SLO    SLO
	Repeat int
	// OnStep, if set, is told of each step as it is done (progress).
	OnStep func(Step)
	// MinRate is the lowest rate the search tries: below it a probe
	// would take too long to gather its samples (SLO.MinOps).
	MinRate float64
	steps   []Step
}

// Steps are the steps run so far, in order.
func (r *Runner) Steps() []Step { return r.steps }

// run runs one rate; the objective holds only when it holds in every run.
func (r *Runner) run(ctx context.Context, rate float64) (Step, error) {
	st := Step{Rate: rate, Holds: true}
	minOps := int64(0)
	if len(r.SLO) > 0 && rate > 0 {
		minOps = r.SLO.MinOps()
	}
	for i := 0; i < max(1, r.Repeat); i++ {
		m, err := r.Probe(ctx, rate, minOps)
		if err != nil {
			return st, err
		}
		m.Rate = rate
		st.Runs = append(st.Runs, m)
		if ok, why := r.SLO.Check(m); len(r.SLO) > 0 && !ok && st.Holds {
			st.Holds, st.Reason = false, why
		}
	}
	if len(r.SLO) == 0 {
		st.Holds = false
	}
	r.steps = append(r.steps, st)
	if r.OnStep != nil {
		r.OnStep(st)
	}
	return st, nil
}

// Max runs the closed-loop maximum and returns its rate: the median of
// its runs' throughput.
func (r *Runner) Max(ctx context.Context) (float64, error) {
	st, err := r.run(ctx, 0)
	if err != nil {
		return 0, err
	}
	rates := make([]float64, len(st.Runs))
	for i, m := range st.Runs {
		rates[i] = m.OpsPerSec()
	}
	sort.Float64s(rates)
	x := rates[len(rates)/2]
	if x <= 0 {
		return 0, errors.New("the closed-loop run completed no operation: there is no rate to search")
	}
	return x, nil
}

// Answer is the outcome of a search.
type Answer struct {
	MaxRate float64 // the closed-loop maximum, ops/s
	// Rate is the highest rate found at which the objective holds, 0 when
	// it holds at none; the true answer lies in [Low, High): it holds at
	// Low (= Rate) and not at High. High equals Low when the objective
	// holds at the closed-loop maximum (the threads are the limit).
	Rate, Low, High float64
	At              *Step // the step at Rate; nil when it holds at none
}

// Search settings.
const (
	// Tolerance is the relative width at which bisection stops.
	Tolerance = 0.03
	// MaxProbes bounds the steps of one search, the maximum included.
	MaxProbes = 14
	// Lowest is the fraction of the maximum below which the search gives
	// up finding a rate that holds.
	Lowest = 1.0 / 1024
)

// Search finds the highest open-loop rate at which r.SLO holds: the
// closed-loop maximum first, then the maximum rate, halving it until the
// objective holds, then bisection until the interval is within
// Tolerance. When the closed loop itself missed a latency objective, the
// open loop at its rate is not run: an operation's latency there is its
// service time at the same load plus the wait for its turn, never less,
// so it would miss too.
func (r *Runner) Search(ctx context.Context) (Answer, error) {
	if len(r.SLO) == 0 {
		return Answer{}, errors.New("no objective to search for")
	}
	x, err := r.Max(ctx)
	if err != nil {
		return Answer{}, err
	}
	a := Answer{MaxRate: x, High: x}
	held := -1
	first := x
	if r.SLO.latencyMissed(r.steps[len(r.steps)-1]) {
		first = x / 2
	}
	for rate := first; rate >= max(x*Lowest, r.MinRate); rate /= 2 {
		st, err := r.run(ctx, rate)
		if err != nil {
			return a, err
		}
		if st.Holds {
			a.Low, held = rate, len(r.steps)-1
			break
		}
		a.High = rate
	}
	switch {
	case held < 0:
		return a, nil
	case a.Low == x:
		a.High = x
	}
	for len(r.steps) < MaxProbes && a.High-a.Low > Tolerance*a.High {
		mid := (a.Low + a.High) / 2
		st, err := r.run(ctx, mid)
		if err != nil {
			return a, err
		}
		if st.Holds {
			a.Low, held = mid, len(r.steps)-1
		} else {
			a.High = mid
		}
	}
	a.Rate = a.Low
	a.At = &r.steps[held]
	return a, nil
}

// Curve runs the closed-loop maximum, then an open loop at each percent
// of it, in the order given.
func (r *Runner) Curve(ctx context.Context, percents []float64) (float64, error) {
	x, err := r.Max(ctx)
	if err != nil {
		return 0, err
	}
	for _, p := range percents {
		if _, err := r.run(ctx, x*(p/100)); err != nil { // 100% is x itself, not x*100/100
			return x, err
		}
	}
	return x, nil
}

// KneeFactor is how far the knee's median response time may be above
// the lowest median of the curve.
const KneeFactor = 3

// Knee is the index in steps of the curve's knee: the open-loop step of
// the highest rate that kept up with its rate (MaxMissed) and whose
// median response time is at most KneeFactor times the lowest median of
// the open-loop steps; -1 when there is none. The median, not a tail
// percentile, because a queue past the knee moves the median while a
// busy machine's hiccups move mostly the tail; the highest such step,
// not the first before a rise, so that one step disturbed by the
// machine does not end the curve early.
func Knee(steps []Step) int {
	var p50s []time.Duration
	base := time.Duration(math.MaxInt64)
	for _, s := range steps {
		var v time.Duration
		if s.Rate > 0 && len(s.Runs) > 0 {
			v = s.Merged().Hist.Quantile(50)
			base = min(base, v)
		}
		p50s = append(p50s, v)
	}
	knee := -1
	for i, s := range steps {
		if s.Rate <= 0 || len(s.Runs) == 0 || p50s[i] > KneeFactor*base {
			continue
		}
		m := s.Merged()
		if float64(m.Missed) > MaxMissed*float64(m.Ops+m.Missed) {
			continue
		}
		if knee < 0 || s.Rate > steps[knee].Rate {
			knee = i
		}
	}
	return knee
}
