// Package workload is the file side of fsbench's engine: the operations of
// a phase on files and directories (create, read, write, stat, rename,
// readdir, ...), run by package engine's workers. A benchmark such as
// `fsbench bench` is a list of phases, not code of its own.
//
// It writes and removes nothing outside the directory a run gives it, and
// knows nothing of the command line or of object stores.
package workload

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/sysio"
)

// Kind is the operation a phase performs.
type Kind int

// The operations of a phase; ops.go says what one operation of each is.
const (
	Write   Kind = iota // write blocks of an existing or new file
	Read                // read blocks of a file
	Stat                // stat a file
	Unlink              // remove a file
	Mixed               // block reads and writes, ReadPct percent reads
	Create              // create a file (it must not exist), write FileSize bytes, close
	Open                // open and close a file
	Mkdir               // create a directory
	Rmdir               // remove an empty directory
	Rename              // rename a file to a new name, and back (two operations a pair)
	Chmod               // change a file's mode (alternately 0644 and 0640)
	Utime               // set a file's access and modification times to now
	Readdir             // open a directory, read all its entries, close it
)

var kindNames = [...]string{
	Write: "write", Read: "read", Stat: "stat", Unlink: "unlink", Mixed: "rw", Create: "create",
	Open: "open", Mkdir: "mkdir", Rmdir: "rmdir", Rename: "rename", Chmod: "chmod", Utime: "utime", Readdir: "readdir",
}

func (k Kind) String() string {
	if k >= 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// IsData reports whether one operation of k is a read or write of a block
// (as opposed to one operation per file or directory).
func (k Kind) IsData() bool { return k == Read || k == Write || k == Mixed }

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

// FilePhase describes one phase of file operations: the workers perform
// Kind on the Targets, each owning an equal slice of them, until a count, a
// time limit or one pass over their slice is done. Runner.Run turns it into
// the engine.Phase its workers run.
type FilePhase struct {
	Name    string // stable metric name, e.g. "write-big"
	Title   string // table title, e.g. "Write big file"
	Kind    Kind
	Targets *Targets
	// FileSize is the bytes of each file: written by Create, read or
	// written by the data kinds; BlockSize the bytes of each call.
	FileSize  int64
	BlockSize int64
	// PerFile records one latency sample per file (open to close) for
	// Create and Read, instead of one per block.
	PerFile bool
	Access  Access // offsets within a file: Sequential or Random
	Select  Access // order in which a worker takes its targets
	// Skew, if not uniform, draws the random picks of Access and Select
	// from a distribution (zipf, a hot zone, ...): the Result's Access
	// says how they fell.
	Skew    skew.Spec
	ReadPct int // Mixed: percentage of reads
	// Ops limits the phase to this many operations across all workers; 0
	// with no Duration is one pass: every target once (every block once).
	Ops      int64
	Duration time.Duration // time limit, after Warmup
	// Once makes Duration a stonewall: the phase is one pass over the
	// targets, ended early at the Duration.
	Once   bool
	Warmup time.Duration // run this long before measuring
	// Rate makes the phase open-loop: operations are scheduled at this many
	// per second across the workers, and latency is the response time from
	// the scheduled start (Result.Service holds the service time).
	Rate float64
	// Interval, if set, has the phase cut its measurement into intervals
	// (Result.Series) and call OnInterval at the end of each, from a
	// goroutine of its own.
	Interval   time.Duration
	OnInterval func(Sample)
	// Ready, if set, is the phase's barrier with other hosts or ranks:
	// called once, when the workers are set up and the clock is about to
	// start, or as Run returns when the phase failed before that
	// (engine.Phase.Ready).
	Ready func()
	// Shared, if set, has every worker write or read its part of the one
	// target, the phase's only one (see SharedFile); a Duration is then a
	// stonewall that ends the phase's one pass early.
	Shared *SharedFile
	// Fsync fsyncs each file the phase writes before closing it, inside
	// the phase's time (IOR's -e), as Config.Fsync does for every phase.
	Fsync bool
	// SyncFS ends each worker's part of the phase with a syncfs of the
	// run's file system, inside the phase's time (mdtest's -Y, whose sync
	// writes back every file system), so that what the phase made is on
	// the storage when its time ends.
	SyncFS bool
	// IOEngine issues the block reads and writes of Read, Write and Mixed
	// phases: one system call at a time (Sync), or IODepth operations in
	// flight per worker through io_uring (see ring.go).
	IOEngine IOEngine
	IODepth  int
}

// Result and Sample are the engine's measurements.
type (
	Result = engine.Result
	Sample = engine.Sample
)

// ErrVerify marks data read back that differs from what was written.
var ErrVerify = engine.ErrVerify

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
	// NoAtime opens files for reading with O_NOATIME, so that reading data
	// that is not ours leaves its access times alone. The kernel allows it
	// to the file's owner and to a process with CAP_FOWNER; elsewhere the
	// open fails with EPERM and the file is opened plainly instead
	// (Runner.PlainOpens counts those).
	NoAtime bool
	// MaxErrorSamples bounds the error messages kept per phase.
	MaxErrorSamples int
	// Repeat writes every transfer from the start of one buffer, filled
	// once from the pattern, as IOR does by default (IO500's
	// dataPacketType "timestamp"): the writes cost no pass over their data,
	// and storage that deduplicates or compresses across transfers can
	// shrink them. Verify then checks each block read against the start of
	// that buffer, so reads must use the transfers the writes used. Not
	// with the io_uring engine.
	Repeat bool
	// Data is how the content written compresses and repeats (see
	// pattern.Data); the zero Data neither compresses nor repeats.
	Data pattern.Data
}

