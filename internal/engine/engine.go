// Package engine is fsbench's one way of running and timing operations:
// a phase is N workers running one operation against a target (a file tree
// or an object store) until a limit (one pass over its tasks, a count of
// operations, a number of bytes or a duration), optionally paced at a fixed
// rate (open loop). Workers start together at a barrier; each records into
// its own histograms and counters, without locks or allocation; the phase's
// measurement is merged when it ends, and interval snapshots are taken
// without stopping anyone.
//
// The engine knows nothing of files or objects: a phase's Do function does
// one task and brackets each timed operation with Worker.Begin and
// Worker.End. Package workload gives it file operations, objbench object
// operations; bench, job files and objbench's items are lists of phases.
//
// It may not know what an operation does to storage, nor import any package
// that does (workload, objbench); it imports only metrics, report and tick.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/skew"
)

// Phase is one phase: Workers run Do on the phase's tasks until its limit.
type Phase struct {
	Name  string // stable metric name, e.g. "write-big"
	Title string // what the table shows, e.g. "Write big file"

	// Tasks is the number of tasks of one pass (files, objects, ...).
	// Without Shared, worker w of W owns tasks [w*T/W, (w+1)*T/W): no two
	// workers ever use one file at the same time (vdbench's rule too).
	// With Shared, each worker takes the next task no one has taken yet.
	Tasks  int
	Shared bool
	// Random visits a worker's own tasks in random order: a permutation
	// when the phase is one pass, a random pick each time otherwise.
	Random bool
	// Skew, with Random, draws each pick of a worker's own tasks from a
	// distribution (a zipf, a hot zone, ...) instead of alike, also in one
	// pass (as many picks as tasks, some twice, as fio's non-uniform
	// random_distribution); Result.Access says how the picks fell, as
	// picks of SkewOf ("files", "objects").
	Skew   skew.Spec
	SkewOf string

	// Limits. With none of Ops, Bytes and Duration the phase is one pass:
	// every task once. Otherwise tasks repeat (Do sees the pass number)
	// until the first limit is reached.
	Ops      int64         // operations across all workers
	Bytes    int64         // bytes across all workers
	Duration time.Duration // time, after Warmup
	// Once ends the phase after one pass even when it has a limit: with a
	// Duration, the pass stops at the deadline or when every task is done,
	// whichever comes first (IOR's and mdtest's stonewall).
	Once bool
	// Warmup runs this long before measuring: operations that start before
	// it ends are done but not counted.
	Warmup time.Duration
	// Rate makes the phase open-loop: operations are scheduled at this many
	// per second across the workers, and latency is the response time from
	// the scheduled start (Result.Service holds the service time).
	Rate float64

	// Interval, if set, cuts the measurement into intervals (Result.Series)
	// and calls OnInterval at the end of each, from a goroutine of its own.
	Interval   time.Duration
	OnInterval func(Sample)
	// EndEarly, if set, is asked at the end of each interval, with the
	// series so far, whether the phase may end now (its measurement is
	// stable, say): if so, the workers stop before their next operation
	// and Result.EndedEarly is set.
	EndEarly func(series []Sample) bool

	// Classes is the number of classes the operations fall into (see
	// Worker.EndAs); Result.Classes holds their measurements.
	Classes int
	// ClassOps, if set (one per class), names the operation each class
	// belongs to: the live counts are then kept per operation too
	// (Live.ByOp), and the bytes of a class that reads count as read.
	ClassOps []ClassOp

	// KeepGoing counts a failed task and goes on (object stores, where one
	// failed request says little); otherwise the first error that is not
	// ErrVerify ends the phase.
	KeepGoing bool

	// Setup, if set, readies worker w's state for the phase before the
	// start barrier (buffers, handles); an error ends the phase before it
	// starts.
	Setup func(w *Worker) error
	// Ready, if set, is called once all workers are set up and the
	// collection before the phase is done, just before the clock starts:
	// the barrier a phase shares with other hosts or ranks, so that what
	// each does to get ready (its set-up, its collection) is not part of
	// their common time. When the phase fails before that point, it is
	// called as Run returns; it is called once either way.
	Ready func()
	// Do performs task (0 <= task < Tasks) of the given pass on worker w.
	// It calls w.Begin before each timed operation (and stops when Begin
	// says so) and w.End after it, w.Item when the task is complete, and
	// returns an error when the task failed.
	Do func(w *Worker, task, pass int) error
	// Finish, if set, is worker w's last step once it has no more tasks,
	// inside the phase's time (IOR's fsync at close and mdtest's sync are
	// part of a write phase's time). It is not an operation; it is skipped
	// when the worker failed or the phase was cancelled (its context, or
	// another worker's error).
	Finish func(w *Worker) error
}

// ErrVerify marks data read back that differs from what was written: the
// task failed, and is counted, but the phase goes on.
var ErrVerify = errors.New("data mismatch")

// Limits of a phase's rate: below one operation in 11 days, or above one
// per nanosecond, a rate is a mistake.
const (
	MinRate = 1e-6
	MaxRate = 1e9
)

