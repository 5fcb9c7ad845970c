package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/bench"
	"github.com/fsbench/fsbench/internal/capacity"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/objbench"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// CapacityFlags are --slo and --curve: the rates of one phase chosen by
// fsbench, a search or a curve, instead of one run.
type CapacityFlags struct {
	slo, curve string
	SLO        capacity.SLO
	Curve      []float64
}

// defaultCurve is --curve given alone: vdbench's steps.
const defaultCurve = "10,50,70,80,90,100"

// addCapacityFlags declares --slo and --curve on cmd.
func addCapacityFlags(cmd *cobra.Command, o *CapacityFlags) {
	f := cmd.Flags()
	f.StringVar(&o.slo, "slo", "", "search the highest open-loop rate at which the latency objective `OBJ` holds over the whole phase, "+
		"e.g. 'p99<5ms' or 'p99<5ms,p50<1ms' (any percentile, mean, errors<1%); first a closed-loop maximum, then bisection")
	f.StringVar(&o.curve, "curve", "", "the latency-throughput curve: the closed-loop maximum, then an open loop at each of `PERCENTS` of it "+
		"(given alone: "+defaultCurve+", vdbench's; or --curve=10,50,90,100)")
	f.Lookup("curve").NoOptDefVal = defaultCurve
}

// curveArgs is next, but first catches `--curve 10,50`: the flag's value
// is optional, so its percents must follow an =, and without one they
// are a positional argument of their own.
func curveArgs(next cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if f := cmd.Flags().Lookup("curve"); f != nil && f.Changed && f.Value.String() == defaultCurve {
			for _, a := range args {
				if _, err := capacity.ParseCurve(a); err == nil && strings.Contains(a, ",") {
					return Usagef("--curve takes its percents after an =: write --curve=%s", a)
				}
			}
		}
		return next(cmd, args)
	}
}

// active reports whether --slo or --curve was given.
func (o *CapacityFlags) active() bool { return o.slo != "" || o.curve != "" }

// resolve parses --slo and --curve and refuses what does not combine
// with them; exprs are the run's expectations.
func (o *CapacityFlags) resolve(cmd *cobra.Command, exprs []expect.Expr) error {
	f := cmd.Flags()
	if f.Changed("slo") && strings.TrimSpace(o.slo) == "" || f.Changed("curve") && strings.TrimSpace(o.curve) == "" {
		return Usagef("--slo and --curve need a value, e.g. --slo 'p99<5ms' or --curve=%s", defaultCurve)
	}
	if o.slo != "" {
		s, err := capacity.ParseSLO(o.slo)
		if err != nil {
			return Usagef("--slo: %v", err)
		}
		o.SLO = s
	}
	if o.curve != "" {
		c, err := capacity.ParseCurve(o.curve)
		if err != nil {
			return Usagef("--curve: %v", err)
		}
		o.Curve = c
	}
	switch {
	case o.slo != "" && o.curve != "":
		return Usagef("--slo searches rates and --curve runs fixed ones: give one of them")
	case o.active() && f.Changed("rate"):
		return Usagef("--rate sets one rate; --slo and --curve choose the rates themselves: give one or the other")
	}
	for _, e := range exprs {
		if e.Name == expect.Capacity && o.slo == "" {
			return Usagef("--expect %q: capacity is the answer of --slo; give --slo too", e.Text)
		}
	}
	return nil
}

// capacityRun is one search or curve: the runner of its steps and where
// each probe's own result is kept.
type capacityRun struct {
	flags  *CapacityFlags
	phase  string
	repeat int
	// duration is the phase's own duration (0: limited by count).
	duration time.Duration
	// last is the result of the last probe, the base of the run's result.
	last *report.Result
	// unit names what the rates count ("samples" for train; empty:
	// operations) and per is how many of them each latency sample (an
	// operation of the phase) is: train times a batch's wait, and its
	// rates are of samples. 0 is 1.
	unit string
	per  float64
	// minRate, if set, is the lowest rate the search tries, in place of
	// what gathers the objective's samples in minProbe.
	minRate float64
}

// scale is the factor from the runner's rates (latency samples per
// second) to the rates reported.
func (c *capacityRun) scale() float64 {
	if c.per > 0 {
		return c.per
	}
	return 1
}

// measurement is the phase's measurement in a probe's result res.
func (c *capacityRun) measurement(res *report.Result) (capacity.Measurement, error) {
	c.last = res
	p := res.FindPhase(c.phase)
	if p == nil {
		return capacity.Measurement{}, fmt.Errorf("phase %s was not measured", c.phase)
	}
	h, err := p.LatencyHistogram()
	if err != nil {
		return capacity.Measurement{}, err
	}
	return capacity.Measurement{Seconds: p.Seconds, Ops: p.Ops, Errors: p.Errors, Missed: p.Missed, Bytes: p.Bytes,
		Hist: h, Detail: res}, nil
}

