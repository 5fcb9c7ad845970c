// Package workload is fsbench's engine: phases of file operations run by N
// workers that start together. A benchmark such as `fsbench bench` is a
// list of phases, not code of its own.
package workload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/sysio"
)

// Kind is the operation a phase performs on each of its files.
type Kind int

// The operations of a phase.
const (
	// Write creates each file (it must not exist) and writes FileSize bytes
	// in BlockSize writes.
	Write Kind = iota
	// Read opens each file and reads it to its end in BlockSize reads.
	Read
	// Stat stats each file.
	Stat
	// Unlink removes each file.
	Unlink
	// The kinds below exist only in the general mode (Phase.Targets set);
	// see ops.go for what one operation of each is.
	Mixed   // block reads and writes in one phase, ReadPct percent reads
	Create  // create a file (it must not exist), write FileSize bytes, close
	Open    // open and close a file
	Mkdir   // create a directory
	Rmdir   // remove an empty directory
	Rename  // rename a file to a new name, or back (two operations a pair)
	Chmod   // change a file's mode (alternately 0644 and 0640)
	Utime   // set a file's access and modification times to now
	Readdir // open a directory, read all its entries, close it
)

func (k Kind) String() string {
	switch k {
	case Write:
		return "write"
	case Read:
		return "read"
	case Stat:
		return "stat"
	case Unlink:
		return "unlink"
	}
	if n, ok := extKindNames[k]; ok {
		return n
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Phase describes one phase: every worker performs Kind on its Files files.
type Phase struct {
	Name      string // stable metric name, e.g. "write-big"
	Title     string // table title, e.g. "Write big file"
	Kind      Kind
	Files     int                        // files per worker
	FileSize  int64                      // bytes per file (Write; Read checks it)
	BlockSize int64                      // bytes per read or write call
	FileName  func(worker, i int) string // file name relative to the run directory
	// PerFile records one latency sample per file (open to close) instead
	// of one per read or write call.
	PerFile bool

	// The fields below select the engine's general mode (ops.go): workers
	// share a set of Targets instead of naming their own files, and a phase
	// may be limited by time or count, use random offsets, mix reads and
	// writes, or run open-loop at a fixed rate. Their zero values keep the
	// per-file loop above, which the default bench uses.
	Targets *Targets
	Access  Access // offsets within a file: Sequential or Random
	Select  Access // order in which a worker takes its targets
	ReadPct int    // Mixed: percentage of reads
	// Ops limits the phase to this many operations across all workers; 0
	// with no Duration is one pass: every target once (every block once).
	Ops      int64
	Duration time.Duration // time limit, after Warmup
	Warmup   time.Duration // run this long before measuring
	// Rate makes the phase open-loop: operations are scheduled at this many
	// per second across the workers, and latency is the response time from
	// the scheduled start (Result.Service holds the service time).
	Rate float64
	// Interval, if set, has the phase cut its measurement into intervals
	// (Result.Series) and call OnInterval at the end of each, from a
	// goroutine of its own.
	Interval   time.Duration
	OnInterval func(Sample)
}

// Config is what stays the same across the phases of a run.
type Config struct {
	Dir     string // the run's own directory; every file lives below it
	Workers int
	Direct  bool // O_DIRECT; buffers aligned to Align
	Align   sysio.Alignment
	Fsync   bool // fsync each written file before close
	Verify  bool // check every byte read against what was written
	Seed    uint64
	Tracer  Tracer // optional: told of every file operation
	// MaxErrorSamples bounds the error messages kept per phase.
	MaxErrorSamples int
}

// Event is one file operation, as told to a Tracer.
type Event struct {
	Op     string // create, open, write, read, fsync, close, stat, unlink, mkdir, rmdir, rename, chmod, utime, readdir
	Path   string
	To     string // rename: the new path
	Offset int64
	Size   int64 // bytes asked for
	Done   int64 // bytes transferred (read, write)
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

// Result is the raw measurement of one phase.
type Result struct {
	Phase      Phase
	Workers    int
	Ops        int64 // latency samples
	Items      int64 // files completed
	Bytes      int64
	Errors     int64
	Elapsed    time.Duration // from the start barrier to the last worker's end
	Hist       *metrics.Histogram
	Incomplete bool
	Samples    []string // the first error messages
	// Service is the service time of each operation (from its actual
	// start) in an open-loop phase, where Hist is the response time (from
	// its scheduled start); nil otherwise.
	Service *metrics.Histogram
	Series  []Sample // per Interval, when the phase asked for it
}

// Engine runs phases. It owns one aligned buffer per worker, reused by
// every phase, so the hot path does not allocate.
type Engine struct {
	cfg     Config
	pattern *Pattern
	workers []*worker
	// Live counts the operations of the phase in progress; progress bars and
	// the stats publisher read it while the phase runs.
	Live    metrics.Live
	current atomic.Pointer[Phase]
}

type worker struct {
	id                      int
	buf                     []byte // I/O buffer
	spare                   []byte // second write buffer, when blocks are made ahead
	exp                     []byte // expected content, for --verify
	hist                    *metrics.Histogram
	ops, items, bytes, errs int64
	samples                 []string
	x                       *opsWorker // state of the general mode, made on first use
}

// New prepares an engine for phases whose blocks are at most maxBlock bytes.
func New(cfg Config, maxBlock int64) *Engine {
	if cfg.MaxErrorSamples == 0 {
		cfg.MaxErrorSamples = 5
	}
	align := 1
	if cfg.Direct {
		align = cfg.Align.Mem
		if align < sysio.DefaultAlign {
			align = sysio.DefaultAlign
		}
	}
	e := &Engine{cfg: cfg, pattern: NewPattern(cfg.Seed)}
	// With fewer workers than CPUs, a CPU would idle while a worker waits
	// for its write: a helper makes the next block then (see writeFile).
	ahead := cfg.Workers < runtime.GOMAXPROCS(0)
	for i := 0; i < cfg.Workers; i++ {
		w := &worker{id: i, buf: sysio.AlignedBuffer(int(maxBlock), align), hist: metrics.NewHistogram()}
		if ahead {
			w.spare = sysio.AlignedBuffer(int(maxBlock), align)
		}
		if cfg.Verify {
			w.exp = make([]byte, maxBlock)
		}
		e.workers = append(e.workers, w)
	}
	return e
}

// Current returns the phase in progress, or nil.
func (e *Engine) Current() *Phase { return e.current.Load() }

// Path returns the absolute path of a file of the run.
func (e *Engine) Path(name string) string { return filepath.Join(e.cfg.Dir, name) }

// ErrVerify marks data read back that differs from what was written.
var ErrVerify = errors.New("data mismatch")

// Run runs one phase with all workers, which start together. A fatal error
// (anything but a verification mismatch) stops the phase and is returned
// along with what was measured up to then. When ctx is cancelled the
// workers stop after their current operation and the result is marked
// incomplete.
func (e *Engine) Run(ctx context.Context, p Phase) (*Result, error) {
	e.Live.Ops.Store(0)
	e.Live.Bytes.Store(0)
	e.Live.Errors.Store(0)
	e.Live.LatencyNs.Store(0)
	e.current.Store(&p)
	defer e.current.Store(nil)

	var stop atomic.Bool
	g, gctx := errgroup.WithContext(ctx)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-gctx.Done():
			stop.Store(true)
		case <-done:
		}
	}()
	start := make(chan struct{})
	var ready sync.WaitGroup
	ready.Add(len(e.workers))
	general := p.Targets != nil
	var clk *clock
	if general {
		var err error
		if clk, err = e.prepareOps(&p, gctx.Done()); err != nil {
			return &Result{Phase: p, Workers: len(e.workers), Hist: metrics.NewHistogram(), Incomplete: true}, err
		}
	}
	for _, w := range e.workers {
		w.reset()
		g.Go(func() error {
			ready.Done()
			<-start
			if general {
				return e.runOps(w, &p, &stop, clk)
			}
			return e.runWorker(w, &p, &stop)
		})
	}
	ready.Wait()
	t0 := time.Now()
	var series *seriesCollector
	if general {
		clk.start(t0, &p)
		series = e.startSeries(&p, clk)
		defer series.stop()
	}
	close(start)
	err := g.Wait()
	elapsed := time.Since(t0)

	res := &Result{Phase: p, Workers: len(e.workers), Elapsed: elapsed, Hist: metrics.NewHistogram()}
	if general {
		e.finishOps(res, clk, series)
	}
	for _, w := range e.workers {
		res.Ops += w.ops
		res.Items += w.items
		res.Bytes += w.bytes
		res.Errors += w.errs
		res.Hist.Merge(w.hist)
		for _, s := range w.samples {
			if len(res.Samples) < e.cfg.MaxErrorSamples {
				res.Samples = append(res.Samples, s)
			}
		}
	}
	if err != nil || ctx.Err() != nil {
		res.Incomplete = true
	}
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	return res, err
}

func (w *worker) reset() {
	w.hist.Reset()
	w.ops, w.items, w.bytes, w.errs = 0, 0, 0, 0
	w.samples = w.samples[:0]
}

func (w *worker) fail(e *Engine, err error) {
	w.errs++
	e.Live.Errors.Add(1)
	if len(w.samples) < e.cfg.MaxErrorSamples {
		w.samples = append(w.samples, err.Error())
	}
}

func (e *Engine) runWorker(w *worker, p *Phase, stop *atomic.Bool) error {
	for i := 0; i < p.Files; i++ {
		if stop.Load() {
			return nil
		}
		name := p.FileName(w.id, i)
		path := e.Path(name)
		var err error
		switch p.Kind {
		case Write:
			err = e.writeFile(w, p, name, path, stop)
		case Read:
			err = e.readFile(w, p, name, path, stop)
		case Stat:
			err = e.statFile(w, path)
		case Unlink:
			err = e.unlinkFile(w, path)
		default:
			err = fmt.Errorf("unknown phase kind %v", p.Kind)
		}
		if err != nil {
			if errors.Is(err, ErrVerify) {
				w.fail(e, err)
				continue
			}
			w.fail(e, err)
			return fmt.Errorf("%s: %w", p.Title, err)
		}
		w.items++
	}
	return nil
}

func (e *Engine) trace(w int, op, path string, off, size, done int64, t0 time.Time, d time.Duration, err error) {
	e.cfg.Tracer.Trace(w, Event{Op: op, Path: path, Offset: off, Size: size, Done: done, Start: t0, Dur: d, Err: err})
}

func (e *Engine) open(w *worker, path string, flags int, op string) (int, error) {
	if e.cfg.Direct {
		flags |= sysio.DirectFlag
	}
	t0 := time.Now()
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, 0o644)
	if e.cfg.Tracer != nil {
		e.trace(w.id, op, path, 0, 0, 0, t0, time.Since(t0), err)
	}
	if err != nil {
		return -1, &PathError{Op: op, Path: path, Err: err}
	}
	return fd, nil
}

