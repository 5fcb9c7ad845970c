package workload

// Block reads and writes at a queue depth: with IOEngine IOUring, a worker
// keeps up to IODepth operations in flight on the file it visits, in one
// io_uring of its own. Each operation is one latency sample, from Begin
// (before it is queued) to its completion being reaped. As fio does
// (iodepth_batch_submit=1), each operation is submitted as soon as it is
// queued, while its slots are free, and then the worker waits for the
// first completion and takes every completion there is: the device gets
// the first new operation without waiting for the rest to be queued
// (submitting them together and waiting in the same call kept fewer in
// flight, see benchmarks/records/fio.md). In an open loop (Rate) an operation is
// submitted when its schedule comes, and the worker waits for completions
// until the next one is due.

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/uring"
)

// IOEngine is how a phase issues its block reads and writes.
type IOEngine int

// The engines.
const (
	Sync    IOEngine = iota // one pread or pwrite at a time per worker
	IOUring                 // io_uring, IODepth operations in flight per worker
)

// MaxIODepth bounds a phase's IODepth.
const MaxIODepth = 4096

func (g IOEngine) String() string {
	if g == IOUring {
		return "io_uring"
	}
	return "sync"
}

// ParseIOEngine reads an engine's name: sync (fio's psync too) or io_uring.
func ParseIOEngine(s string) (IOEngine, error) {
	switch strings.ToLower(s) {
	case "sync", "psync":
		return Sync, nil
	case "io_uring", "iouring", "uring":
		return IOUring, nil
	}
	return Sync, fmt.Errorf("want sync or io_uring, got %q", s)
}

// ringed reports whether phase p's operations go through io_uring: the
// block reads and writes of Read, Write and Mixed phases. Creating files
// and metadata operations are one system call at a time.
func (p *FilePhase) ringed() bool {
	return p.IOEngine == IOUring && p.Kind.IsData() && !(p.Kind == Read && p.PerFile)
}

// depth is the phase's operations in flight per worker.
func (p *FilePhase) depth() int { return max(p.IODepth, 1) }

// ioQueue is a worker's io_uring and the operations it has in flight, one
// slot each: the slot's part of bufs, when it began, what it moves.
type ioQueue struct {
	ring   *uring.Ring
	bufs   []byte
	slot   int // bytes of bufs per slot
	free   []int
	starts []engine.Start
	offs   []int64
	lens   []int
	writes []bool
}

// ProbeIOUring sets up and closes a ring: nil when io_uring is available
// to this process, else an error that says why.
func ProbeIOUring() error {
	r, err := uring.New(1, false)
	if err != nil {
		return err
	}
	return r.Close()
}

// deferDepth is the least queue depth whose rings run their completions
// when the worker waits for them (uring.New's deferred): from it on, on
// tmpfs, 4 KiB random writes ran faster that way at depths 16 to 64, and
// slower at 1 and 4 (benchmarks/records/fio.md, "Buffered writes on tmpfs").
const deferDepth = 16

// setupRing gives worker f a ring and depth slots of need bytes for p.
func (e *Runner) setupRing(f *files, p *FilePhase, need int64) error {
	d := p.depth()
	q := &f.q
	r, err := uring.New(uint32(d), d >= deferDepth)
	if err != nil {
		return err
	}
	q.ring = r
	// A worker with a P of its own (raiseProcs) keeps it while the kernel
	// waits, as fio's thread does (uring.Ring.SetHold).
	r.SetHold(runtime.GOMAXPROCS(0) > e.cfg.Workers)
	q.slot = int(need)
	q.bufs = e.buffer(q.bufs, int64(d)*need)
	r.RegisterBuffer(q.bufs[:d*q.slot])
	q.free = q.free[:0]
	for i := d - 1; i >= 0; i-- {
		q.free = append(q.free, i)
	}
	q.starts = make([]engine.Start, d)
	q.offs = make([]int64, d)
	q.lens = make([]int, d)
	q.writes = make([]bool, d)
	return nil
}

// start makes the worker's thread its ring's one submitter, at the ring's
// first visit (uring.New). The worker's goroutine stays on that thread
// until it ends with the phase, and the thread with it, as Go ends a
// locked goroutine's.
func (q *ioQueue) start() error {
	if !q.ring.NeedsStart() {
		return nil
	}
	runtime.LockOSThread()
	return q.ring.Start()
}

// closeRings closes the workers' rings at the end of a phase.
func (e *Runner) closeRings() {
	for _, f := range e.files {
		if f.q.ring != nil {
			f.q.ring.Close()
			f.q.ring = nil
		}
	}
}

// ringVisit is one visit to a file with operations in flight.
type ringVisit struct {
	e        *Runner
	w        *engine.Worker
	p        *FilePhase
	q        *ioQueue
	fd       int
	path     string
	id       uint64
	size     int64
	order    *blockOrder
	blocks   uint64
	next     uint64 // blocks begun
	inflight int
	over     bool  // Begin said the phase is over
	wrote    bool  // a write was begun
	err      error // the first failed operation's
	mismatch error // the first block that did not verify
}