// Validate checks a phase's settings; its errors name the phase.
func (p *Phase) Validate() error {
	switch {
	case p.Do == nil:
		return errors.New("no operation")
	case p.Tasks <= 0:
		return errors.New("nothing to work on")
	case p.Ops < 0, p.Bytes < 0, p.Duration < 0, p.Warmup < 0, p.Interval < 0:
		return errors.New("limits must not be negative")
	}
	return CheckRate(p.Rate, p.Tasks, p.Ops, p.Duration)
}

// MaxPace is the longest that pacing (an open loop's rate, a replay's
// recorded gaps) may make a run with no duration to end it: a week.
const MaxPace = 7 * 24 * time.Hour

// CheckRate checks an open loop's rate: within [MinRate, MaxRate], and not
// so slow that the phase, with no duration to end it, would run for more
// than a week. A rate of 0 is a closed loop.
func CheckRate(rate float64, tasks int, ops int64, d time.Duration) error {
	switch {
	case rate == 0:
		return nil
	case !(rate >= MinRate && rate <= MaxRate):
		return fmt.Errorf("rate %g per second is not between %g and %g", rate, MinRate, MaxRate)
	}
	n := float64(ops)
	if n == 0 {
		n = float64(tasks)
	}
	if d == 0 && n/rate > MaxPace.Seconds() {
		return fmt.Errorf("at a rate of %g per second, %.0f operations take more than a week; give a duration", rate, n)
	}
	return nil
}

// onePass reports whether the phase does every task once and ends.
func (p *Phase) onePass() bool { return p.Once || p.Ops == 0 && p.Bytes == 0 && p.Duration == 0 }

// Engine runs phases with a fixed set of workers, whose state (histograms,
// buffers the operations keep in Worker.State) lives across phases.
type Engine struct {
	workers []*Worker
	// Live counts the operations of the phase in progress, warm-up
	// included; progress bars and the stats publisher read it. Each
	// worker adds its operations every 64 or 10 ms (and all at its end),
	// not one by one: workers on several CPUs writing the same counters
	// at every operation cost each operation the counters' trips between
	// the CPUs.
	Live    metrics.Live
	current atomic.Pointer[Phase]
	// MaxErrorSamples bounds the error messages kept per phase.
	MaxErrorSamples int
	seed            uint64
}

// New makes an engine with n workers.
func New(n int) *Engine {
	e := &Engine{MaxErrorSamples: 5}
	for i := range n {
		e.workers = append(e.workers, newWorker(e, i))
	}
	return e
}

// Workers returns the engine's workers, for operations that keep state in
// them between phases.
func (e *Engine) Workers() []*Worker { return e.workers }

// emptyResult is the result of phase p before any measurement is merged
// into it.
func (e *Engine) emptyResult(p *Phase) *Result {
	return &Result{Name: p.Name, Title: p.Title, Workers: len(e.workers), Hist: metrics.NewHistogram()}
}

// failed is the result of phase p when it fails before its workers start:
// nothing measured, incomplete.
func (e *Engine) failed(p *Phase) *Result {
	res := e.emptyResult(p)
	res.Incomplete = true
	return res
}

// Current returns the phase in progress, or nil.
func (e *Engine) Current() *Phase { return e.current.Load() }