// Runner runs phases of file operations on package engine's workers (its
// core). Each worker keeps its buffers across phases; a buffer is made the
// first time a phase needs it, so workers that only stat or read hold no
// write-ahead buffer, and made again when a later phase moves more bytes an
// operation. Streams, and buffers for O_DIRECT, sit in huge pages (sysio.HugeArena).
type Runner struct {
	cfg      Config
	pattern  *pattern.Pattern
	core     *engine.Engine
	files    []*files
	maxBlock int64
	align    int
	bufs     sysio.HugeArena // streams and O_DIRECT buffers
	ahead    bool            // blocks are made ahead on a spare CPU
	streams  bool            // big files are written from each worker's stream
	hold     bool            // the phase's workers keep their Ps through file calls (holds)
	beneath  beneath         // the phase's targets' directory, which they resolve beneath
	repeat   []byte          // Config.Repeat's buffer, shared by the workers
	repeatID uint64          // the identity its content is of
	current  atomic.Pointer[FilePhase]
	writes   WriteTracer // Config.Tracer, when it is one
	// Live counts the operations of the phase in progress; progress bars and
	// the stats publisher read it while the phase runs.
	Live *metrics.Live
	// PlainOpens counts the reads opened without O_NOATIME, which
	// Config.NoAtime asked for and the kernel refused (EPERM).
	PlainOpens atomic.Int64
}

// files is a worker's state for file operations.
type files struct {
	buf     []byte          // I/O buffer
	spare   []byte          // second write buffer, when blocks are made ahead
	stream  *pattern.Stream // big files' blocks (Runner.streams)
	dirents []byte          // readdir buffer
	order   blockOrder      // random access's order of blocks
	ts      [2]unix.Timespec
	q       ioQueue // IOUring phases
	warm    byte    // warmCache's sums
}

