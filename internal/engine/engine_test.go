package engine

import (
	"context"
	"errors"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestPermIsPermutation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []uint64{1, 2, 3, 7, 64, 100, 1000, 4097} {
		var p Perm
		p.Init(n, r)
		seen := make([]bool, n)
		for i := uint64(0); i < n; i++ {
			v := p.Next()
			if v >= n || seen[v] {
				t.Fatalf("n=%d: value %d repeated or out of range at step %d", n, v, i)
			}
			seen[v] = true
		}
	}
}

func TestBuckets(t *testing.T) {
	for _, v := range []int64{0, 1, 63, 64, 65, 1000, 123456, 1e9, 3e12, 1 << 50} {
		i := bucketOf(v)
		if i < 0 || i >= nBuckets {
			t.Fatalf("bucketOf(%d) = %d", v, i)
		}
		mid := bucketMid(i)
		want := float64(min(v, maxValue))
		if d := (mid - want) / max(want, 1); d > 0.02 || d < -0.02 {
			t.Errorf("bucketMid(bucketOf(%d)) = %.0f, more than 2%% off", v, mid)
		}
	}
}

// op is a phase's Do that times each task as one operation of n bytes.
func op(n int64) func(w *Worker, task, pass int) error {
	return func(w *Worker, task, pass int) error {
		s, ok := w.Begin()
		if !ok {
			return nil
		}
		w.End(s, n)
		w.Item()
		return nil
	}
}

func TestOnePassDoesEveryTaskOnce(t *testing.T) {
	for _, shared := range []bool{false, true} {
		e := New(3)
		var mu sync.Mutex
		seen := map[int]int{}
		p := Phase{Name: "p", Tasks: 10, Shared: shared, Random: !shared, Do: func(w *Worker, task, pass int) error {
			mu.Lock()
			seen[task]++
			mu.Unlock()
			return op(1)(w, task, pass)
		}}
		r, err := e.Run(context.Background(), p)
		if err != nil || r.Ops != 10 || r.Items != 10 || r.Bytes != 10 || r.Hist.Count() != 10 {
			t.Fatalf("shared=%v: %+v, %v", shared, r, err)
		}
		for i := range 10 {
			if seen[i] != 1 {
				t.Errorf("shared=%v: task %d done %d times", shared, i, seen[i])
			}
		}
	}
}

func TestLimitsAreExact(t *testing.T) {
	e := New(4)
	r, err := e.Run(context.Background(), Phase{Name: "ops", Tasks: 3, Ops: 1001, Do: op(1)})
	if err != nil || r.Ops != 1001 {
		t.Fatalf("ops limit: %d ops, %v", r.Ops, err)
	}
	r, err = e.Run(context.Background(), Phase{Name: "bytes", Tasks: 3, Shared: true, Bytes: 100 << 10, Do: op(4096)})
	if err != nil || r.Bytes < 100<<10 || r.Bytes > 100<<10+4*4096 {
		t.Fatalf("bytes limit: %d bytes, %v", r.Bytes, err)
	}
}

// An open loop lasts its duration and reports the rate it ran at, even
// when its next operation falls after the end (a rate of 0.5/s for 1s).
func TestOpenLoopLastsItsDuration(t *testing.T) {
	e := New(1)
	t0 := time.Now()
	r, err := e.Run(context.Background(), Phase{Name: "slow", Tasks: 1, Rate: 0.5, Duration: time.Second, Do: op(0)})
	took := time.Since(t0)
	if err != nil || r.Ops != 1 {
		t.Fatalf("%d ops, %v", r.Ops, err)
	}
	if took < time.Second || r.Elapsed < time.Second {
		t.Errorf("phase took %v, measured %v: less than its duration", took, r.Elapsed)
	}
	if rate := float64(r.Ops) / r.Elapsed.Seconds(); rate > 1.01 {
		t.Errorf("reported %.1f ops/s at a rate of 0.5/s", rate)
	}
	if p := r.Report(); r.Missed != 0 || p.Shortfall() != "" {
		t.Errorf("a rate kept: %d missed, %q", r.Missed, p.Shortfall())
	}
}