// run runs the search or the curve and fills res: the capacity, the
// probes' settings, and as phases the answer's (--slo) or every step's
// (--curve, named PHASE.PERCENTpct, e.g. randread.50pct).
func (c *capacityRun) run(ctx context.Context, app *App, probe capacity.Probe, res *report.Result) error {
	r := &capacity.Runner{Probe: probe, SLO: c.flags.SLO, Repeat: c.repeat, OnStep: c.progress(app),
		MinRate: float64(c.flags.SLO.MinOps()) / max(minProbe, 4*c.duration).Seconds()}
	if c.minRate > 0 {
		r.MinRate = c.minRate
	}
	out := &report.Capacity{Phase: c.phase, Unit: c.unit, Objective: c.flags.SLO.String(), Repeat: max(1, c.repeat), Bounds: bounds(c.flags.SLO)}
	var a capacity.Answer
	var err error
	if len(c.flags.SLO) > 0 {
		a, err = r.Search(ctx)
	} else {
		a.MaxRate, err = r.Curve(ctx, c.flags.Curve)
	}
	if a.At != nil && err == nil {
		*res = *a.At.Runs[len(a.At.Runs)-1].Detail.(*report.Result) // the answer's run
	} else if c.last != nil {
		*res = *c.last
	}
	res.Phases, res.Parameters = []report.PhaseResult{}, withoutRate(res.Parameters) // [], not null, when none holds
	out.MaxOpsPerSec = a.MaxRate * c.scale()
	for _, st := range r.Steps() {
		out.Steps = append(out.Steps, stepReport(st, a.MaxRate, len(c.flags.SLO) > 0, c.scale()))
		if len(c.flags.SLO) == 0 && st.Rate > 0 {
			res.Phases = append(res.Phases, c.curvePhase(st, out.Steps[len(out.Steps)-1].Percent)...)
		}
	}
	if len(c.flags.SLO) > 0 && err == nil {
		out.Answer = answerReport(a, c.flags.SLO, c.scale())
		if a.At != nil {
			res.Phases = a.At.Runs[len(a.At.Runs)-1].Detail.(*report.Result).Phases
		}
	}
	if k := capacity.Knee(r.Steps()); k > 0 {
		out.KneeStep = k
	}
	if err != nil && c.last != nil && len(res.Phases) == 0 {
		res.Phases = c.last.Phases // what the failed or interrupted run measured
	}
	res.Capacity = out
	return err
}

// withoutRate is ps without the last probe's rate: the steps hold each.
func withoutRate(ps report.Params) report.Params {
	var out report.Params
	for _, p := range ps {
		if p.Key != "rate" {
			out = append(out, p)
		}
	}
	return out
}

// curvePhase is the phase of a curve's step, named PHASE.PERCENTpct, e.g. randread.50pct.
func (c *capacityRun) curvePhase(st capacity.Step, pct float64) []report.PhaseResult {
	p := st.Runs[len(st.Runs)-1].Detail.(*report.Result).FindPhase(c.phase)
	if p == nil {
		return nil
	}
	q := *p
	q.Name = fmt.Sprintf("%s.%gpct", c.phase, roundPct(pct))
	q.Title = fmt.Sprintf("%s at %g%%", p.Title, roundPct(pct))
	return []report.PhaseResult{q}
}

func roundPct(p float64) float64 { return float64(int64(p*10+0.5)) / 10 }

// progress prints a line per step on stderr, unless -q.
func (c *capacityRun) progress(app *App) func(capacity.Step) {
	return func(st capacity.Step) {
		if app.Globals.Quiet {
			return
		}
		m := st.Merged()
		asked, u, k := "closed loop (maximum)", (&report.Capacity{Unit: c.unit}).RateUnit(), c.scale()
		if st.Rate > 0 {
			asked = fmt.Sprintf("%.0f %s asked", k*st.Rate, u)
		}
		verdict := ""
		if len(c.flags.SLO) > 0 && st.Rate > 0 {
			verdict = ": holds"
			if !st.Holds {
				verdict = ": does not hold (" + st.Reason + ")"
			}
		}
		fmt.Fprintf(app.IO.Err, "%s %s, %.0f %s done, p50 %s, p99 %s%s\n", c.phase, asked, k*m.OpsPerSec(), u,
			units.FormatLatency(float64(m.Hist.Quantile(50))/1e3), units.FormatLatency(float64(m.Hist.Quantile(99))/1e3), verdict)
	}
}

