package engine

import (
	"errors"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/tick"
)

// Worker is one of the engine's workers. Operations use it to time what
// they do (Begin, End), to count (Item, Fail, Throttled) and to keep their
// own state between tasks and phases (State).
type Worker struct {
	ID   int
	Rand *rand.Rand // seeded per phase and worker
	// State belongs to the operations: buffers, handles, whatever a
	// Setup function leaves there for Do.
	State any

	e          *Engine
	r          *run
	clk        *clock
	randSource *rand.PCG // Rand's source, seeded again for each phase

	hist      *metrics.Recorder
	svc       *metrics.Recorder // open loop: service time
	ttfb      *metrics.Recorder // time to first byte, on first use
	intervals *liveHist         // the interval in progress, when the phase has intervals

	ops, items, bytes, errs, throttled int64
	missed                             int64 // open loop: operations scheduled before the deadline, never begun
	samples                            []string
	measured                           bool          // the last operation counted (not warm-up)
	over                               bool          // Begin said the phase is over for this worker
	next                               time.Duration // open loop: schedule of the next operation
	sleeper                            tick.Sleeper  // open loop: waits for the schedule
	end                                time.Duration // when the worker finished, since t0
	order                              Perm          // one-pass random order of its own tasks
	pick                               *skew.Sampler // Phase.Skew's picks of its own tasks
	phases                             uint64        // phases run, to vary the PRNG between phases

	live    metrics.LiveBatch // operations not yet in Engine.Live
	liveAt  time.Duration     // when live was last flushed, since t0
	yieldAt time.Duration     // when the worker last passed through the scheduler, since t0

	classes      []classStats        // per class, when the phase has classes
	opLive       []metrics.LiveBatch // per operation (Live.ByOp), not yet there
	firstByte    time.Duration       // the last operation's time to first byte
	hasFirstByte bool                // firstByte belongs to the operation in progress
}

func newWorker(e *Engine, id int) *Worker {
	w := &Worker{ID: id, e: e, randSource: rand.NewPCG(0, 0), hist: new(metrics.Recorder)}
	w.Rand = rand.New(w.randSource)
	return w
}

// Seed is mixed into every worker's PRNG: runs with one seed make the same
// random choices.
func (e *Engine) Seed(s uint64) { e.seed = s }

// prepare readies the worker for a phase.
func (w *Worker) prepare(r *run) {
	p := r.p
	w.r, w.clk = r, r.clk
	w.phases++
	w.randSource.Seed(w.e.seed^w.phases*0x9e3779b97f4a7c15, uint64(w.ID))
	w.hist.Reset()
	if w.ttfb != nil {
		w.ttfb.Reset()
	}
	w.ops, w.items, w.bytes, w.errs, w.throttled, w.missed = 0, 0, 0, 0, 0, 0
	w.samples = w.samples[:0]
	w.measured, w.over, w.end, w.liveAt, w.yieldAt = false, false, 0, 0, 0
	w.prepareClasses(p.Classes)
	if r.clk.period > 0 {
		if w.svc == nil {
			w.svc = new(metrics.Recorder)
		}
		w.svc.Reset()
	}
	if p.Interval > 0 {
		if w.intervals == nil {
			w.intervals = new(liveHist)
		}
		w.intervals.reset()
	}
	nw := int64(len(w.e.workers))
	// Spread the workers' schedules over one period.
	w.next = time.Duration(int64(r.clk.period) * int64(w.ID) / nw)
	if lo, hi := w.own(); r.skewed() {
		w.pick = skew.NewSampler(p.Skew, hi-lo)
	} else if p.Random && p.onePass() && !p.Shared && hi > lo {
		w.order.Init(uint64(hi-lo), w.Rand)
	}
}

// own is the range of tasks the worker owns (without Shared).
func (w *Worker) own() (lo, hi int) {
	n, nw := w.r.p.Tasks, len(w.e.workers)
	return w.ID * n / nw, (w.ID + 1) * n / nw
}

