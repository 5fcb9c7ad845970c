package workload

// The file operations. One timed operation (one latency sample) is:
//   - Read, Write, Mixed: one pread or pwrite of BlockSize bytes at an
//     offset of the file, sequential or random (Access). A worker opens a
//     file, does FileSize/BlockSize operations on it (random offsets are a
//     permutation: every block once, as fio and vdbench do), closes it and
//     takes its next file (Select).
//   - Create: create, write FileSize bytes in BlockSize writes, close; with
//     PerFile off, each write is an operation of its own.
//   - Read with PerFile: open, read the whole file, close.
//   - Open: open and close. Stat, Chmod, Utime, Unlink, Mkdir, Rmdir: one
//     system call. Readdir: open a directory, read all its entries, close.
//   - Rename: rename a file to a new name; the worker renames it back at
//     once, so the set of names is the same after each pair.
//
// The hot path neither allocates nor locks: per-worker buffers and
// histograms, and a per-worker PRNG for random offsets and file selection.

import (
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/sysio"
)

// Event is one file operation, as told to a Tracer.
type Event struct {
	Op     string // create, open, write, read, fsync, close, stat, unlink, mkdir, rmdir, rename, chmod, utime, readdir
	Path   string
	To     string // rename: the new path
	Offset int64
	Size   int64  // bytes asked for
	Done   int64  // bytes transferred (read, write)
	Data   []byte // write: the bytes written, valid only during Trace
	Start  time.Time
	Dur    time.Duration
	Err    error
}

// Tracer receives every file operation of a run, for an access log. Trace
// is called from the worker's goroutine (worker numbers from 0, -1 for the
// run itself) and must not block for long.
type Tracer interface {
	Trace(worker int, ev Event)
}

// WriteTracer is a Tracer told of each write that succeeded whole by a
// call of its own, without an Event: data is what was written at off of
// path, and at is when the write returned. Writes that failed still reach
// Trace. A tracer of every write at 4 KiB (the journal) then costs the
// writer a call with a few words where an Event is twenty.
type WriteTracer interface {
	Tracer
	TraceWrite(worker int, path string, off int64, data []byte, at time.Time)
}

// PathError records an operation, the path it failed on, and why, in the
// manner of fs.PathError, keeping the errno reachable through errors.Is.
type PathError struct {
	Op   string
	Path string
	Err  error
}

func (e *PathError) Error() string { return e.Op + " " + e.Path + ": " + e.Err.Error() }

// Unwrap returns the cause.
func (e *PathError) Unwrap() error { return e.Err }

// op returns the function that does one task of phase p.
func (e *Runner) op(p *FilePhase) func(w *engine.Worker, i, pass int) error {
	switch {
	case p.ringed():
		return func(w *engine.Worker, i, _ int) error { return e.visitRing(w, p, i) }
	case p.Kind.IsData() && !(p.Kind == Read && p.PerFile):
		return func(w *engine.Worker, i, _ int) error { return e.visitFile(w, p, i) }
	case p.Kind == Read:
		return func(w *engine.Worker, i, _ int) error { return e.readWhole(w, p, i) }
	case p.Kind == Create:
		return func(w *engine.Worker, i, _ int) error { return e.create(w, p, i) }
	case p.Kind == Rename:
		return func(w *engine.Worker, i, _ int) error { return e.renamePair(w, p, i) }
	}
	return func(w *engine.Worker, i, _ int) error { return e.meta(w, p, i) }
}

func (e *Runner) trace(w *engine.Worker, op, path string, off, size, done int64, t0 time.Time, d time.Duration, err error) {
	e.cfg.Tracer.Trace(w.ID, Event{Op: op, Path: path, Offset: off, Size: size, Done: done, Start: t0, Dur: d, Err: err})
}

// traceNow is the time now for the tracer's events: zero without a
// tracer, when nothing reads it (a clock read less per system call; two
// clocks on some virtual machines).
func (e *Runner) traceNow() time.Time {
	if e.cfg.Tracer == nil {
		return time.Time{}
	}
	return time.Now()
}

