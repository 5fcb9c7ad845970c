package replay

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/sysio"
)

// maxBuf bounds a worker's buffer: larger reads and writes are done in
// pieces of this size.
const maxBuf = 16 << 20

// player runs a trace's streams, one per engine worker.
type player struct {
	t       *Trace
	dir     string      // the run directory's name, for messages
	root    *sysio.Root // the run directory: paths of the trace resolve beneath it
	full    []string    // the trace's paths below root
	speed   float64
	due     bool           // latency counts from each operation's time at speed
	fds     []atomic.Int32 // per handle; -1 when not open
	streams []streamState
	pat     *pattern.Pattern
	diffs   differences // the outcomes that differed from the recording's
	bufSize int

	stopped atomic.Bool
	watch   sync.Once
	start   sync.Once
	t0      time.Time
}

// streamState is how far a stream has come, for the streams that wait
// for it.
type streamState struct {
	done atomic.Int32 // operations completed
	mu   sync.Mutex
	cond *sync.Cond
	_    [40]byte
}

func newPlayer(t *Trace, root *sysio.Root, speed float64, pat *pattern.Pattern) *player {
	p := &player{t: t, dir: root.Name(), root: root, speed: speed, fds: make([]atomic.Int32, t.Handles),
		streams: make([]streamState, len(t.Streams)), pat: pat, bufSize: 64 << 10}
	for i := range p.fds {
		p.fds[i].Store(-1)
	}
	p.full = t.paths // "" (the root) or "/a/b", which root takes below itself
	for i := range p.streams {
		p.streams[i].cond = sync.NewCond(&p.streams[i].mu)
	}
	for i := range t.Streams {
		for _, op := range t.Streams[i].Ops {
			if op.Size > int64(p.bufSize) {
				p.bufSize = int(min(op.Size, maxBuf))
			}
		}
	}
	return p
}

// phase is the engine phase that replays the trace.
func (p *player) phase() engine.Phase {
	return engine.Phase{
		Name: "replay", Title: "Replay", Tasks: len(p.t.Streams), Classes: 2 * len(p.t.Classes),
		Setup: func(w *engine.Worker) error {
			w.State = make([]byte, p.bufSize)
			p.watch.Do(func() {
				c := w.Cancelled()
				go func() { <-c; p.stop() }()
			})
			return nil
		},
		Do: func(w *engine.Worker, task, _ int) error { return p.play(w, task) },
	}
}

// stop wakes every stream that waits: the phase is over.
func (p *player) stop() {
	p.stopped.Store(true)
	for i := range p.streams {
		s := &p.streams[i]
		s.mu.Lock()
		s.cond.Broadcast()
		s.mu.Unlock()
	}
}

// play replays stream i on worker w.
func (p *player) play(w *engine.Worker, i int) error {
	p.start.Do(func() { p.t0 = time.Now() })
	ops := p.t.Streams[i].Ops
	st := &p.streams[i]
	buf := w.State.([]byte)
	for k := range ops {
		op := &ops[k]
		x := p.t.extra(op)
		if !p.ready(w, op) {
			return nil
		}
		p.prepare(w, op, x)
		for _, h := range p.t.closes[x.closeLo:x.closeHi] {
			if fd := p.fds[h].Swap(-1); fd >= 0 {
				unix.Close(int(fd))
			}
		}
		if op.clear {
			p.empty(w, op)
		}
		if op.handle >= 0 && p.fds[op.handle].Load() < 0 && usesHandle(op.act) {
			p.openLate(op)
		}
		s, ok := w.Begin()
		if !ok {
			return nil
		}
		if p.due {
			w.Due(&s, p.at(op))
		}
		n, err := p.do(op, buf)
		p.record(w, s, op, n, err)
		st.done.Store(int32(k + 1))
		if op.signal {
			st.mu.Lock()
			st.cond.Broadcast()
			st.mu.Unlock()
		}
	}
	return nil
}

// ready waits for the operation's time (with --speed) and for the
// operations of other streams it depends on; false when the phase ended
// meanwhile.
func (p *player) ready(w *engine.Worker, op *Op) bool {
	if p.speed > 0 && !p.wait(w, p.at(op)) {
		return false
	}
	for _, d := range p.t.deps[op.depLo:op.depHi] {
		s := &p.streams[d.stream]
		if s.done.Load() > d.pos {
			continue
		}
		s.mu.Lock()
		for s.done.Load() <= d.pos && !p.stopped.Load() {
			s.cond.Wait()
		}
		s.mu.Unlock()
		if p.stopped.Load() {
			return false
		}
	}
	return true
}