// loop is the worker's life in a phase: tasks until the limit.
func (w *Worker) loop() error {
	defer func() {
		w.end = w.clk.now()
		w.flushLive(w.end)
	}()
	p := w.r.p
	for visit := 0; ; visit++ {
		if w.over {
			return w.last()
		}
		task, pass, ok := w.task(visit)
		if !ok || w.r.spent() || w.r.stop.Load() {
			return w.last()
		}
		if err := p.Do(w, task, pass); err != nil {
			w.Fail(err)
			if !p.KeepGoing && !errors.Is(err, ErrVerify) {
				return err
			}
		}
	}
}

// last is the worker's Finish, unless the phase was cancelled.
func (w *Worker) last() error {
	select {
	case <-w.clk.cancel:
		return nil
	default:
	}
	if w.r.p.Finish == nil {
		return nil
	}
	if err := w.r.p.Finish(w); err != nil {
		w.Fail(err)
		return err
	}
	return nil
}

// task picks the worker's next task; false when it has none left.
func (w *Worker) task(visit int) (task, pass int, ok bool) {
	p := w.r.p
	if p.Shared {
		n := int(w.r.next.Add(1) - 1)
		if p.onePass() && n >= p.Tasks {
			return 0, 0, false
		}
		return n % p.Tasks, n / p.Tasks, true
	}
	lo, hi := w.own()
	own := hi - lo
	switch {
	case own == 0, p.onePass() && visit >= own:
		return 0, 0, false
	case w.r.skewed():
		return lo + w.pick.Pick(w.Rand), visit / own, true
	case p.Random && p.onePass():
		return lo + int(w.order.Next()), 0, true
	case p.Random:
		return lo + w.Rand.IntN(own), visit / own, true
	}
	return lo + visit%own, visit / own, true
}

// Start is when an operation began: its scheduled start in an open loop
// (where latency counts from the schedule) and its actual start.
type Start struct {
	sched, at time.Duration
}

// Begin decides whether the worker does one more operation and, in an
// open-loop phase, waits for its scheduled start. It returns false when
// the phase is over for this worker (a limit was reached, or it was
// stopped); the operation must then not be done.
func (w *Worker) Begin() (Start, bool) {
	r, c := w.r, w.clk
	// The operations before this one go to Engine.Live now, each whole:
	// its bytes and the part of them read (CountRead, after End).
	if now := c.now(); w.live.Ops() >= liveBatchOps || now-w.liveAt >= liveBatchAge {
		w.flushLive(now)
	}
	if r.stop.Load() || !r.take() || r.p.Bytes > 0 && r.bytes.Load() >= r.p.Bytes {
		return w.quit()
	}
	if c.period == 0 {
		now := c.now()
		if c.deadline > 0 && now >= c.deadline {
			return w.quit()
		}
		return Start{now, now}, true
	}
	sched := w.next
	w.next += c.period
	if c.deadline > 0 && sched >= c.deadline {
		// An open loop lasts its duration, even when its next operation
		// would start after it: the rate it reports is what it ran at.
		w.sleepUntil(c.deadline)
		return w.quit()
	}
	if c.deadline > 0 && c.now() >= c.deadline {
		// Behind its schedule at the end: a rate the target cannot keep
		// up with must not stretch the phase past its duration. What was
		// scheduled and not begun is counted.
		w.missed = w.unbegun(sched)
		return w.quit()
	}
	if !w.sleepUntil(sched - spinWindow) {
		return w.quit()
	}
	// Wait on the clock for the last stretch: Go's timers fire up to a
	// millisecond late when the process is otherwise idle, and an open
	// loop must not add its own lateness to response times.
	for {
		now := c.now()
		if now >= sched {
			return Start{sched, now}, true
		}
		if r.stop.Load() {
			return w.quit()
		}
		runtime.Gosched()
	}
}