// Run runs one phase with all workers, which start together. A fatal error
// stops the phase and is returned along with what was measured up to then.
// When ctx is cancelled the workers stop before their next operation and
// the result is marked incomplete; Run returns only after every worker has
// returned, so no operation of the phase is left running.
func (e *Engine) Run(ctx context.Context, p Phase) (*Result, error) {
	atGate := func() {}
	if p.Ready != nil {
		atGate = sync.OnceFunc(p.Ready)
		defer atGate()
	}
	// Until the phase ends, its progress line has no measured figures,
	// not those of the phase before.
	e.Live.Measured.Store(0)
	e.Live.MeasuredNs.Store(0)
	if err := p.Validate(); err != nil {
		return e.failed(&p), err
	}
	e.Live.Reset()
	r := &run{e: e, p: &p}
	r.splitOps(&e.Live)
	e.current.Store(&p)
	defer e.current.Store(nil)
	if w := WatcherFrom(ctx); w != nil {
		w.Begin(&p, &e.Live)
		defer w.End(&p, &e.Live)
	}

	r.left.Store(p.Ops)
	r.clk = newClock(&p, len(e.workers))
	g, gctx := errgroup.WithContext(ctx)
	r.clk.cancel = gctx.Done()
	stopWatch := r.watch(gctx)
	defer stopWatch()
	for _, w := range e.workers {
		w.prepare(r)
		if p.Setup != nil {
			if err := p.Setup(w); err != nil {
				return e.failed(&p), err
			}
		}
	}
	// A collection now, not in the phase: what its preparation allocated
	// (targets, the workers' buffers) would start one during it otherwise,
	// whose mark workers take CPU from the operations timed. On 2 CPUs,
	// the cycle that io500's stream buffers started ran 32 ms, 28 ms of
	// CPU, beside an ior-easy-write of 48 ms.
	runtime.GC()
	start := make(chan struct{})
	var ready sync.WaitGroup
	ready.Add(len(e.workers))
	for _, w := range e.workers {
		g.Go(func() error {
			ready.Done()
			<-start
			return w.loop()
		})
	}
	ready.Wait()
	atGate()
	r.clk.t0 = time.Now()
	series := startSeries(e.workers, &p, r.clk, func() { r.early.Store(true); r.stop.Store(true) })
	close(start)
	err := g.Wait()
	series.stop()
	res := r.result(series)
	e.Live.Measured.Store(res.Ops)
	e.Live.MeasuredNs.Store(max(int64(res.Elapsed), 1))
	if err != nil || ctx.Err() != nil {
		res.Incomplete = true
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return res, err
}

// run is the shared state of one phase in progress.
type run struct {
	e     *Engine
	p     *Phase
	clk   *clock
	stop  atomic.Bool
	next  atomic.Int64 // Shared: the next task
	bytes atomic.Int64 // Bytes limit: bytes moved so far, warm-up included
	left  atomic.Int64 // Ops limit: operations not yet begun
	early atomic.Bool  // EndEarly ended the phase
	// classOp is the index in Live.ByOp of each class's operation, and
	// opRead whether an operation's bytes are read (Phase.ClassOps).
	classOp []int
	opRead  []bool
}

// skewed reports whether the workers draw their tasks from a distribution.
func (r *run) skewed() bool { return r.p.Random && !r.p.Shared && !r.p.Skew.IsUniform() }

// take claims one of the phase's operations; false when the Ops limit is
// reached. Workers share the count, so it is exact however the tasks are
// spread over them.
func (r *run) take() bool { return r.p.Ops == 0 || r.left.Add(-1) >= 0 }

// spent reports whether the Ops limit is reached.
func (r *run) spent() bool { return r.p.Ops > 0 && r.left.Load() <= 0 }

// watch sets the stop flag when ctx ends; the returned function ends the
// watch.
func (r *run) watch(ctx context.Context) func() {
	done := make(chan struct{})
	go func() {
		select {
		case <-ctx.Done():
			r.stop.Store(true)
		case <-done:
		}
	}()
	return func() { close(done) }
}

// clock holds the times of a phase.
type clock struct {
	// t0 is the start barrier. Operations are timed as durations since
	// it: time.Since reads the monotonic clock once, where time.Now reads
	// two clocks (costly on some virtual machines).
	t0       time.Time
	measure  time.Duration // the warm-up: operations starting before are not counted
	deadline time.Duration // warm-up + duration; 0 without a time limit
	period   time.Duration // open loop: the time between two operations of one worker
	cancel   <-chan struct{}
}

func newClock(p *Phase, workers int) *clock {
	c := &clock{measure: p.Warmup}
	if p.Duration > 0 {
		c.deadline = p.Warmup + p.Duration
	}
	if p.Rate > 0 {
		// Validate bounds the rate, so the period fits a Duration.
		c.period = time.Duration(math.Max(1, float64(workers)/p.Rate*float64(time.Second)))
	}
	return c
}

// now is the time since the start barrier.
func (c *clock) now() time.Duration { return time.Since(c.t0) }

// at is the time d after the start barrier.
func (c *clock) at(d time.Duration) time.Time { return c.t0.Add(d) }

// result merges the workers' measurements. The measured time runs from the
// end of the warm-up to the last worker's end.
func (r *run) result(s *seriesCollector) *Result {
	res := r.e.emptyResult(r.p)
	if s != nil {
		res.Series = s.samples
	}
	var last time.Duration
	for _, w := range r.e.workers {
		last = max(last, w.end)
		res.Ops += w.ops
		res.Items += w.items
		res.Bytes += w.bytes
		res.Errors += w.errs
		res.Throttled += w.throttled
		res.Missed += w.missed
		res.Hist.Add(w.hist)
		if w.ttfb != nil && w.ttfb.Count() > 0 {
			if res.TTFB == nil {
				res.TTFB = metrics.NewHistogram()
			}
			res.TTFB.Add(w.ttfb)
		}
		for _, m := range w.samples {
			if len(res.Samples) < r.e.MaxErrorSamples {
				res.Samples = append(res.Samples, m)
			}
		}
	}
	mergeClasses(res, r.e.workers, r.p.Classes)
	if r.skewed() {
		var c skew.Counts
		for _, w := range r.e.workers {
			c.Add(w.pick.Take())
		}
		res.Access = append(res.Access, AccessReport(r.p.Skew, r.p.SkewOf, c))
	}
	res.EndedEarly = r.early.Load()
	res.Elapsed = max(last-r.clk.measure, 0)
	if r.clk.period > 0 {
		res.Service = metrics.NewHistogram()
		for _, w := range r.e.workers {
			res.Service.Add(w.svc)
		}
	}
	return res
}