func (e *Engine) close(w *worker, fd int, path string) error {
	t0 := time.Now()
	err := unix.Close(fd)
	if e.cfg.Tracer != nil {
		e.trace(w.id, "close", path, 0, 0, 0, t0, time.Since(t0), err)
	}
	if err != nil {
		return &PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

func (e *Engine) writeFile(w *worker, p *Phase, name, path string, stop *atomic.Bool) error {
	tf := time.Now()
	fd, err := e.open(w, path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, "create")
	if err != nil {
		return err
	}
	id := e.pattern.FileID(name)
	ahead := e.makeAhead(w, p, id)
	defer ahead.stop()
	buf, next := w.buf, w.spare
	var off int64
	for off < p.FileSize {
		if stop.Load() {
			unix.Close(fd)
			return nil
		}
		n := min(p.BlockSize, p.FileSize-off)
		if ahead.pending {
			ahead.wait() // next holds this block
			buf, next = next, buf
		} else {
			e.pattern.Fill(buf[:n], id, off)
		}
		if ahead.on && off+n < p.FileSize {
			ahead.start(next, off+n) // made while buf is written
		}
		blk := buf[:n]
		t0 := time.Now()
		done, err := pwriteFull(fd, blk, off)
		d := time.Since(t0)
		if e.cfg.Tracer != nil {
			e.trace(w.id, "write", path, off, n, int64(done), t0, d, err)
		}
		if err != nil {
			unix.Close(fd)
			return &PathError{Op: "write", Path: path, Err: err}
		}
		off += n
		w.bytes += n
		e.Live.Bytes.Add(n)
		if !p.PerFile {
			e.count(w, d)
		}
	}
	if e.cfg.Fsync {
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
	if err := e.close(w, fd, path); err != nil {
		return err
	}
	if p.PerFile {
		d := time.Since(tf)
		e.count(w, d)
	}
	return nil
}

// ahead makes the next block of a file on a helper goroutine while the
// worker writes the current one, so that making data overlaps the I/O when
// a CPU is spare. Only one block is ever in the making; the helper touches
// a buffer only between start and wait, and stop waits for it, so the
// worker's buffers are its own again when the file is done.
type ahead struct {
	on      bool
	pending bool
	jobs    chan aheadJob
	ready   chan struct{}
}

type aheadJob struct {
	buf []byte
	off int64
}

func (e *Engine) makeAhead(w *worker, p *Phase, id uint64) *ahead {
	a := &ahead{}
	if w.spare == nil || p.FileSize <= p.BlockSize {
		return a
	}
	a.on = true
	a.jobs, a.ready = make(chan aheadJob, 1), make(chan struct{}, 1)
	go func() {
		for j := range a.jobs {
			e.pattern.Fill(j.buf[:min(p.BlockSize, p.FileSize-j.off)], id, j.off)
			a.ready <- struct{}{}
		}
	}()
	return a
}

func (a *ahead) start(buf []byte, off int64) {
	a.jobs <- aheadJob{buf, off}
	a.pending = true
}

func (a *ahead) wait() {
	<-a.ready
	a.pending = false
}

func (a *ahead) stop() {
	if !a.on {
		return
	}
	if a.pending {
		a.wait()
	}
	close(a.jobs)
}

func (e *Engine) readFile(w *worker, p *Phase, name, path string, stop *atomic.Bool) error {
	tf := time.Now()
	fd, err := e.open(w, path, unix.O_RDONLY, "open")
	if err != nil {
		return err
	}
	id := e.pattern.FileID(name)
	var off int64
	var mismatch error
	for {
		if stop.Load() {
			unix.Close(fd)
			return nil
		}
		want := p.BlockSize
		if p.FileSize > 0 {
			want = min(p.BlockSize, p.FileSize-off)
			if want == 0 {
				break
			}
		}
		buf := w.buf[:want]
		t0 := time.Now()
		n, err := preadFull(fd, buf, off)
		d := time.Since(t0)
		if e.cfg.Tracer != nil {
			e.trace(w.id, "read", path, off, want, int64(n), t0, d, err)
		}
		if err != nil && err != io.EOF {
			unix.Close(fd)
			return &PathError{Op: "read", Path: path, Err: err}
		}
		if n > 0 {
			if e.cfg.Verify && mismatch == nil {
				exp := w.exp[:n]
				e.pattern.Fill(exp, id, off)
				if !bytes.Equal(buf[:n], exp) {
					mismatch = fmt.Errorf("%w in %s at block offset %d", ErrVerify, path, off)
				}
			}
			off += int64(n)
			w.bytes += int64(n)
			e.Live.Bytes.Add(int64(n))
			if !p.PerFile {
				e.count(w, d)
			}
		}
		if err == io.EOF || p.FileSize == 0 && n < len(buf) {
			break
		}
	}
	if err := e.close(w, fd, path); err != nil {
		return err
	}
	if p.PerFile {
		d := time.Since(tf)
		e.count(w, d)
	}
	if p.FileSize > 0 && off != p.FileSize {
		return fmt.Errorf("%w: %s is %d bytes, want %d", ErrVerify, path, off, p.FileSize)
	}
	return mismatch
}

func (e *Engine) statFile(w *worker, path string) error {
	return e.metaOp(w, "stat", path, func(p string) error {
		var st unix.Stat_t
		return unix.Stat(p, &st)
	})
}

func (e *Engine) unlinkFile(w *worker, path string) error {
	return e.metaOp(w, "unlink", path, unix.Unlink)
}

// metaOp times one metadata operation on path.
func (e *Engine) metaOp(w *worker, op, path string, fn func(string) error) error {
	t0 := time.Now()
	err := fn(path)
	d := time.Since(t0)
	if e.cfg.Tracer != nil {
		e.trace(w.id, op, path, 0, 0, 0, t0, d, err)
	}
	if err != nil {
		return &PathError{Op: op, Path: path, Err: err}
	}
	e.count(w, d)
	return nil
}

// count records one timed operation of worker w.
func (e *Engine) count(w *worker, d time.Duration) {
	w.ops++
	w.hist.Record(d)
	e.Live.Ops.Add(1)
	e.Live.LatencyNs.Add(int64(d))
}

// pwriteFull writes all of buf at off, continuing after short writes.
func pwriteFull(fd int, buf []byte, off int64) (int, error) {
	return ioFull(func(b []byte, o int64) (int, error) { return unix.Pwrite(fd, b, o) }, buf, off, io.ErrShortWrite)
}

// preadFull reads until buf is full or the file ends: network file systems
// may legally return fewer bytes than asked for before the end. It returns
// io.EOF when the file ended before buf was full.
func preadFull(fd int, buf []byte, off int64) (int, error) {
	return ioFull(func(b []byte, o int64) (int, error) { return unix.Pread(fd, b, o) }, buf, off, io.EOF)
}

// ioFull calls op until buf is done, retrying after EINTR and after short
// transfers; a transfer of zero bytes ends it with atZero.
func ioFull(op func([]byte, int64) (int, error), buf []byte, off int64, atZero error) (int, error) {
	done := 0
	for done < len(buf) {
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
