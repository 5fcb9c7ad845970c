package workload

// The engine's general mode: the workers of a phase share a set of targets
// (files or directories), each owning an equal slice of it, and repeat one
// kind of operation on them until a count, a time limit or one pass over
// their slice is done. It is what workload files and the ad-hoc flags of
// `fsbench bench` (fio- and vdbench-like jobs, metadata phases) run on.
//
// One operation is:
//   - Read, Write, Mixed: one pread or pwrite of BlockSize bytes at an
//     offset of the file, sequential or random (Access). A worker opens a
//     file, does FileSize/BlockSize operations on it (random offsets are a
//     permutation: every block once, as fio and vdbench do), closes it and
//     takes its next file (Select).
//   - Create: create, write FileSize bytes in BlockSize writes, close.
//   - Open: open and close. Stat, Chmod, Utime, Unlink, Mkdir, Rmdir: one
//     system call. Readdir: open a directory, read all its entries, close.
//   - Rename: rename a file to a new name; the worker's next operation
//     renames it back, so the set of names is the same after each pair.
//
// The hot path neither allocates nor locks: per-worker buffers, histograms,
// interval counters (atomics the series collector reads) and a per-worker
// PRNG for random offsets and file selection.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/metrics"
)

// Access is an order: of the offsets within a file, or of the targets a
// worker takes.
type Access int

// The orders.
const (
	Sequential Access = iota
	Random
)

func (a Access) String() string {
	if a == Random {
		return "random"
	}
	return "sequential"
}

var extKindNames = map[Kind]string{
	Mixed: "rw", Create: "create", Open: "open", Mkdir: "mkdir", Rmdir: "rmdir",
	Rename: "rename", Chmod: "chmod", Utime: "utime", Readdir: "readdir",
}

// IsData reports whether one operation of k is a read or write of a block
// (as opposed to one operation per file or directory).
func (k Kind) IsData() bool { return k == Read || k == Write || k == Mixed }

// Targets is the set of files or directories a phase in the general mode
// works on. Worker w of W owns targets [w*N/W, (w+1)*N/W), so no two
// workers ever use one file at the same time (vdbench's rule too).
type Targets struct {
	Paths []string // absolute paths
	IDs   []uint64 // data-pattern identities of the files, as Pattern.FileID
	alt   []string // Rename: the other name of each path, made on first use
}

// NewTargets builds a target set. names are the targets' names relative
// to root; the data written to a file is seeded by its name, so the same
// tree can be reused by a later run with the same seed.
func (e *Engine) NewTargets(root string, names []string) *Targets {
	t := &Targets{Paths: make([]string, len(names)), IDs: make([]uint64, len(names))}
	for i, n := range names {
		t.Paths[i] = root + "/" + n
		t.IDs[i] = e.pattern.FileID(n)
	}
	return t
}

// MaxBlock is the largest transfer size the engine's buffers hold.
func (e *Engine) MaxBlock() int64 { return int64(len(e.workers[0].buf)) }

// Len is the number of targets.
func (t *Targets) Len() int { return len(t.Paths) }

// clock holds the times of a phase in the general mode.
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

func (c *clock) start(t0 time.Time, p *Phase) {
	c.t0 = t0
	c.measure = p.Warmup
	if p.Duration > 0 {
		c.deadline = p.Warmup + p.Duration
	}
}

// now is the time since the start barrier.
func (c *clock) now() time.Duration { return time.Since(c.t0) }

// at is the time d after the start barrier.
func (c *clock) at(d time.Duration) time.Time { return c.t0.Add(d) }

// opsWorker is a worker's state in the general mode.
type opsWorker struct {
	rng     *rand.Rand
	pcg     *rand.PCG
	svc     *metrics.Histogram // open loop: service time
	iv      liveHist           // read by the series collector
	dirents []byte             // readdir buffer
	ts      [2]unix.Timespec   // utime
	perm    perm               // block order of the current file
	files   perm               // file order of a one-pass random selection
	quota   int64              // operations left; -1: no count limit
	next    time.Duration      // open loop: schedule of the next operation, since t0
	timer   *time.Timer        // open loop: waits for the schedule
	end     time.Duration      // when the worker finished, since t0
	phase   uint64             // phases run, to vary the PRNG between phases
}