// Until is how long until the worker's next operation is due in an open
// loop (0 when it is due, and always in a closed loop): a worker with
// operations in flight waits for their completions that long before
// Begin, so that it records them when they end and not after a sleep.
func (w *Worker) Until() time.Duration {
	if w.clk.period == 0 {
		return 0
	}
	return max(w.next-w.clk.now(), 0)
}

// unbegun counts the operations of the worker's schedule, from sched on,
// that fall in the measured time: after the warm-up, before the deadline.
func (w *Worker) unbegun(sched time.Duration) int64 {
	c := w.clk
	if sched < c.measure {
		sched += (c.measure - sched + c.period - 1) / c.period * c.period
	}
	if sched >= c.deadline {
		return 0
	}
	return int64((c.deadline-sched-1)/c.period) + 1
}

func (w *Worker) quit() (Start, bool) {
	w.over = true
	return Start{}, false
}

// sleepUntil sleeps until d after the start barrier; false if the phase
// was cancelled meanwhile.
func (w *Worker) sleepUntil(d time.Duration) bool {
	wait := d - w.clk.now()
	if wait <= 0 {
		return true
	}
	return w.sleeper.Sleep(wait, w.clk.cancel)
}

// spinWindow is how long before an operation's scheduled start an open
// loop stops sleeping and waits on the clock.
const spinWindow = 1500 * time.Microsecond

// Retime restarts the clock of an operation that is tried again (after
// the store asked to slow down): its time counts from now.
func (w *Worker) Retime(s *Start) {
	s.at = w.clk.now()
	if w.clk.period == 0 {
		s.sched = s.at
	}
}

// Due makes the operation begun at s due at at, when that is earlier
// than it began: its latency then counts from at. It is the open loop of
// a caller's own schedule (a replay's recorded times at a speed): an
// operation that begins late, behind an earlier one that was slow, is
// charged the wait, as an open loop's Rate does.
func (w *Worker) Due(s *Start, at time.Time) {
	if d := max(at.Sub(w.clk.t0), 0); d < s.sched {
		s.sched = d
	}
}

// End records the operation begun at s, which moved n bytes, and returns
// when it ended (for a trace).
func (w *Worker) End(s Start, n int64) time.Time {
	t, _ := w.finish(s, n)
	return t
}

// finish records the operation begun at s and returns when it ended and
// its latency.
func (w *Worker) finish(s Start, n int64) (time.Time, time.Duration) {
	w.hasFirstByte = false
	c := w.clk
	t2 := c.now()
	svc := t2 - s.at
	lat := t2 - s.sched // s.at in a closed loop, unless Due moved it

	w.live.Add(n, lat)
	if t2-w.yieldAt >= yieldEvery {
		w.yieldAt = t2
		gosched()
	}
	if w.r.p.Bytes > 0 {
		w.r.bytes.Add(n)
	}
	w.measured = s.sched >= c.measure
	if w.measured {
		w.ops++
		w.bytes += n
		w.hist.Record(lat)
		if c.period > 0 {
			w.svc.Record(svc)
		}
		if w.intervals != nil {
			w.intervals.record(lat, n)
		}
	}
	return c.at(t2), lat
}

// yieldEvery is how often a worker passes through Go's scheduler. Go's
// monitor thread preempts a goroutine that has run 10 ms without passing
// through it, and a worker whose system calls all return to its own P
// never does: the monitor then takes that P from it in the middle of a
// read, and wakes every 20 us for as long as it keeps taking Ps. With 64
// workers of 4 KiB O_DIRECT reads that thread alone switched 8,700 times a
// second, 0.10 context switches a read beside the workers' 1.03 (fio's
// threads: 1.00); with a yield every 5 ms it sleeps, and a yield of a
// goroutine that has a P to itself costs well under a microsecond. (At
// 2 ms the yields themselves cost 0.1 switches a read.)
const yieldEvery = 5 * time.Millisecond

// gosched is runtime.Gosched; a test counts its calls.
var gosched = runtime.Gosched