// spinWindow is how long before an operation's time an open loop (due)
// stops sleeping and waits on the clock: a timer fires late on a busy
// machine, and that lateness would be charged to the storage.
const spinWindow = 1500 * time.Microsecond

// wait waits until at; false when the phase ended meanwhile.
func (p *player) wait(w *engine.Worker, at time.Time) bool {
	d := time.Until(at)
	if p.due {
		d -= spinWindow
	}
	if d > 0 {
		t := time.NewTimer(d)
		select {
		case <-t.C:
		case <-w.Cancelled():
			t.Stop()
			return false
		}
	}
	for p.due && time.Now().Before(at) {
		if p.stopped.Load() {
			return false
		}
		runtime.Gosched()
	}
	return true
}

// at is when op is due: its recorded time at the speed.
func (p *player) at(op *Op) time.Time { return p.t0.Add(time.Duration(float64(op.Start) / p.speed)) }

// record counts the operation in its class: a success, or a failure as
// recorded (the class after it), or, when the outcome differs from the
// recording's, an error.
func (p *player) record(w *engine.Worker, s engine.Start, op *Op, n int64, err error) {
	class := 2 * int(op.class)
	want := op.errno
	switch {
	case err == nil && want == 0:
		w.EndAs(s, n, class)
	case err != nil && want != 0 && (want == errOther || errnoOf(err) == want):
		w.EndAs(s, n, class+1)
	default:
		w.End(s, n)
		name := p.t.Classes[op.class].Name
		p.diffs.add(name + ": " + outcome(op, err))
		w.FailAs(fmt.Errorf("%s %s: %s", name, p.t.paths[op.path], outcome(op, err)), class)
	}
}

func errnoOf(err error) uint16 {
	var e syscall.Errno
	if errors.As(err, &e) {
		return uint16(e)
	}
	return 0
}

// outcome says how an operation's outcome, err, differs from the
// recording's.
func outcome(op *Op, err error) string {
	want := "succeeded"
	if op.errno == errOther {
		want = "failed"
	} else if op.errno != 0 {
		want = "failed with " + syscall.Errno(op.errno).Error()
	}
	got := "succeeded"
	if err != nil {
		got = bare(err).Error() // the path is named already
	}
	return got + ", recorded as " + want
}

// usesHandle reports whether the action works on an open handle.
func usesHandle(a action) bool {
	switch a {
	case actRead, actWrite, actFlush, actClose, actFsync, actReadDir:
		return true
	}
	return false
}

// openLate opens, untimed, a handle the recording opened before it
// started (or whose open it did not replay).
func (p *player) openLate(op *Op) {
	flags := unix.O_RDWR
	if op.act == actReadDir || op.act == actClose && p.isDir(op) {
		flags = unix.O_RDONLY | unix.O_DIRECTORY
	}
	fd, err := p.root.Open(p.full[op.path], flags, 0)
	if err != nil {
		return // the operation fails on the handle and says why
	}
	if !p.fds[op.handle].CompareAndSwap(-1, int32(fd)) {
		unix.Close(fd)
	}
}

func (p *player) isDir(op *Op) bool {
	var st unix.Stat_t
	return p.root.Lstat(p.full[op.path], &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// prepare makes, untimed, what the operation is the first to use that
// the recording never created.
func (p *player) prepare(w *engine.Worker, op *Op, x *opMore) {
	for i := x.prep; i < x.prep+x.prepN; i++ {
		e := p.t.Implied[i]
		if err := p.make(e, w.State.([]byte), w.Cancelled()); err != nil && !errors.Is(err, unix.EEXIST) {
			p.failFirst(w, op, "making what it uses", fmt.Errorf("make %s: %w", p.dir+e.Path, bare(err)), err)
		}
	}
}

// failFirst counts a failure of what op needed done first, untimed (what
// it uses made, a directory emptied), as an error of op's row and among
// the differences from the recording, as op's own failure would be: every
// error of the replay is in the row of an operation.
func (p *player) failFirst(w *engine.Worker, op *Op, what string, err, cause error) {
	p.diffs.add(p.t.Classes[op.class].Name + ": " + what + " first: " + bare(cause).Error())
	w.FailAs(err, 2*int(op.class))
}

// empty removes, untimed, what a directory holds before its rmdir, which
// the recording shows succeeding: the removals of those entries are not
// in the log.
func (p *player) empty(w *engine.Worker, op *Op) {
	if err := p.root.Empty(p.full[op.path]); err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.ENOTDIR) {
		p.failFirst(w, op, "emptying it", err, err) // else the rmdir fails and says why
	}
}

// bare is err without the path an *os.PathError adds, for a message that
// names the path already.
func bare(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