// prepareOps checks a general-mode phase and readies the workers for it.
func (e *Engine) prepareOps(p *Phase, cancel <-chan struct{}) (*clock, error) {
	switch {
	case p.Targets.Len() == 0:
		return nil, fmt.Errorf("%s: no files to work on", p.Title)
	case p.Kind.IsData() || p.Kind == Create:
		if p.BlockSize <= 0 || p.BlockSize > int64(len(e.workers[0].buf)) {
			return nil, fmt.Errorf("%s: transfer size %d is not in 1..%d", p.Title, p.BlockSize, len(e.workers[0].buf))
		}
		if p.Kind.IsData() && p.FileSize <= 0 {
			return nil, fmt.Errorf("%s: file size must be greater than 0", p.Title)
		}
	case p.Kind < Read || p.Kind > Readdir:
		return nil, fmt.Errorf("%s: unknown phase kind %v", p.Title, p.Kind)
	}
	if p.Kind == Mixed && (p.ReadPct < 0 || p.ReadPct > 100) {
		return nil, fmt.Errorf("%s: read percentage %d is not in 0..100", p.Title, p.ReadPct)
	}
	if p.Kind == Rename && p.Targets.alt == nil {
		p.Targets.alt = make([]string, p.Targets.Len())
		for i, path := range p.Targets.Paths {
			p.Targets.alt[i] = path + ".renamed"
		}
	}
	c := &clock{cancel: cancel}
	if p.Rate > 0 {
		c.period = time.Duration(float64(len(e.workers)) / p.Rate * float64(time.Second))
		if c.period <= 0 {
			c.period = 1
		}
	}
	nw := int64(len(e.workers))
	for _, w := range e.workers {
		if w.x == nil {
			w.x = &opsWorker{
				pcg: rand.NewPCG(0, 0),
				svc: metrics.NewHistogram(),
			}
			w.x.rng = rand.New(w.x.pcg)
		}
		x := w.x
		x.phase++
		x.pcg.Seed(e.cfg.Seed^x.phase*0x9e3779b97f4a7c15, uint64(w.id))
		x.svc.Reset()
		x.iv.reset()
		if p.Kind == Readdir && x.dirents == nil {
			x.dirents = make([]byte, 64<<10)
		}
		x.quota = -1
		if p.Ops > 0 {
			x.quota = p.Ops / nw
			if int64(w.id) < p.Ops%nw {
				x.quota++
			}
		}
		// Spread the workers' schedules over one period.
		x.next = time.Duration(int64(c.period) * int64(w.id) / nw)
	}
	return c, nil
}

// finishOps completes the result of a general-mode phase: the measured
// time runs from the end of the warm-up to the last worker's end.
func (e *Engine) finishOps(res *Result, c *clock, s *seriesCollector) {
	s.stop()
	if s != nil {
		res.Series = s.samples
	}
	var last time.Duration
	for _, w := range e.workers {
		last = max(last, w.x.end)
	}
	res.Elapsed = max(last-c.measure, 0)
	if c.period > 0 {
		res.Service = metrics.NewHistogram()
		for _, w := range e.workers {
			res.Service.Merge(w.x.svc)
		}
	}
}

// runOps is one worker's loop in the general mode.
func (e *Engine) runOps(w *worker, p *Phase, stop *atomic.Bool, c *clock) error {
	x := w.x
	defer func() { x.end = c.now() }()
	n := p.Targets.Len()
	nw := len(e.workers)
	lo, hi := w.id*n/nw, (w.id+1)*n/nw
	own := hi - lo
	if own == 0 || x.quota == 0 {
		return nil
	}
	onePass := p.Ops == 0 && p.Duration == 0
	if onePass && p.Select == Random {
		x.files.init(uint64(own), x.rng)
	}
	for visit := 0; !onePass || visit < own; visit++ {
		var i int
		switch {
		case p.Select == Sequential:
			i = lo + visit%own
		case onePass:
			i = lo + int(x.files.next())
		default:
			i = lo + x.rng.IntN(own)
		}
		var more bool
		var err error
		if p.Kind.IsData() {
			more, err = e.visitFile(w, p, i, stop, c)
		} else {
			more, err = e.visitTarget(w, p, i, stop, c)
		}
		if err != nil {
			w.fail(e, err)
			x.iv.errs.Add(1)
			if errors.Is(err, ErrVerify) {
				continue
			}
			return fmt.Errorf("%s: %w", p.Title, err)
		}
		if !more {
			return nil
		}
	}
	return nil
}

// begin decides whether the worker does one more operation and, in an
// open-loop phase, waits for its scheduled start. It returns the time the
// operation's latency counts from (the schedule in an open loop), the time
// it starts (the same in a closed loop: one clock read), and false when the
// phase is over for this worker.
func (e *Engine) begin(x *opsWorker, stop *atomic.Bool, c *clock) (sched, now time.Duration, ok bool) {
	if stop.Load() || x.quota == 0 {
		return 0, 0, false
	}
	if c.period == 0 {
		now = c.now()
		if c.deadline > 0 && now >= c.deadline {
			return now, now, false
		}
		return now, now, true
	}
	sched = x.next
	x.next += c.period
	if c.deadline > 0 && sched >= c.deadline {
		return sched, sched, false
	}
	// Sleep until shortly before the schedule, then spin: Go's timers
	// fire up to a millisecond late when the process is otherwise idle,
	// and an open loop must not add its own lateness to response times.
	if d := sched - c.now() - spinWindow; d > 0 {
		if x.timer == nil {
			x.timer = time.NewTimer(d)
		} else {
			x.timer.Reset(d)
		}
		select {
		case <-x.timer.C:
		case <-c.cancel:
			x.timer.Stop()
			return sched, sched, false
		}
	}
	for {
		now = c.now()
		if now >= sched {
			return sched, now, true
		}
		if stop.Load() {
			return sched, sched, false
		}
		runtime.Gosched()
	}
}