// stepReport is a step in the result model, its rates scaled by k.
func stepReport(st capacity.Step, maxRate float64, judged bool, k float64) report.CapacityStep {
	m := st.Merged()
	out := report.CapacityStep{Rate: k * st.Rate, Runs: len(st.Runs), Seconds: m.Seconds, Ops: m.Ops, Errors: m.Errors, Missed: m.Missed,
		OpsPerSec: k * m.OpsPerSec(), BytesPerSec: m.BytesPerSec(), Reason: st.Reason}
	if maxRate > 0 && st.Rate > 0 {
		out.Percent = roundPct(100 * st.Rate / maxRate)
	}
	if judged && st.Rate > 0 {
		h := st.Holds
		out.Holds = &h
	}
	var p report.PhaseResult
	_ = report.SetLatency(&p, m.Hist) // a histogram of our own geometry encodes
	out.Latency, out.Histogram = p.Latency, p.Histogram
	return out
}

// bounds are the latency bounds of slo in microseconds, by statistic.
func bounds(slo capacity.SLO) map[string]float64 {
	var out map[string]float64
	for _, o := range slo {
		if o.Stat != "errors" {
			if out == nil {
				out = map[string]float64{}
			}
			out[o.Stat] = float64(o.Bound) / float64(time.Microsecond)
		}
	}
	return out
}

// answerReport is the answer of a search in the result model, its rates
// scaled by k.
func answerReport(a capacity.Answer, slo capacity.SLO, k float64) *report.CapacityAnswer {
	out := &report.CapacityAnswer{OpsPerSec: k * a.Rate, Low: k * a.Low, High: k * a.High, ThreadsBound: a.At != nil && a.High == a.Low}
	if a.At == nil {
		return out
	}
	m := a.At.Merged()
	out.BytesPerSec = m.BytesPerSec()
	out.Latency = m.Hist.Summary()
	out.Values = map[string]float64{}
	for _, o := range slo {
		if o.Stat == "errors" {
			out.Values[o.Stat] = 100 * float64(m.Errors) / float64(max(1, m.Ops+m.Errors))
			continue
		}
		out.Values[o.Stat] = float64(o.Value(m.Hist)) / float64(time.Microsecond)
	}
	return out
}

// minProbe is the longest a probe of the search may be stretched to
// gather the samples its objective needs, unless the phase's own
// duration is longer (then four times that): the search tries no rate
// lower than what gathers them in that time.
const minProbe = 30 * time.Second

// errNoPacedPhase is why a workload cannot be searched.
var errNoPacedPhase = errors.New("--slo and --curve set the rate of a phase limited by time or count, and this workload has none: give --duration (e.g. --duration 10s)")

// pacedPhase is the index of the phase of j whose rate --slo and --curve
// set: the last one limited by time or count.
func pacedPhase(j *jobfile.Job) (int, error) {
	for i := len(j.Phases) - 1; i >= 0; i-- {
		if !j.Phases[i].OnePass() {
			return i, nil
		}
	}
	return 0, &UsageError{Err: errNoPacedPhase}
}

// benchProbe runs workload j with phase i at a rate (0: closed loop),
// long enough for minOps operations: a duration stretched to minOps at
// the rate, or a count raised to it.
func benchProbe(c *capacityRun, o *BenchOptions, j *jobfile.Job, i int) capacity.Probe {
	return func(ctx context.Context, rate float64, minOps int64) (capacity.Measurement, error) {
		jj := *j
		jj.Phases = append([]jobfile.PhaseSpec(nil), j.Phases...)
		p := &jj.Phases[i]
		p.Rate = rate
		enough(rate, minOps, &p.Duration, &p.Ops)
		res := newResult("bench")
		if err := bench.RunJob(ctx, o.Options, &jj, res); err != nil {
			c.last = res
			return capacity.Measurement{}, err
		}
		return c.measurement(res)
	}
}

// enough makes a probe at rate (0: closed loop) long enough for minOps
// operations: its duration d stretched, or, without one, its count ops
// raised.
func enough(rate float64, minOps int64, d *time.Duration, ops *int64) {
	if rate <= 0 || minOps <= 0 {
		return
	}
	if *d > 0 {
		*d = stretched(*d, rate, minOps)
	} else {
		*ops = max(*ops, minOps)
	}
}

// stretched is a probe's duration d, stretched to gather minOps
// operations at rate, with a margin.
func stretched(d time.Duration, rate float64, minOps int64) time.Duration {
	return max(d, time.Duration(float64(minOps)/rate*1.05*float64(time.Second)))
}

// objbenchProbe runs objbench's workload at a rate (0: closed loop), long
// enough for minOps operations, as benchProbe does.
func objbenchProbe(c *capacityRun, o objbench.Options) capacity.Probe {
	return func(ctx context.Context, rate float64, minOps int64) (capacity.Measurement, error) {
		opts := o
		opts.Rate = rate
		enough(rate, minOps, &opts.Duration, &opts.Ops)
		res := newResult("objbench")
		if err := objbench.Run(ctx, opts, res); err != nil {
			c.last = res
			return capacity.Measurement{}, err
		}
		return c.measurement(res)
	}
}