// Engine.Live is what a phase in progress shows (progress, live metrics,
// other hosts' heartbeats): a worker adds its operations to it every
// liveBatchOps operations or liveBatchAge, whichever comes first, as it
// begins the next one (so that what an operation counts after End is in
// its batch), and at its end.
const (
	liveBatchOps = 64
	liveBatchAge = 10 * time.Millisecond
)

func (w *Worker) flushLive(now time.Duration) {
	w.e.Live.Flush(&w.live)
	for k := range w.opLive {
		w.e.Live.ByOp[k].Flush(&w.opLive[k])
	}
	w.liveAt = now
}

// CountRead counts n bytes of the operation just ended as read (Live's
// ReadBytes).
func (w *Worker) CountRead(n int64) { w.live.AddRead(n) }

// FirstByte records the time to the first byte of the operation begun at
// s (a download).
func (w *Worker) FirstByte(s Start) {
	if s.sched < w.clk.measure {
		return
	}
	if w.ttfb == nil {
		w.ttfb = new(metrics.Recorder)
	}
	w.firstByte, w.hasFirstByte = w.clk.now()-s.at, true
	w.ttfb.Record(w.firstByte)
}

// Measured reports whether the operation begun at s counts: it did not
// start in the warm-up. Operations that time their own steps (the parts of
// an upload) record them only then.
func (w *Worker) Measured(s Start) bool { return s.sched >= w.clk.measure }

// Time is the wall-clock time of s's actual start.
func (w *Worker) Time(s Start) time.Time { return w.clk.at(s.at) }

// Item counts one completed file or object, unless the operation that
// completed it fell in the warm-up.
func (w *Worker) Item() {
	if w.measured {
		w.items++
	}
}

// Throttled counts one answer asking the client to slow down.
func (w *Worker) Throttled() { w.throttled++ }

// Cancelled is closed when the phase is stopped (Ctrl-C, or another
// worker's fatal error): operations that wait use it.
func (w *Worker) Cancelled() <-chan struct{} { return w.clk.cancel }

// Fail counts one failed task and keeps its message among the first few.
func (w *Worker) Fail(err error) {
	w.errs++
	w.e.Live.Errors.Add(1)
	if w.intervals != nil {
		w.intervals.errs.Add(1)
	}
	if len(w.samples) < w.e.MaxErrorSamples {
		w.samples = append(w.samples, err.Error())
	}
}

// Perm walks a random permutation of [0, n) without storing it: a full-
// period linear congruential sequence modulo the next power of two m
// (Hull-Dobell: c odd, a = 1 mod 4), scrambled by a bijection of [0, m),
// skipping values of n and above. Every value comes exactly once per m
// steps, and at most half the steps are skipped.
type Perm struct {
	n, mask, a, c, x uint64
	shift            uint
}

// Init starts a new permutation of [0, n).
func (p *Perm) Init(n uint64, r *rand.Rand) {
	p.n = n
	k := uint(bits.Len64(max(n, 1) - 1))
	p.mask = 1<<k - 1
	p.shift = max(k/2, 1)
	p.a = r.Uint64()<<2 | 1
	p.c = r.Uint64() | 1
	p.x = r.Uint64() & p.mask
}

// Next returns the permutation's next value.
func (p *Perm) Next() uint64 {
	for {
		p.x = (p.a*p.x + p.c) & p.mask
		y := p.x
		// xorshift and multiplication by an odd number are bijections
		// modulo a power of two; they hide the LCG's regular low bits.
		y ^= y >> p.shift
		y = (y * 0x9e3779b97f4a7c15) & p.mask
		y ^= y >> p.shift
		if y < p.n {
			return y
		}
	}
}

// Extra starts an operation that belongs to the task in progress and is not
// paced on its own (the second half of a rename pair). It returns false,
// and the operation is then done but not timed, when the phase's operation
// count is reached or the phase was stopped.
func (w *Worker) Extra() (Start, bool) {
	now := w.clk.now()
	return Start{now, now}, !w.r.stop.Load() && w.r.take()
}