// An open loop asked for more than it can do ends at its deadline, not
// when its schedule reaches it, and counts what it scheduled and never
// began: with 10⁹ per second for 100 ms (after a warm-up or not), done and
// not begun add up to 10⁸.
func TestOpenLoopBehindEndsAtDeadline(t *testing.T) {
	const d = 100 * time.Millisecond
	for _, c := range []struct {
		workers int
		warmup  time.Duration
	}{{1, 0}, {2, 0}, {2, d / 2}} {
		workers := c.workers
		// A guard against a hang only: a hundred times the duration.
		ctx, cancel := context.WithTimeout(context.Background(), 100*d)
		r, err := New(workers).Run(ctx, Phase{Name: "fast", Tasks: 4, Rate: MaxRate, Duration: d, Warmup: c.warmup, Do: op(0)})
		cancel()
		if err != nil || r.Incomplete {
			t.Fatalf("%d workers: the phase did not end by itself: %v (incomplete %v)", workers, err, r.Incomplete)
		}
		// (Behind by more than the warm-up, a worker still does operations
		// scheduled in it when the phase ends, and none counts.)
		if r.Missed == 0 {
			t.Errorf("%d workers: %d ops done, none missed", workers, r.Ops)
		}
		if want := int64(MaxRate * d.Seconds()); r.Ops+r.Missed != want {
			t.Errorf("%d workers: %d done + %d missed = %d; want the %d scheduled", workers, r.Ops, r.Missed, r.Ops+r.Missed, want)
		}
		if p := r.Report(); p.Missed != r.Missed || !strings.Contains(p.Shortfall(), "not begun") {
			t.Errorf("%d workers: report missed %d, shortfall %q", workers, p.Missed, p.Shortfall())
		}
	}
}

func TestAbsurdRatesAreErrors(t *testing.T) {
	for _, rate := range []float64{1e-10, 2e9, -1} {
		_, err := New(1).Run(context.Background(), Phase{Name: "r", Tasks: 1, Rate: rate, Duration: time.Second, Do: op(0)})
		if err == nil || !strings.Contains(err.Error(), "rate") {
			t.Errorf("rate %g: %v", rate, err)
		}
	}
	if err := CheckRate(0.001, 100, 0, 0); err != nil {
		t.Errorf("100 operations at 0.001/s (28 hours): %v", err)
	}
	if err := CheckRate(0.001, 1000, 0, 0); err == nil {
		t.Error("1000 operations at 0.001/s (11 days) with no duration: no error")
	}
}

func TestWarmupIsNotCounted(t *testing.T) {
	e := New(2)
	r, err := e.Run(context.Background(), Phase{Name: "w", Tasks: 2, Warmup: 100 * time.Millisecond, Duration: 100 * time.Millisecond,
		Do: func(w *Worker, task, pass int) error {
			time.Sleep(time.Millisecond)
			return op(1)(w, task, pass)
		}})
	if err != nil || r.Ops == 0 {
		t.Fatal(err)
	}
	if e.Live.Ops.Load() < r.Ops+20 {
		t.Errorf("live ops %d, measured %d: the warm-up was counted", e.Live.Ops.Load(), r.Ops)
	}
	if r.Elapsed > time.Second || r.Elapsed < 90*time.Millisecond {
		t.Errorf("measured %v, want about 100ms after the warm-up", r.Elapsed)
	}
	// The live counters keep the measured figures for the progress line.
	if m, ns := e.Live.Measured.Load(), e.Live.MeasuredNs.Load(); m != r.Ops || ns != int64(r.Elapsed) {
		t.Errorf("live measured %d ops in %v, the result %d in %v", m, time.Duration(ns), r.Ops, r.Elapsed)
	}
	// A phase that fails before its start leaves none of the last one's.
	if _, err := e.Run(context.Background(), Phase{Name: "bad"}); err == nil {
		t.Fatal("a phase without Do ran")
	}
	if e.Live.MeasuredNs.Load() != 0 {
		t.Errorf("a failed phase shows the phase before's time: %v", time.Duration(e.Live.MeasuredNs.Load()))
	}
}

func TestKeepGoingCountsErrors(t *testing.T) {
	fail := func(w *Worker, task, pass int) error {
		if task%2 == 1 {
			return errors.New("odd task failed")
		}
		return op(1)(w, task, pass)
	}
	r, err := New(2).Run(context.Background(), Phase{Name: "k", Tasks: 10, Shared: true, KeepGoing: true, Do: fail})
	if err != nil || r.Ops != 5 || r.Errors != 5 || len(r.Samples) != 5 {
		t.Fatalf("keep going: %+v, %v", r, err)
	}
	r, err = New(1).Run(context.Background(), Phase{Name: "s", Tasks: 10, Do: fail})
	if err == nil || r.Errors != 1 || r.Ops != 1 || !r.Incomplete {
		t.Fatalf("stop at the first error: %+v, %v", r, err)
	}
}