// visitRing does the block operations of one visit to file i at the
// phase's queue depth.
func (e *Runner) visitRing(w *engine.Worker, p *FilePhase, i int) error {
	f := w.State.(*files)
	path, id := p.target(i)
	fd, blocks, err := e.openVisit(w, f, p, i, path)
	if err != nil {
		return err
	}
	if err := f.q.start(); err != nil {
		unix.Close(fd)
		return &PathError{Op: "io_uring", Path: path, Err: err}
	}
	v := ringVisit{e: e, w: w, p: p, q: &f.q, fd: fd, path: path, id: id, size: p.size(i), blocks: blocks, order: &f.order}
	for {
		v.fill()
		if v.inflight == 0 {
			break
		}
		if err := v.q.ring.Enter(1, 0); err != nil {
			// The ring itself failed: what is in flight cannot be
			// waited for; the phase ends, and its rings with it.
			unix.Close(fd)
			return &PathError{Op: "io_uring", Path: path, Err: err}
		}
		v.reap()
	}
	if v.err != nil {
		unix.Close(fd)
		return v.err
	}
	if err := e.closeFile(w, fd, path, v.wrote); err != nil {
		return err
	}
	if v.mismatch == nil && !v.over {
		w.Item()
	}
	return v.mismatch
}

// openFlags are the flags a visit of a phase of kind k opens its file with.
func (k Kind) openFlags() int {
	switch k {
	case Write:
		return unix.O_WRONLY | unix.O_CREAT
	case Mixed:
		return unix.O_RDWR | unix.O_CREAT
	}
	return unix.O_RDONLY
}

// fill queues operations while a slot is free, blocks are left and the
// phase goes on.
func (v *ringVisit) fill() {
	q, w, p := v.q, v.w, v.p
	for v.err == nil && !v.over && v.next < v.blocks && len(q.free) > 0 {
		if d := w.Until(); d > 0 && v.inflight > 0 {
			// Open loop, ahead of schedule: take completions as they
			// come until the next operation is due.
			if err := q.ring.Enter(1, d); err != nil {
				v.err = &PathError{Op: "io_uring", Path: v.path, Err: err}
				return
			}
			v.reap()
			continue
		}
		blk := v.next
		if p.Access == Random {
			blk = v.order.next(v.w.Rand)
		}
		off := int64(blk) * p.BlockSize
		n := int(min(p.BlockSize, v.size-off))
		read := p.Kind == Read || p.Kind == Mixed && w.Rand.IntN(100) < p.ReadPct
		slot := q.free[len(q.free)-1]
		mem := q.bufs[slot*q.slot : (slot+1)*q.slot]
		if !read {
			// Before the clock starts: making the data is not the
			// storage's time. Made in the slot: a stream's block
			// would change under an operation in flight.
			v.e.pattern.Fill(mem[:n], v.id, off)
		}
		s, ok := w.Begin()
		if !ok {
			v.over = true
			return
		}
		q.free = q.free[:len(q.free)-1]
		v.next++
		v.wrote = v.wrote || !read
		q.starts[slot], q.offs[slot], q.lens[slot], q.writes[slot] = s, off, n, !read
		// The unaligned end of a file under O_DIRECT is asked for whole
		// (see readTail); the slot holds it.
		ask := (n + v.e.align - 1) / v.e.align * v.e.align
		q.ring.Prep(!read, v.fd, mem[:ask], off, uint64(slot))
		v.inflight++
		if p.Rate > 0 || len(q.free) > 0 && v.next < v.blocks {
			// Another comes after it: this one goes now. The last
			// is submitted by the wait that follows, in one call.
			v.err = v.submit()
		}
	}
}

func (v *ringVisit) submit() error {
	if err := v.q.ring.Enter(0, 0); err != nil {
		return &PathError{Op: "io_uring", Path: v.path, Err: err}
	}
	return nil
}

// reap takes the completions there are.
func (v *ringVisit) reap() {
	v.q.ring.Reap(v.complete)
}

// complete records the operation in slot (data) that ended with res: the
// bytes moved, or a negated errno. A short transfer, or one the kernel
// asks to be tried again, is done over with a system call.
func (v *ringVisit) complete(data uint64, res int32) {
	q, w, e := v.q, v.w, v.e
	slot := int(data)
	v.inflight--
	q.free = append(q.free, slot)
	s, off, n, write := q.starts[slot], q.offs[slot], q.lens[slot], q.writes[slot]
	buf := q.bufs[slot*q.slot : slot*q.slot+n]
	done, err := int(res), error(nil)
	switch errno := unix.Errno(-res); {
	case res >= 0 && done >= n:
		done = n
	case res >= 0, errno == unix.EAGAIN, errno == unix.EINTR:
		done, err = e.rw(v.fd, buf, off, write)
	default:
		done, err = 0, errno
	}
	var t1 time.Time
	if err == nil {
		t1 = w.End(s, int64(n))
		if !write {
			w.CountRead(int64(n))
		}
	} else {
		t1 = e.traceNow()
	}
	if err := e.ioDone(w, v.path, buf, off, write, done, err, w.Time(s), t1); err != nil {
		if v.err == nil {
			v.err = err
		}
		return
	}
	if !write && v.mismatch == nil {
		v.mismatch = e.verify(buf, v.id, v.path, off)
	}
}
