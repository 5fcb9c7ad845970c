package objbench

import (
	"cmp"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// Workload is one object workload, run by `fsbench objbench --workload
// NAME` instead of the functional checks and JuiceFS's items. It has three
// steps, as warp's benchmarks: Prepare (untimed: the objects the phase
// reads), one timed phase of the engine, and Cleanup. Every key a
// workload writes must be under the run's own prefix (r.store is already
// confined to it), and the run removes everything under that prefix at the
// end, so most workloads need no Cleanup of their own.
//
// To add a workload: write its Workload value (see workloads_basic.go) and
// add it to workloadList. The functions take the run first, so that
// method expressions of *run ((*run).getPhase) fit. The runner applies --ops, --duration, --warmup,
// --rate, --interval and --autoterm to the phase, shows progress and turns
// the measurement into result rows, so a workload states only what it does.
type Workload struct {
	Name string // what --workload takes
	Help string // one line for --help
	// Unit names what one operation of the timed phase is, for its
	// progress ("pages", "ops", "cycles"); "objects" when empty.
	Unit string

	// Check validates the options the workload depends on, before
	// anything is opened; its errors are usage errors. Optional.
	Check func(o *Options) error
	// Prepare readies what the timed phase needs, untimed. Optional.
	Prepare func(r *run, ctx context.Context) error
	// Phase returns the timed phase: Name, Title, Tasks, Shared, Setup,
	// Classes and Do. When it sets neither Ops nor Duration, they come
	// from the options (--ops, --duration); warm-up, rate, interval and
	// autoterm always do.
	Phase func(r *run, ctx context.Context) engine.Phase
	// Rows turns the measurement into the result's rows. Optional: by
	// default one row for the whole phase (see phaseRow).
	Rows func(r *run, res *engine.Result) []report.PhaseResult
	// Cleanup removes what the workload made outside the run's prefix
	// (nothing, for every workload so far). Optional.
	Cleanup func(r *run, ctx context.Context) error
}

// workloadList is every workload, in the order --help lists them.
var workloadList = []*Workload{
	getWorkload, putWorkload, statWorkload, deleteWorkload, listWorkload, mixedWorkload,
	multipartWorkload, versionedWorkload,
}

// findWorkload returns the workload called name, or nil.
func findWorkload(name string) *Workload {
	for _, w := range workloadList {
		if w.Name == name {
			return w
		}
	}
	return nil
}

// WorkloadNames lists the workloads --workload accepts.
func WorkloadNames() []string {
	names := make([]string, 0, len(workloadList))
	for _, w := range workloadList {
		names = append(names, w.Name)
	}
	return names
}

// WorkloadHelp describes every workload, one line each, for --help.
func WorkloadHelp() string {
	var b strings.Builder
	for _, w := range workloadList {
		fmt.Fprintf(&b, "  %-9s %s\n", w.Name, w.Help)
	}
	return b.String()
}

// checkWorkload validates the options of o.Workload, if set.
func (o *Options) checkWorkload() error {
	if o.Workload == "" {
		return nil
	}
	w := findWorkload(o.Workload)
	if w == nil {
		return fmt.Errorf("--workload %q: unknown workload; one of %s", o.Workload, strings.Join(WorkloadNames(), ", "))
	}
	if w.Check != nil {
		return w.Check(o)
	}
	return nil
}

// runWorkload runs o.Workload: prepare, the timed phase, the rows of the
// result, clean-up. The run's clean-up of its prefix follows.
func (r *run) runWorkload(ctx context.Context) error {
	wl := findWorkload(r.o.Workload)
	if wl.Prepare != nil {
		r.info("Preparing " + wl.Name + " ...")
		if err := wl.Prepare(r, ctx); err != nil {
			if notSupported(err) {
				r.notSupportedRow(wl, err)
				return nil
			}
			return fmt.Errorf("prepare %s: %w", wl.Name, err)
		}
	}
	r.info("Start " + wl.Name + " workload ...")
	p := wl.Phase(r, ctx)
	r.limits(&p)
	before := r.endpointStats()
	res, err := r.runPhaseOf(ctx, p, r.perOp(), cmp.Or(wl.Unit, "objects"))
	if err != nil && ctx.Err() == nil {
		r.warn("%s: %v", p.Title, err)
	}
	r.ended(&p, res)
	rows := []report.PhaseResult{r.phaseRow(p.Name, p.Title, res)}
	if wl.Rows != nil {
		rows = wl.Rows(r, res)
	}
	rows[0].Endpoints = r.endpointRows(before, rows[0].Seconds)
	r.res.Phases = append(r.res.Phases, rows...)
	for i := range rows {
		r.warnErrors(&rows[i])
	}
	if wl.Cleanup != nil {
		if err := wl.Cleanup(r, context.WithoutCancel(ctx)); err != nil {
			r.warn("clean up %s: %v", wl.Name, err)
		}
	}
	return nil
}

// limits gives the phase the limits of the options where it set none.
func (r *run) limits(p *engine.Phase) {
	o := r.o
	p.KeepGoing = true
	if p.Ops == 0 && p.Duration == 0 {
		p.Ops, p.Duration = o.Ops, o.Duration
	}
	p.Warmup, p.Rate, p.Interval = o.Warmup, o.Rate, o.Interval
	if o.AutoTerm.On {
		p.EndEarly = o.AutoTerm.Stable
		if p.Interval == 0 {
			p.Interval = time.Second
		}
	}
}

// ended tells how the timed phase ended when it did not run to its
// limits: autoterm found it stable, or the objects to delete ran out.
func (r *run) ended(p *engine.Phase, res *engine.Result) {
	switch {
	case res.EndedEarly:
		a := r.o.AutoTerm
		msg := fmt.Sprintf("autoterm ended %s after %.1f s: each of the %d intervals before the last was within %g%% of its throughput",
			p.Title, res.Elapsed.Seconds(), a.Samples-1, a.Pct)
		r.info(msg)
		r.res.Parameters = append(r.res.Parameters, report.Param{Key: "autoterm_ended_s", Label: "Ended by autoterm after",
			Value: res.Elapsed.Seconds(), Display: res.Elapsed.Round(100 * time.Millisecond).String()})
	case p.Duration > 0 && p.Ops > 0 && p.Ops != r.o.Ops && res.Ops+res.Errors >= p.Ops && !res.Incomplete:
		objs := p.Ops
		if r.perOp() > 1 {
			objs = int64(len(r.objs)) // every batch of them done
		}
		r.info(fmt.Sprintf("%s: ended after %.1f s, before --duration, when its %d objects were done (more --objects make it longer)",
			p.Title, res.Elapsed.Seconds(), objs))
	}
}

// perOp is how many objects one operation of the workload covers: --batch
// (which only the delete workload takes) or one.
func (r *run) perOp() int { return max(r.o.Batch, 1) }

// phaseRow is the result row of a workload's measurement: operations/s,
// or MiB/s when bytes moved, the mean time one thread spent per
// operation, and the percentiles of latency and time to first byte.
func (r *run) phaseRow(name, title string, res *engine.Result) report.PhaseResult {
	p := res.Report()
	p.Name, p.Title = name, title
	p.LatencyOf = name
	p.Cost = report.Measure{Value: p.PerUnit(p.Ops) * 1000, Unit: report.UnitMsPerOp}
	if p.Bytes > 0 {
		p.Value = report.Measure{Value: p.BytesPerSec / float64(units.MiB), Unit: report.UnitMiBPerSec}
	} else {
		p.Value = report.Measure{Value: p.OpsPerSec, Unit: report.UnitOpsPerSec}
	}
	return p
}

// warnErrors warns of a row's failed and throttled operations, and of a
// rate it did not keep.
func (r *run) warnErrors(p *report.PhaseResult) {
	if p.Errors > 0 && len(p.ErrorSamples) > 0 {
		r.warn("%s: %d of %d operations failed, e.g.: %s", p.Title, p.Errors, p.Errors+p.Ops, p.ErrorSamples[0])
	}
	if p.Throttled > 0 {
		r.warn("%s: the store throttled %d requests (503 SlowDown / 429); they were retried after a pause", p.Title, p.Throttled)
	}
	if s := p.Shortfall(); s != "" {
		r.warn("%s: %s", p.Title, s)
	}
}

// workloadParams are the parameters of a workload run: those that shape
// it, on the header line of the table.
func (o *Options) workloadParams() report.Params {
	ps := report.Params{
		{Key: "storage", Label: "", Value: o.Storage},
		{Key: "workload", Label: "Workload", Value: o.Workload},
		{Key: "objects", Label: "Objects", Value: o.Objects, Display: strconv.Itoa(o.Objects)},
		{Key: "obj_size", Label: "Sizes", Value: o.Sizes.String()},
		{Key: "threads", Label: "NumThreads", Value: o.Threads, Display: strconv.Itoa(o.Threads)},
		{Key: "verify", Label: "", Value: o.Verify},
		{Key: "seed", Label: "", Value: o.Seed},
	}
	if o.Range > 0 {
		ps = append(ps, report.Param{Key: "range", Label: "Range", Value: o.Range, Display: units.FormatBytes(o.Range)})
	}
	if o.Batch > 0 {
		ps = append(ps, report.Param{Key: "batch", Label: "Batch", Value: o.Batch, Display: strconv.Itoa(o.Batch)})
	}
	if o.Workload == "mixed" {
		ps = append(ps, report.Param{Key: "mix", Label: "Mix", Value: o.Mix.String()})
	}
	if o.AutoTerm.On {
		ps = append(ps, report.Param{Key: "autoterm", Label: "AutoTerm", Value: true,
			Display: fmt.Sprintf("%.1f%% after %s", o.AutoTerm.Pct, o.AutoTerm.MinDur)})
	}
	if !o.Distribution.IsUniform() {
		ps = append(ps, report.Param{Key: "distribution", Label: "Distribution", Value: o.Distribution.String()})
	}
	return append(append(ps, o.moreParams()...), o.limitParams()...)
}

// limitParams are the parameters of the limits of each phase.
func (o *Options) limitParams() report.Params {
	var ps report.Params
	for _, x := range []struct {
		key, label string
		d          time.Duration
	}{{"duration_s", "Duration", o.Duration}, {"warmup_s", "Warmup", o.Warmup}, {"interval_s", "Interval", o.Interval}} {
		if x.d > 0 {
			ps = append(ps, report.Param{Key: x.key, Label: x.label, Value: x.d.Seconds(), Display: x.d.String()})
		}
	}
	if o.Ops > 0 {
		ps = append(ps, report.Param{Key: "ops", Label: "Ops", Value: o.Ops, Display: strconv.FormatInt(o.Ops, 10)})
	}
	if o.Rate > 0 {
		ps = append(ps, report.Param{Key: "rate", Label: "Rate", Value: o.Rate, Display: strconv.FormatFloat(o.Rate, 'g', -1, 64) + "/s"})
	}
	return ps
}