// spinWindow is how long before an operation's scheduled start an open
// loop stops sleeping and waits on the clock.
const spinWindow = 1500 * time.Microsecond

// record counts one operation that started at t1 (scheduled at sched) and
// ended at t2.
func (e *Engine) record(w *worker, c *clock, sched, t1, t2 time.Duration, n int64) {
	x := w.x
	if x.quota > 0 {
		x.quota--
	}
	svc := t2 - t1
	lat := svc
	if c.period > 0 {
		lat = t2 - sched
	}
	e.Live.Ops.Add(1)
	e.Live.LatencyNs.Add(int64(lat))
	if n > 0 {
		e.Live.Bytes.Add(n)
	}
	if sched < c.measure {
		return // warm-up
	}
	w.ops++
	w.bytes += n
	w.hist.Record(lat)
	if c.period > 0 {
		x.svc.Record(svc)
	}
	x.iv.record(lat, n)
}

// visitFile does the block operations of one visit to file i. It returns
// false when the worker is done with the phase.
func (e *Engine) visitFile(w *worker, p *Phase, i int, stop *atomic.Bool, c *clock) (bool, error) {
	x := w.x
	path, id := p.Targets.Paths[i], p.Targets.IDs[i]
	flags := unix.O_RDONLY
	switch p.Kind {
	case Write:
		flags = unix.O_WRONLY | unix.O_CREAT
	case Mixed:
		flags = unix.O_RDWR | unix.O_CREAT
	}
	fd, err := e.open(w, path, flags, "open")
	if err != nil {
		return false, err
	}
	hintAccess(fd, p.Access)
	blocks := uint64((p.FileSize + p.BlockSize - 1) / p.BlockSize)
	if p.Access == Random {
		x.perm.init(blocks, x.rng)
	}
	wrote := false
	var mismatch error
	for b := uint64(0); b < blocks; b++ {
		blk := b
		if p.Access == Random {
			blk = x.perm.next()
		}
		off := int64(blk) * p.BlockSize
		size := min(p.BlockSize, p.FileSize-off)
		buf := w.buf[:size]
		read := p.Kind == Read || p.Kind == Mixed && x.rng.IntN(100) < p.ReadPct
		if !read {
			// Before the clock starts: making the data is not the
			// storage's time.
			e.pattern.Fill(buf, id, off)
		}
		sched, t1, ok := e.begin(x, stop, c)
		if !ok {
			e.closeVisit(w, fd, path, wrote)
			return false, nil
		}
		wrote = wrote || !read
		var done int
		op := "read"
		if read {
			done, err = preadFull(fd, buf, off)
		} else {
			op = "write"
			done, err = pwriteFull(fd, buf, off)
		}
		t2 := c.now()
		if e.cfg.Tracer != nil {
			e.trace(w.id, op, path, off, size, int64(done), c.at(t1), t2-t1, err)
		}
		if err == io.EOF {
			unix.Close(fd)
			return true, fmt.Errorf("%w: %s ends at %d, want %d bytes", ErrVerify, path, off+int64(done), p.FileSize)
		}
		if err != nil {
			unix.Close(fd)
			return false, &PathError{Op: op, Path: path, Err: err}
		}
		e.record(w, c, sched, t1, t2, size)
		if read && e.cfg.Verify && mismatch == nil {
			exp := w.exp[:size]
			e.pattern.Fill(exp, id, off)
			if !bytes.Equal(buf, exp) {
				mismatch = fmt.Errorf("%w in %s at block offset %d", ErrVerify, path, off)
			}
		}
	}
	if err := e.closeVisit(w, fd, path, wrote); err != nil {
		return false, err
	}
	w.items++
	return true, mismatch
}

// closeVisit ends a visit to a file: fsync (with Config.Fsync, if it was
// written) and close.
func (e *Engine) closeVisit(w *worker, fd int, path string, wrote bool) error {
	if wrote && e.cfg.Fsync {
		t0 := time.Now()
		err := unix.Fsync(fd)
		if e.cfg.Tracer != nil {
			e.trace(w.id, "fsync", path, 0, 0, 0, t0, time.Since(t0), err)
		}
		if err != nil {
			unix.Close(fd)
			return &PathError{Op: "fsync", Path: path, Err: err}
		}
	}
	return e.close(w, fd, path)
}