// NewRunner prepares a runner for phases whose blocks are at most maxBlock
// bytes.
func NewRunner(cfg Config, maxBlock int64) *Runner {
	align := 1
	if cfg.Direct {
		align = max(cfg.Align.Mem, sysio.DefaultAlign)
	}
	core := engine.New(cfg.Workers)
	core.Seed(cfg.Seed)
	if cfg.MaxErrorSamples > 0 {
		core.MaxErrorSamples = cfg.MaxErrorSamples
	}
	e := &Runner{cfg: cfg, pattern: pattern.NewData(cfg.Seed, cfg.Data), core: core, maxBlock: maxBlock, align: align, Live: &core.Live}
	// With fewer workers than CPUs, a CPU would idle while a worker waits
	// for its write: a helper makes the next block then (see create).
	e.ahead = cfg.Workers < runtime.GOMAXPROCS(0) && !cfg.Repeat
	// A stream takes a pass over the data out of every write, which counts
	// most when the CPUs are all busy, but it holds about 5 MiB a worker:
	// up to two workers a CPU have one, and more as long as their streams
	// take no more than a sixteenth of the host's memory; past that they
	// make blocks in their buffer.
	e.streams = useStreams(cfg.Workers, int(maxBlock), runtime.GOMAXPROCS(0), hostMemory()) && !cfg.Repeat
	e.repeatID = e.pattern.ID("repeat")
	e.writes, _ = cfg.Tracer.(WriteTracer)
	for range cfg.Workers {
		e.files = append(e.files, &files{})
	}
	return e
}

// Current returns the phase in progress, or nil.
func (e *Runner) Current() *FilePhase { return e.current.Load() }

// MaxBlock is the largest transfer size the runner's buffers hold.
func (e *Runner) MaxBlock() int64 { return e.maxBlock }

// Run runs one phase with all workers, which start together. A fatal error
// (anything but a verification mismatch) stops the phase and is returned
// along with what was measured up to then. When ctx is cancelled the
// workers stop after their current operation and the result is marked
// incomplete.
func (e *Runner) Run(ctx context.Context, p FilePhase) (*Result, error) {
	if p.Ready != nil {
		// Once, and also when the phase fails before its start.
		p.Ready = sync.OnceFunc(p.Ready)
		defer p.Ready()
	}
	var err error
	if err = e.check(&p); err != nil {
		return &Result{Name: p.Name, Title: p.Title, Workers: e.cfg.Workers, Hist: metrics.NewHistogram(), Incomplete: true}, err
	}
	e.current.Store(&p)
	defer e.current.Store(nil)
	defer e.closeRings()
	defer raiseProcs(e.cfg.Workers)()
	e.hold = holds(e.cfg.Workers, p.Targets.Paths[0])
	defer func() { e.hold = false }()
	if e.beneath, err = openBeneath(&p); err != nil {
		return &Result{Name: p.Name, Title: p.Title, Workers: e.cfg.Workers, Hist: metrics.NewHistogram(), Incomplete: true}, err
	}
	defer e.beneath.close()
	if p.Shared != nil {
		return e.runShared(ctx, &p)
	}
	res, err := e.core.Run(ctx, engine.Phase{
		Name: p.Name, Title: p.Title, Tasks: p.Targets.Len(), Random: p.Select == Random, Skew: p.Skew, SkewOf: "files",
		Ops: p.Ops, Duration: p.Duration, Once: p.Once, Warmup: p.Warmup, Rate: p.Rate,
		Interval: p.Interval, OnInterval: p.OnInterval, Ready: p.Ready,
		Setup:  func(w *engine.Worker) error { return e.setup(w, &p) },
		Do:     e.op(&p),
		Finish: e.finish(&p),
	})
	e.addBlockAccess(res, &p)
	return res, err
}

// maxProcs is the most Ps raiseProcs gives a phase: up to 64 workers get
// one each. Beyond that each P's own caches cost more memory than the
// hand-off costs time (-p 256 peaked 4 to 8 MiB higher with 65 or 33 Ps),
// and GOMAXPROCS is left as it is.
const maxProcs = 65

// raiseProcs lets every worker hold a P of Go's scheduler for the phase
// (GOMAXPROCS at least workers+1) and returns what puts it back. A file
// operation blocks its worker's thread in a system call; with fewer Ps than
// workers, the scheduler hands the P of a blocked thread to another, and
// takes one back when the call returns, for every operation: with 16
// workers on 2 CPUs that hand-off cost 4 KiB O_DIRECT random reads almost
// half their rate (benchmarks/records/fio.md). With a P each, the workers run as
// fio's threads do, scheduled by the kernel alone.
func raiseProcs(workers int) func() {
	prev := runtime.GOMAXPROCS(0)
	want := workers + 1
	if want <= prev || want > maxProcs {
		return func() {}
	}
	runtime.GOMAXPROCS(want)
	return func() { runtime.GOMAXPROCS(prev) }
}