func (e *Runner) open(w *engine.Worker, path string, flags int, op string) (int, error) {
	if e.cfg.Direct {
		flags |= sysio.DirectFlag
	}
	t0 := e.traceNow()
	fd, err := e.openFlags(path, flags)
	if e.cfg.Tracer != nil {
		e.trace(w, op, path, 0, 0, 0, t0, time.Since(t0), err)
	}
	if err != nil {
		return -1, &PathError{Op: op, Path: path, Err: err}
	}
	return fd, nil
}

// openFlags opens path, with O_NOATIME for a read when Config.NoAtime
// asks for it, and plainly when the kernel refuses that (EPERM: not the
// file's owner, no CAP_FOWNER).
func (e *Runner) openFlags(path string, flags int) (int, error) {
	flags |= unix.O_CLOEXEC
	if !e.cfg.NoAtime || sysio.NoAtimeFlag == 0 || flags&(unix.O_WRONLY|unix.O_RDWR|unix.O_CREAT) != 0 {
		return e.beneath.open(e.hold, path, flags, 0o644)
	}
	fd, err := e.beneath.open(e.hold, path, flags|sysio.NoAtimeFlag, 0)
	if err != unix.EPERM {
		return fd, err
	}
	e.PlainOpens.Add(1)
	return e.beneath.open(e.hold, path, flags, 0)
}