func TestCancelStopsAndWaits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var running atomic.Int32
	var started atomic.Int32
	p := Phase{Name: "c", Tasks: 4, Duration: time.Hour, Do: func(w *Worker, task, pass int) error {
		s, ok := w.Begin()
		if !ok {
			return nil
		}
		running.Add(1)
		if started.Add(1) == 10 {
			cancel()
		}
		time.Sleep(time.Millisecond)
		running.Add(-1)
		w.End(s, 0)
		return nil
	}}
	r, err := New(4).Run(ctx, p)
	if !errors.Is(err, context.Canceled) || !r.Incomplete {
		t.Fatalf("cancelled: %v, incomplete %v", err, r.Incomplete)
	}
	if n := running.Load(); n != 0 {
		t.Errorf("%d operations still running after Run returned", n)
	}
}

func TestSeriesAddsUp(t *testing.T) {
	var got []Sample
	p := Phase{Name: "s", Tasks: 2, Duration: 300 * time.Millisecond, Interval: 100 * time.Millisecond,
		OnInterval: func(s Sample) { got = append(got, s) },
		Do: func(w *Worker, task, pass int) error {
			time.Sleep(100 * time.Microsecond)
			return op(10)(w, task, pass)
		}}
	r, err := New(2).Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	var ops, bytes int64
	for _, s := range r.Series {
		ops += s.Ops
		bytes += s.Bytes
		if s.Ops > 0 && (s.Latency.P99 <= 0 || s.Latency.P50 > s.Latency.P99) {
			t.Errorf("interval percentiles %+v", s.Latency)
		}
	}
	if len(r.Series) < 2 || len(got) != len(r.Series) || ops != r.Ops || bytes != r.Bytes {
		t.Errorf("%d intervals (%d told) add to %d ops %d bytes; total %d ops %d bytes", len(r.Series), len(got), ops, bytes, r.Ops, r.Bytes)
	}
	rp := r.Report()
	if rp.Histogram == "" || len(rp.Series) != len(r.Series) || rp.Latency.Count != r.Ops {
		t.Errorf("report: histogram %q series %d count %d", rp.Histogram, len(rp.Series), rp.Latency.Count)
	}
}

// A phase with Once and a duration ends when its one pass is done, long
// before the duration, and does no task twice; with a deadline that comes
// first, it stops there (the stonewall).
func TestOnceIsOnePassWithADeadline(t *testing.T) {
	e := New(2)
	r, err := e.Run(context.Background(), Phase{Name: "once", Tasks: 7, Once: true, Duration: time.Hour, Do: op(1)})
	if err != nil || r.Ops != 7 || r.Items != 7 {
		t.Fatalf("one pass under a deadline of an hour: %d ops, %d items, %v", r.Ops, r.Items, err)
	}
	// Each task takes at least 2ms: 1000 of them on two workers take a
	// second at least, far past the deadline of 50ms.
	r, err = e.Run(context.Background(), Phase{Name: "wall", Tasks: 1000, Once: true, Duration: 50 * time.Millisecond,
		Do: func(w *Worker, task, pass int) error {
			time.Sleep(2 * time.Millisecond)
			return op(1)(w, task, pass)
		}})
	if err != nil || r.Ops >= 1000 {
		t.Fatalf("stonewalled pass: %d ops, %v", r.Ops, err)
	}
}