// holds reports whether a phase's workers, on the file system of path,
// keep their Ps through their file system calls (sysOpen and the others):
// when each has a P of its own (raiseProcs), so that a held P idles no
// other goroutine, and the file system is a local one (sysio.LocalFS),
// where a call cannot wait minutes on a server. Held, a call that blocks
// also delays a garbage collection's stop of the world until it returns,
// so on NFS, FUSE and every other file system the calls go through Go's
// usual entry, hand-off and all.
func holds(workers int, path string) bool {
	return runtime.GOMAXPROCS(0) > workers && sysio.LocalFS(filepath.Dir(path))
}

// check validates a phase before it runs.
func (e *Runner) check(p *FilePhase) error {
	switch {
	case p.Targets.Len() == 0:
		return fmt.Errorf("no files to work on")
	case p.Kind < Write || p.Kind > Readdir:
		return fmt.Errorf("unknown phase kind %v", p.Kind)
	case p.Kind.IsData() || p.Kind == Create:
		if p.BlockSize <= 0 || p.BlockSize > e.maxBlock {
			return fmt.Errorf("transfer size %d is not in 1..%d", p.BlockSize, e.maxBlock)
		}
		if p.Kind.IsData() && p.FileSize <= 0 && p.Targets.Sizes == nil && p.Shared == nil {
			return fmt.Errorf("file size must be greater than 0")
		}
	}
	if p.Shared != nil {
		if err := p.Shared.check(p, e.cfg.Workers); err != nil {
			return err
		}
	}
	if p.IODepth < 0 || p.IODepth > MaxIODepth || p.IODepth > 1 && p.IOEngine != IOUring {
		return fmt.Errorf("queue depth %d: want 1..%d, and more than 1 only with the io_uring engine", p.IODepth, MaxIODepth)
	}
	if p.Shared != nil && p.IOEngine == IOUring {
		return fmt.Errorf("a shared file is written and read one call at a time: use the sync engine")
	}
	if e.cfg.Repeat && p.IOEngine == IOUring {
		return fmt.Errorf("repeated transfers are written one call at a time: use the sync engine")
	}
	if p.Kind == Mixed && (p.ReadPct < 0 || p.ReadPct > 100) {
		return fmt.Errorf("read percentage %d is not in 0..100", p.ReadPct)
	}
	if p.Kind == Rename && p.Targets.alt == nil {
		p.Targets.alt = make([]string, p.Targets.Len())
		for i, path := range p.Targets.Paths {
			p.Targets.alt[i] = path + ".renamed"
		}
	}
	return nil
}

// hostMemory is the host's memory (a variable for tests).
var hostMemory = sysio.MemoryBytes

// useStreams reports whether workers writing blocks of at most maxBlock
// bytes, on procs CPUs of a host with memory bytes (0: unknown), each
// have a stream.
func useStreams(workers, maxBlock, procs int, memory int64) bool {
	return workers <= 2*procs || int64(workers)*int64(pattern.StreamLen(maxBlock)) <= memory/16
}