// closeFile ends a visit to a file: fsync (with Config.Fsync or the
// phase's Fsync, if it was written) and close.
func (e *Runner) closeFile(w *engine.Worker, fd int, path string, wrote bool) error {
	if wrote && (e.cfg.Fsync || e.current.Load().Fsync) {
		t0 := e.traceNow()
		err := unix.Fsync(fd)
		if e.cfg.Tracer != nil {
			e.trace(w, "fsync", path, 0, 0, 0, t0, time.Since(t0), err)
		}
		if err != nil {
			unix.Close(fd)
			return &PathError{Op: "fsync", Path: path, Err: err}
		}
	}
	t0 := e.traceNow()
	err := sysClose(e.hold, fd)
	if e.cfg.Tracer != nil {
		e.trace(w, "close", path, 0, 0, 0, t0, time.Since(t0), err)
	}
	if err != nil {
		return &PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// timedIO reads or writes buf at off of fd, whole, as the operation begun
// at s, and records it; the trace sees the time the operation took, and
// telling the tracer is not part of it.
func (e *Runner) timedIO(w *engine.Worker, s engine.Start, fd int, path string, buf []byte, off int64, write bool) error {
	t0 := w.Time(s)
	n, err := e.rw(fd, buf, off, write)
	var t1 time.Time
	if err == nil {
		t1 = w.End(s, int64(len(buf)))
		if !write {
			w.CountRead(int64(len(buf)))
		}
	} else {
		t1 = e.traceNow()
	}
	return e.ioDone(w, path, buf, off, write, n, err, t0, t1)
}

// untimedIO reads or writes buf at off of fd, whole, within an operation
// timed as a whole.
func (e *Runner) untimedIO(w *engine.Worker, fd int, path string, buf []byte, off int64, write bool) error {
	t0 := e.traceNow()
	n, err := e.rw(fd, buf, off, write)
	return e.ioDone(w, path, buf, off, write, n, err, t0, e.traceNow())
}

func (e *Runner) rw(fd int, buf []byte, off int64, write bool) (int, error) {
	switch {
	case write:
		return pwriteFull(e.hold, fd, buf, off, e.directAlign())
	case e.cfg.Direct && len(buf)%e.align != 0:
		return e.readTail(fd, buf, off)
	}
	return preadFull(e.hold, fd, buf, off, e.directAlign())
}

// readTail reads the last stretch of a file of its own size (Targets.Sizes)
// under O_DIRECT, whose length is not aligned: the kernel takes aligned
// lengths only, so it asks for the aligned length that covers the stretch
// (the worker's buffers are sized for it) and expects the file to end
// within it.
func (e *Runner) readTail(fd int, buf []byte, off int64) (int, error) {
	n := (len(buf) + e.align - 1) / e.align * e.align
	done, err := preadFull(e.hold, fd, buf[:n], off, e.align)
	if done >= len(buf) && (err == nil || err == io.EOF || errors.Is(err, ErrUnaligned)) {
		return len(buf), nil
	}
	return done, err
}

// ioDone traces a read or write and turns its outcome into an error.
func (e *Runner) ioDone(w *engine.Worker, path string, buf []byte, off int64, write bool, n int, err error, t0, t1 time.Time) error {
	op := "read"
	if write {
		op = "write"
	}
	if e.writes != nil && write && err == nil && n == len(buf) && n > 0 {
		e.writes.TraceWrite(w.ID, path, off, buf, t1)
	} else if e.cfg.Tracer != nil {
		ev := Event{Op: op, Path: path, Offset: off, Size: int64(len(buf)), Done: int64(n), Start: t0, Dur: t1.Sub(t0), Err: err}
		if write {
			ev.Data = buf[:n]
		}
		e.cfg.Tracer.Trace(w.ID, ev)
	}
	switch {
	case err == io.EOF:
		return fmt.Errorf("%w: %s ends at %d, want more bytes", ErrVerify, path, off+int64(n))
	case err != nil:
		return &PathError{Op: op, Path: path, Err: err}
	}
	return nil
}

// directAlign is the alignment a short transfer must keep under O_DIRECT.
func (e *Runner) directAlign() int {
	if e.cfg.Direct {
		return e.align
	}
	return 1
}

// content is the data of file id at off, len(buf) bytes long: the start
// of the one buffer with Config.Repeat, a block of the worker's stream when
// the file is written as one and the worker has a stream (nothing to make
// either way), else made in buf.
func (e *Runner) content(f *files, buf []byte, id uint64, off int64) []byte {
	if e.cfg.Repeat {
		return e.repeat[:len(buf)]
	}
	if b, ok := f.stream.Block(id, off, len(buf)); ok {
		return b
	}
	e.pattern.Fill(buf, id, off)
	return buf
}

// verify checks a block read from file id at off.
func (e *Runner) verify(buf []byte, id uint64, path string, off int64) error {
	if !e.cfg.Verify {
		return nil
	}
	at := off
	if e.cfg.Repeat {
		id, at = e.repeatID, 0
	}
	if bad := e.pattern.Check(buf, id, at); bad >= 0 {
		return fmt.Errorf("%w in %s at byte %d", ErrVerify, path, off+int64(bad))
	}
	return nil
}

// visitFile does the block operations of one visit to file i.
func (e *Runner) visitFile(w *engine.Worker, p *FilePhase, i int) error {
	f := w.State.(*files)
	path, id := p.target(i)
	fd, blocks, err := e.openVisit(w, f, p, i, path)
	if err != nil {
		return err
	}
	size := p.size(i)
	wrote := false
	var mismatch error
	for b := uint64(0); b < blocks; b++ {
		blk := b
		if p.Access == Random {
			blk = f.order.next(w.Rand)
		}
		off := int64(blk) * p.BlockSize
		buf := f.buf[:min(p.BlockSize, size-off)]
		read := p.Kind == Read || p.Kind == Mixed && w.Rand.IntN(100) < p.ReadPct
		if !read {
			// Before the clock starts: making the data is not the
			// storage's time.
			buf = e.content(f, buf, id, off)
		}
		s, ok := w.Begin()
		if !ok {
			return e.closeFile(w, fd, path, wrote)
		}
		wrote = wrote || !read
		if err := e.timedIO(w, s, fd, path, buf, off, !read); err != nil {
			unix.Close(fd)
			return err
		}
		if read && mismatch == nil {
			mismatch = e.verify(buf, id, path, off)
		}
	}
	if err := e.closeFile(w, fd, path, wrote); err != nil {
		return err
	}
	if mismatch == nil {
		w.Item()
	}
	return mismatch
}

// openVisit opens path, file i of p, for a visit of its blocks, hinted
// with the phase's access order, and returns the descriptor and the count
// of blocks, their order drawn when the access is random.
func (e *Runner) openVisit(w *engine.Worker, f *files, p *FilePhase, i int, path string) (int, uint64, error) {
	fd, err := e.open(w, path, p.Kind.openFlags(), "open")
	if err != nil {
		return -1, 0, err
	}
	hintAccess(fd, p.Access)
	blocks := uint64((p.size(i) + p.BlockSize - 1) / p.BlockSize)
	if p.Access == Random {
		f.order.init(blocks, w.Rand)
	}
	return fd, blocks, nil
}

// readWhole reads file i from open to close as one timed operation.
func (e *Runner) readWhole(w *engine.Worker, p *FilePhase, i int) error {
	f := w.State.(*files)
	path, id := p.target(i)
	s, ok := w.Begin()
	if !ok {
		return nil
	}
	fd, err := e.open(w, path, unix.O_RDONLY, "open")
	if err != nil {
		return err
	}
	var mismatch error
	size := p.size(i)
	for off := int64(0); off < size; off += p.BlockSize {
		buf := f.buf[:min(p.BlockSize, size-off)]
		if err := e.untimedIO(w, fd, path, buf, off, false); err != nil {
			unix.Close(fd)
			return err
		}
		if mismatch == nil {
			mismatch = e.verify(buf, id, path, off)
		}
	}
	if err := e.closeFile(w, fd, path, false); err != nil {
		return err
	}
	w.End(s, size)
	if mismatch == nil {
		w.Item()
	}
	return mismatch
}

// create creates file i (it must not exist), writes FileSize bytes and
// closes it: one timed operation with PerFile, else one per write. A big
// file's blocks come from the worker's stream (Runner.streams); when a CPU
// is spare, a smaller file's next block is made by a helper while one is
// written.
func (e *Runner) create(w *engine.Worker, p *FilePhase, i int) error {
	f := w.State.(*files)
	path, id := p.target(i)
	var whole engine.Start
	if p.PerFile {
		var ok bool
		if whole, ok = w.Begin(); !ok {
			return nil
		}
	}
	fd, err := e.open(w, path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, "create")
	if err != nil {
		return err
	}
	ahead := e.makeAhead(f, p, id)
	defer ahead.stop()
	buf, next := f.buf, f.spare
	for off := int64(0); off < p.FileSize; {
		n := min(p.BlockSize, p.FileSize-off)
		var data []byte
		if ahead.pending {
			ahead.wait() // next holds this block
			buf, next = next, buf
			data = buf[:n]
		} else {
			data = e.content(f, buf[:n], id, off)
		}
		if ahead.on && off+n < p.FileSize {
			ahead.start(next, off+n) // made while buf is written
		}
		var err error
		if p.PerFile {
			err = e.untimedIO(w, fd, path, data, off, true)
		} else if s, ok := w.Begin(); ok {
			err = e.timedIO(w, s, fd, path, data, off, true)
		} else {
			unix.Close(fd) // unfinished: not an item
			return nil
		}
		if err != nil {
			unix.Close(fd)
			return err
		}
		off += n
	}
	if err := e.closeFile(w, fd, path, p.FileSize > 0); err != nil {
		return err
	}
	if p.PerFile {
		w.End(whole, p.FileSize)
	}
	w.Item()
	return nil
}

// meta does one metadata operation on target i.
func (e *Runner) meta(w *engine.Worker, p *FilePhase, i int) error {
	f := w.State.(*files)
	path := p.Targets.Paths[i]
	s, ok := w.Begin()
	if !ok {
		return nil
	}
	var err error
	switch p.Kind {
	case Stat:
		var st unix.Stat_t
		err = e.beneath.stat(e.hold, path, &st)
	case Unlink:
		err = e.beneath.unlink(e.hold, path)
	case Mkdir:
		err = e.beneath.mkdir(path)
	case Rmdir:
		err = e.beneath.rmdir(path)
	case Chmod:
		mode := uint32(0o644)
		if w.Rand.IntN(2) == 0 {
			mode = 0o640
		}
		err = e.beneath.chmod(path, mode)
	case Utime:
		f.ts[0] = unix.NsecToTimespec(w.Time(s).UnixNano())
		f.ts[1] = f.ts[0]
		err = e.beneath.utime(path, f.ts[:])
	case Open:
		var fd int
		if fd, err = e.open(w, path, unix.O_RDONLY, "open"); err == nil {
			err = e.closeFile(w, fd, path, false)
		}
	case Readdir:
		err = e.readDir(f.dirents, path)
	}
	var t1 time.Time
	if err == nil {
		t1 = w.End(s, 0)
		w.Item()
	} else {
		t1 = e.traceNow()
	}
	if e.cfg.Tracer != nil && p.Kind != Open {
		e.cfg.Tracer.Trace(w.ID, Event{Op: p.Kind.String(), Path: path, Start: w.Time(s), Dur: t1.Sub(w.Time(s)), Err: err})
	}
	if err != nil {
		if _, ok := err.(*PathError); ok {
			return err
		}
		return &PathError{Op: p.Kind.String(), Path: path, Err: err}
	}
	return nil
}

// renamePair renames target i to its other name and back. The pair has one
// scheduled start in an open loop; the second half is timed alone, and is
// not timed at all when the phase's operation count is reached (the names
// are put back all the same, so the count stays exact).
func (e *Runner) renamePair(w *engine.Worker, p *FilePhase, i int) error {
	path, alt := p.Targets.Paths[i], p.Targets.alt[i]
	s, ok := w.Begin()
	if !ok {
		return nil
	}
	if err := e.rename(w, s, true, path, alt); err != nil {
		return err
	}
	w.Item()
	s2, timed := w.Extra()
	return e.rename(w, s2, timed, alt, path)
}

// rename renames from to to as the operation begun at s, recorded if timed.
func (e *Runner) rename(w *engine.Worker, s engine.Start, timed bool, from, to string) error {
	err := e.beneath.rename(from, to)
	var t1 time.Time
	if err == nil && timed {
		t1 = w.End(s, 0)
	} else {
		t1 = e.traceNow()
	}
	if e.cfg.Tracer != nil {
		t0 := w.Time(s)
		e.cfg.Tracer.Trace(w.ID, Event{Op: "rename", Path: from, To: to, Start: t0, Dur: t1.Sub(t0), Err: err})
	}
	if err != nil {
		return &PathError{Op: "rename", Path: from, Err: err}
	}
	return nil
}

// pwriteFull writes all of buf at off, continuing after short writes;
// hold keeps the P (sysPwrite).
func pwriteFull(hold bool, fd int, buf []byte, off int64, align int) (int, error) {
	return ioFull(func(b []byte, o int64) (int, error) { return sysPwrite(hold, fd, b, o) }, buf, off, align, io.ErrShortWrite)
}

// preadFull reads until buf is full or the file ends: network file systems
// may legally return fewer bytes than asked for before the end. It returns
// io.EOF when the file ended before buf was full.
func preadFull(hold bool, fd int, buf []byte, off int64, align int) (int, error) {
	return ioFull(func(b []byte, o int64) (int, error) { return sysPread(hold, fd, b, o) }, buf, off, align, io.EOF)
}

// ErrUnaligned is a short O_DIRECT transfer that stopped at an offset the
// rest cannot be transferred from.
var ErrUnaligned = fmt.Errorf("short transfer left an offset not aligned for O_DIRECT")

// ioFull calls op until buf is done, retrying after EINTR and after short
// transfers; a transfer of zero bytes ends it with atZero. Under O_DIRECT
// (align > 1) a short transfer is continued only from an aligned point:
// the kernel refuses the rest otherwise, so it fails clearly instead.
func ioFull(op func([]byte, int64) (int, error), buf []byte, off int64, align int, atZero error) (int, error) {
	done := 0
	for done < len(buf) {
		if done%align != 0 {
			return done, fmt.Errorf("%w (%d of %d bytes at offset %d, alignment %d)", ErrUnaligned, done, len(buf), off, align)
		}
		n, err := op(buf[done:], off+int64(done))
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return done, err
		}
		if n == 0 {
			return done, atZero
		}
		done += n
	}
	return done, nil
}

// finish is a phase's engine.Phase.Finish: with SyncFS, a worker's
// syncfs of the run's file system once it has no more tasks.
func (e *Runner) finish(p *FilePhase) func(*engine.Worker) error {
	if !p.SyncFS {
		return nil
	}
	return func(w *engine.Worker) error {
		fd, err := unix.Open(e.cfg.Dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return &PathError{Op: "open", Path: e.cfg.Dir, Err: err}
		}
		defer unix.Close(fd)
		t0 := e.traceNow()
		err = syncFS(fd)
		if e.cfg.Tracer != nil {
			e.trace(w, "syncfs", e.cfg.Dir, 0, 0, 0, t0, time.Since(t0), err)
		}
		if err != nil {
			return &PathError{Op: "syncfs", Path: e.cfg.Dir, Err: err}
		}
		return nil
	}
}