// Finish is each worker's last step inside the phase's time: once per
// worker after its last task, whether its tasks ran out or the stonewall
// ended them, before the worker's end; not after a task failed, and not as
// an operation.
func TestFinishIsInsideTheTime(t *testing.T) {
	e := New(3)
	var (
		mu    sync.Mutex
		calls [3]int
		at    [3]time.Duration
		after [3]int64 // the worker's operations when Finish ran
	)
	finish := func(w *Worker) error {
		mu.Lock()
		defer mu.Unlock()
		calls[w.ID]++
		after[w.ID] = w.ops
		at[w.ID] = w.clk.now()
		return nil
	}
	slow := func(w *Worker, task, pass int) error {
		time.Sleep(2 * time.Millisecond)
		return op(1)(w, task, pass)
	}
	for _, p := range []Phase{
		{Name: "pass", Tasks: 9, Do: op(1), Finish: finish},
		{Name: "stonewall", Tasks: 3000, Once: true, Duration: 30 * time.Millisecond, Do: slow, Finish: finish},
	} {
		calls, at, after = [3]int{}, [3]time.Duration{}, [3]int64{}
		r, err := e.Run(context.Background(), p)
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		var ops int64
		for i, w := range e.Workers() {
			ops += after[i]
			if calls[i] != 1 || w.end < at[i] || r.Elapsed < at[i] {
				t.Errorf("%s: worker %d finished %d times, at %v; its end %v, the phase's %v", p.Name, i, calls[i], at[i], w.end, r.Elapsed)
			}
		}
		if ops != r.Ops || p.Name == "pass" && r.Ops != 9 || p.Name == "stonewall" && r.Ops >= 3000 {
			t.Errorf("%s: %d operations, %d before the Finish calls", p.Name, r.Ops, ops)
		}
	}
	failed := errors.New("task failed")
	calls = [3]int{}
	_, err := e.Run(context.Background(), Phase{Name: "fails", Tasks: 3, Finish: finish,
		Do: func(w *Worker, task, pass int) error {
			if w.ID == 1 {
				return failed
			}
			return op(1)(w, task, pass)
		}})
	if !errors.Is(err, failed) || calls[1] != 0 {
		t.Errorf("a failed worker: err %v, finished %d times", err, calls[1])
	}
}

// A phase that fails before its workers start (a bad phase, a failed
// setup) returns its error with a result that names it, is incomplete and
// holds nothing measured.
func TestFailedBeforeStart(t *testing.T) {
	e := New(3)
	setupErr := errors.New("setup failed")
	for _, p := range []Phase{
		{Name: "bad", Title: "Bad", Tasks: 1, Rate: -1, Duration: time.Second, Do: op(0)},
		{Name: "setup", Title: "Setup", Tasks: 1, Ops: 10, Do: op(0), Setup: func(*Worker) error { return setupErr }},
	} {
		r, err := e.Run(context.Background(), p)
		if err == nil || r == nil {
			t.Fatalf("%s: result %v, err %v", p.Name, r, err)
		}
		if p.Setup != nil && !errors.Is(err, setupErr) {
			t.Errorf("%s: err %v, want the setup's", p.Name, err)
		}
		if r.Name != p.Name || r.Title != p.Title || r.Workers != 3 || !r.Incomplete || r.Ops != 0 || r.Hist == nil {
			t.Errorf("%s: result %+v", p.Name, r)
		}
	}
}

// TestCollectsBeforeStart: a phase starts after a garbage collection that
// began once its workers were set up, so no collection its preparation
// called for runs during the operations timed.
func TestCollectsBeforeStart(t *testing.T) {
	e := New(2)
	var setUp, first atomic.Uint32
	var once sync.Once
	_, err := e.Run(context.Background(), Phase{Name: "gc", Tasks: 4,
		Setup: func(w *Worker) error { setUp.Store(gcCycles()); return nil },
		Do: func(w *Worker, task, pass int) error {
			once.Do(func() { first.Store(gcCycles()) })
			return op(1)(w, task, pass)
		}})
	if err != nil {
		t.Fatal(err)
	}
	if first.Load() <= setUp.Load() {
		t.Fatalf("no collection between the workers' setup (cycle %d) and the first operation (cycle %d)", setUp.Load(), first.Load())
	}
}

func gcCycles() uint32 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.NumGC
}