// visitTarget does one operation (two for Rename) on target i.
func (e *Engine) visitTarget(w *worker, p *Phase, i int, stop *atomic.Bool, c *clock) (bool, error) {
	x := w.x
	path := p.Targets.Paths[i]
	sched, t1, ok := e.begin(x, stop, c)
	if !ok {
		return false, nil
	}
	var n int64
	var err error
	op := p.Kind.String()
	switch p.Kind {
	case Stat:
		var st unix.Stat_t
		err = unix.Stat(path, &st)
	case Unlink:
		err = unix.Unlink(path)
	case Mkdir:
		err = unix.Mkdir(path, 0o755)
	case Rmdir:
		err = unix.Rmdir(path)
	case Chmod:
		mode := uint32(0o644)
		if x.rng.IntN(2) == 0 {
			mode = 0o640
		}
		err = unix.Chmod(path, mode)
	case Utime:
		now := c.at(t1).UnixNano()
		x.ts[0] = unix.NsecToTimespec(now)
		x.ts[1] = x.ts[0]
		err = unix.UtimesNano(path, x.ts[:])
	case Rename:
		err = unix.Rename(path, p.Targets.alt[i])
	case Open:
		var fd int
		if fd, err = e.open(w, path, unix.O_RDONLY, "open"); err == nil {
			err = e.close(w, fd, path)
		}
	case Create:
		n, err = e.createFile(w, p, i)
	case Readdir:
		err = e.readDir(w, path)
	}
	t2 := c.now()
	if e.cfg.Tracer != nil && p.Kind != Open && p.Kind != Create {
		ev := Event{Op: op, Path: path, Start: c.at(t1), Dur: t2 - t1, Err: err}
		if p.Kind == Rename {
			ev.To = p.Targets.alt[i]
		}
		e.cfg.Tracer.Trace(w.id, ev)
	}
	if err != nil {
		if _, ok := err.(*PathError); ok {
			return false, err
		}
		return false, &PathError{Op: op, Path: path, Err: err}
	}
	e.record(w, c, sched, t1, t2, n)
	w.items++
	if p.Kind == Rename {
		// Rename it back at once, whether or not the phase goes on: the
		// targets keep their names between phases. In an open loop the
		// pair has one scheduled start; the second half is timed alone.
		t1 := c.now()
		err := unix.Rename(p.Targets.alt[i], path)
		t2 := c.now()
		if e.cfg.Tracer != nil {
			e.cfg.Tracer.Trace(w.id, Event{Op: "rename", Path: p.Targets.alt[i], To: path, Start: c.at(t1), Dur: t2 - t1, Err: err})
		}
		if err != nil {
			return false, &PathError{Op: "rename", Path: p.Targets.alt[i], Err: err}
		}
		e.record(w, c, t1, t1, t2, 0)
	}
	return true, nil
}

// createFile creates target i, writes FileSize bytes and closes it.
func (e *Engine) createFile(w *worker, p *Phase, i int) (int64, error) {
	path, id := p.Targets.Paths[i], p.Targets.IDs[i]
	fd, err := e.open(w, path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, "create")
	if err != nil {
		return 0, err
	}
	var off int64
	for off < p.FileSize {
		n := min(p.BlockSize, p.FileSize-off)
		buf := w.buf[:n]
		e.pattern.Fill(buf, id, off)
		t0 := time.Now()
		done, err := pwriteFull(fd, buf, off)
		if e.cfg.Tracer != nil {
			e.trace(w.id, "write", path, off, n, int64(done), t0, time.Since(t0), err)
		}
		if err != nil {
			unix.Close(fd)
			return off, &PathError{Op: "write", Path: path, Err: err}
		}
		off += n
	}
	return off, e.closeVisit(w, fd, path, p.FileSize > 0)
}

// perm walks a random permutation of [0, n) without storing it: a full-
// period linear congruential sequence modulo the next power of two m
// (Hull-Dobell: c odd, a = 1 mod 4), scrambled by a bijection of [0, m),
// skipping values of n and above. Every value comes exactly once per m
// steps, and at most half the steps are skipped.
type perm struct {
	n, mask, a, c, x uint64
	shift            uint
}

func (p *perm) init(n uint64, r *rand.Rand) {
	p.n = n
	k := uint(bits.Len64(max(n, 1) - 1))
	p.mask = 1<<k - 1
	p.shift = max(k/2, 1)
	p.a = r.Uint64()<<2 | 1
	p.c = r.Uint64() | 1
	p.x = r.Uint64() & p.mask
}

func (p *perm) next() uint64 {
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