// setup gives worker w the buffers phase p needs, keeping those it holds
// that are large enough. The core calls it for one worker after another,
// so the arena needs no lock.
func (e *Runner) setup(w *engine.Worker, p *FilePhase) error {
	f := e.files[w.ID]
	w.State = f
	f.order.prepare(p)
	writes := p.Kind == Write || p.Kind == Mixed || p.Kind == Create
	// The most bytes one operation moves: a buffer holds that much, so
	// a worker writing 4 KiB files holds 4 KiB, whatever the block size.
	need := p.BlockSize
	if p.FileSize > 0 {
		need = min(need, p.FileSize)
	}
	// The unaligned end of a file read under O_DIRECT is read whole
	// (readTail).
	need = (need + int64(e.align) - 1) / int64(e.align) * int64(e.align)
	if p.Kind.IsData() || p.Kind == Create {
		f.buf = e.buffer(f.buf, need)
	}
	// A block a stream hands out is as aligned in its buffer as its
	// offset is in the file, up to 4 KiB: enough for O_DIRECT up to that.
	stream := (p.FileSize >= pattern.StreamMin || p.Shared != nil && p.Shared.big) && e.align <= 4096
	switch {
	case !writes:
	case e.cfg.Repeat:
		if int64(len(e.repeat)) < need {
			e.repeat = e.buffer(nil, need) // aligned for O_DIRECT, as the workers' buffers
			e.pattern.Fill(e.repeat, e.repeatID, 0)
		}
	case stream && e.streams:
		if f.stream == nil {
			// The kernel copies every block from the stream: huge pages
			// for all of it (aligned for e.align too).
			n := int(e.maxBlock)
			f.stream = e.pattern.NewStream(e.bufs.Buffer(pattern.StreamLen(n), e.align), n)
		}
	case !stream && e.ahead && p.FileSize > p.BlockSize:
		f.spare = e.buffer(f.spare, need)
	}
	if p.Kind == Readdir && f.dirents == nil {
		f.dirents = make([]byte, 64<<10)
	}
	if p.ringed() {
		return e.setupRing(f, p, need)
	}
	return nil
}

// buffer returns b if it holds n bytes, else a new buffer of n bytes: in
// huge pages for O_DIRECT, which moves data straight between them and the
// device (see sysio.HugeArena), in small pages otherwise, where the kernel
// copies and huge pages made no difference. A new buffer's pages are
// mapped here, in the phase's setup (sysio.Touch).
func (e *Runner) buffer(b []byte, n int64) []byte {
	switch {
	case int64(len(b)) >= n:
		return b
	case e.align > 1:
		b = e.bufs.Buffer(int(n), e.align)
	default:
		b = sysio.AlignedBuffer(int(n), e.align)
	}
	sysio.Touch(b)
	return b
}

// Targets is the set of files or directories a phase works on. Worker w
// of W owns targets [w*N/W, (w+1)*N/W), so no two workers ever use one file
// at the same time (vdbench's rule too).
type Targets struct {
	Paths []string // absolute paths
	root  string   // the directory NewTargets put them in
	IDs   []uint64 // data-pattern identities of the files
	// Sizes, if set, are the files' own sizes, which replace the phase's
	// FileSize for Read phases: files that exist already, of any size. The
	// phase's FileSize is then the largest of them (it sizes the buffers).
	Sizes []int64
	alt   []string // Rename: the other name of each path, made on first use
}

// NewTargets builds a target set. names are the targets' names relative
// to root; the data written to a file is seeded by its name, so the same
// tree can be reused by a later run with the same seed.
func (e *Runner) NewTargets(root string, names []string) *Targets {
	t := &Targets{Paths: make([]string, len(names)), IDs: make([]uint64, len(names)), root: root}
	for i, n := range names {
		t.Paths[i] = root + "/" + n
		t.IDs[i] = e.pattern.ID(n)
	}
	return t
}

// target is the path of target i of p and the identity its content is
// written and checked under, which depends on the phase's file size (see
// pattern.Sized).
func (p *FilePhase) target(i int) (string, uint64) {
	return p.Targets.Paths[i], pattern.Sized(p.Targets.IDs[i], p.FileSize)
}

// size is the bytes of target i: its own size when the targets have
// sizes, else the phase's FileSize.
func (p *FilePhase) size(i int) int64 {
	if p.Targets.Sizes != nil {
		return p.Targets.Sizes[i]
	}
	return p.FileSize
}

// Len is the number of targets.
func (t *Targets) Len() int {
	if t == nil {
		return 0
	}
	return len(t.Paths)
}