// TestReadyIsTheStart: Ready is called once, after every worker's setup,
// before the first operation and before the clock
// starts, so that what it waits for (other hosts) is not in the phase's
// time; a phase that fails before its start calls it too, once.
func TestReadyIsTheStart(t *testing.T) {
	e := New(3)
	var setUps, calls atomic.Int32
	var atReady atomic.Int32
	var beforeReady atomic.Bool
	var readyEnd time.Time
	res, err := e.Run(context.Background(), Phase{Name: "ready", Tasks: 6, Ops: 6,
		Setup: func(w *Worker) error { setUps.Add(1); return nil },
		Ready: func() {
			calls.Add(1)
			atReady.Store(setUps.Load())
			time.Sleep(30 * time.Millisecond) // another host still getting ready
			readyEnd = time.Now()
		},
		Do: func(w *Worker, task, pass int) error {
			if calls.Load() == 0 {
				beforeReady.Store(true)
			}
			return op(1)(w, task, pass)
		}})
	since := time.Since(readyEnd)
	if err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 1 || atReady.Load() != 3 || beforeReady.Load() {
		t.Fatalf("Ready called %d times, after %d of 3 setups; an operation before it: %v", calls.Load(), atReady.Load(), beforeReady.Load())
	}
	if res.Ops != 6 || res.Elapsed > since {
		t.Fatalf("%d ops in %v, longer than the %v since Ready returned: the clock started before it", res.Ops, res.Elapsed, since)
	}

	calls.Store(0)
	setupErr := errors.New("setup failed")
	for _, p := range []Phase{
		{Name: "bad", Tasks: 1, Rate: -1, Duration: time.Second, Do: op(0)},
		{Name: "setup", Tasks: 1, Ops: 1, Do: op(0), Setup: func(*Worker) error { return setupErr }},
	} {
		p.Ready = func() { calls.Add(1) }
		if _, err := e.Run(context.Background(), p); err == nil {
			t.Fatalf("%s: no error", p.Name)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("Ready called %d times for 2 phases that failed before their start", calls.Load())
	}
}

// A worker passes through Go's scheduler about every yieldEvery, however
// long it runs without blocking in Go: never more often, and not much less.
func TestWorkerYields(t *testing.T) {
	var yields atomic.Int64
	prev := gosched
	gosched = func() { yields.Add(1); runtime.Gosched() }
	defer func() { gosched = prev }()
	// Per worker, when its last operation ended and the longest time from
	// one operation's end to the next's (a machine that stops a worker
	// between its operations lengthens it).
	var last [2]time.Time
	var gap [2]time.Duration
	p := Phase{Name: "spin", Tasks: 2, Duration: 12 * yieldEvery,
		Do: func(w *Worker, _, _ int) error {
			s, ok := w.Begin()
			if !ok {
				return nil
			}
			for t0 := time.Now(); time.Since(t0) < 100*time.Microsecond; {
			}
			end := w.End(s, 0)
			if !last[w.ID].IsZero() {
				gap[w.ID] = max(gap[w.ID], end.Sub(last[w.ID]))
			}
			last[w.ID] = end
			return nil
		}}
	res, err := New(2).Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	n, most := yields.Load(), 2*(int64(res.Elapsed/yieldEvery)+1)
	// Each worker yields at the end of its first operation yieldEvery
	// after the last yield: the yields are at most yieldEvery and the
	// longest gap apart.
	var least int64
	for _, g := range gap {
		least += max(0, int64(res.Elapsed/(yieldEvery+g))-1)
	}
	if n > most || n < least {
		t.Errorf("%d yields in %s by 2 workers (longest gaps %v), want %d..%d", n, res.Elapsed, gap, least, most)
	}
}

// TestSeriesOfAQuickPhase: a phase that ends before its first interval
// does (a stat of a few files under --interval 20ms) still has its one,
// partial interval, holding every operation. The collector once took the
// phase's end for the end of a warm-up when both were ready at once, and
// recorded none.
func TestSeriesOfAQuickPhase(t *testing.T) {
	for i := range 300 {
		r, err := New(2).Run(context.Background(), Phase{Name: "quick", Tasks: 4, Interval: time.Hour, Do: op(1)})
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Series) != 1 || r.Series[0].Ops != r.Ops || r.Ops != 4 {
			t.Fatalf("run %d: %d intervals (%+v) for %d ops", i, len(r.Series), r.Series, r.Ops)
		}
	}
}

// Due moves an operation's start back to when it was due: its latency
// then runs from there (an open loop of the caller's schedule). Here the
// second operation is due when the first began, and is charged both.
func TestDueChargesTheWait(t *testing.T) {
	var startA, endB time.Time
	p := Phase{Name: "due", Tasks: 1, Do: func(w *Worker, _, _ int) error {
		for i := range 2 {
			s, ok := w.Begin()
			if !ok {
				return nil
			}
			if i == 0 {
				startA = w.Time(s)
			} else {
				w.Due(&s, startA)
				w.Due(&s, startA.Add(time.Hour)) // a later time changes nothing
			}
			time.Sleep(2 * time.Millisecond)
			endB = w.End(s, 1)
		}
		return nil
	}}
	r, err := New(1).Run(context.Background(), p)
	if err != nil || r.Hist.Count() != 2 {
		t.Fatalf("%+v, %v", r, err)
	}
	whole := endB.Sub(startA)
	if got := r.Hist.Quantile(100); got < whole*9/10 {
		t.Errorf("the second operation's latency %v, want the %v since the first began", got, whole)
	}
}
