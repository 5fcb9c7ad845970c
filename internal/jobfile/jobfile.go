// Package jobfile reads fsbench workload files: a list of named phases
// (what fio calls jobs and vdbench run definitions) with their access
// pattern, transfer size, limits and, optionally, a vdbench-style file tree
// they work on. The file is YAML (JSON, being YAML, works too); every error
// names the file and line.
//
//	name: vdbench-4k
//	threads: 10
//	direct: true
//	tree: {depth: 3, width: 10, files: 30, file_size: 20M}
//	defaults: {xfer_size: 4K, duration: 600s, interval: 2s}
//	phases:
//	  - {name: randwrite, op: write, access: random, select: random}
//	  - {name: randread, op: read, access: random, select: random}
//	  - {name: mixed, op: rw, read_pct: 70, access: random, select: random}
//
// A phase with shared: true works on one file shared by every thread (IOR's
// N-1 mode): {name: hard-write, op: write, shared: true, xfer_size: 47008,
// segments: 1000}.
//
// It runs nothing: it turns a file into a validated job, and an unknown key
// or value is an error, never a default.
package jobfile

import (
	"fmt"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// Job is a workload: settings shared by its phases, an optional tree, and
// the phases in the order they run.
type Job struct {
	Name        string
	Description string
	Threads     int // 0: not given (the command's -p applies)
	Direct      bool
	Fsync       bool
	Verify      bool
	Tree        *Tree
	// Data is how the content written compresses and repeats: as the
	// file's compress_ratio and dedupe_ratio, fio's
	// buffer_compress_percentage and dedupe_percentage or vdbench's
	// compratio and dedupratio set it (bench's flags win over it).
	Data   pattern.Data
	Phases []PhaseSpec
	File   string // where it was read from, for messages
}

// Tree is the file tree the phases of a job work on.
type Tree struct {
	workload.Shape
	// Dir, when set, is where the tree lives, relative to the benchmarked
	// PATH; such a tree is kept after the run and reused by the next one
	// with the same shape. Empty: inside the run's own directory, removed
	// at the end.
	Dir string
	// Format is vdbench's format=: "restart" (reuse a complete tree of
	// the same shape, else rebuild; the default), "yes" (always rebuild)
	// or "no" (the tree must exist, complete, with this shape).
	Format string
	Line   int
}

// Operations of a phase, as written in a workload file.
const (
	OpRead    = "read"
	OpWrite   = "write"
	OpRW      = "rw" // mixed reads and writes, read_pct of them reads
	OpFormat  = "format"
	OpCreate  = "create"
	OpStat    = "stat"
	OpOpen    = "open"
	OpRename  = "rename"
	OpChmod   = "chmod"
	OpUtime   = "utime"
	OpReaddir = "readdir"
	OpUnlink  = "unlink"
	OpMkdir   = "mkdir"
	OpRmdir   = "rmdir"
)

var opKinds = map[string]workload.Kind{
	OpRead: workload.Read, OpWrite: workload.Write, OpRW: workload.Mixed, OpFormat: workload.Create,
	OpCreate: workload.Create, OpStat: workload.Stat, OpOpen: workload.Open, OpRename: workload.Rename,
	OpChmod: workload.Chmod, OpUtime: workload.Utime, OpReaddir: workload.Readdir, OpUnlink: workload.Unlink,
	OpMkdir: workload.Mkdir, OpRmdir: workload.Rmdir,
}

// fio's names for sequential and random reads and writes.
var fioOps = map[string]struct {
	op     string
	access workload.Access
}{
	"randread": {OpRead, workload.Random}, "randwrite": {OpWrite, workload.Random},
	"randrw": {OpRW, workload.Random}, "readwrite": {OpRW, workload.Sequential},
}

// ResolveOp reads an operation name, fio's randread and the like included:
// the operation and the access pattern it implies.
func ResolveOp(s string) (op string, access workload.Access, ok bool) {
	s = strings.ToLower(s)
	if f, ok := fioOps[s]; ok {
		return f.op, f.access, true
	}
	_, ok = opKinds[s]
	return s, workload.Sequential, ok
}

// Ops lists the operations a phase may name.
func Ops() []string {
	return []string{OpRead, OpWrite, OpRW, "randread", "randwrite", "randrw", OpFormat, OpCreate, OpStat, OpOpen,
		OpRename, OpChmod, OpUtime, OpReaddir, OpUnlink, OpMkdir, OpRmdir}
}

// NeedsTree reports whether an operation works only on a file tree
// (depth, width, files): directories and their listing, and format.
func NeedsTree(op string) bool {
	switch op {
	case OpFormat, OpMkdir, OpRmdir, OpReaddir:
		return true
	}
	return false
}

// PhaseSpec is one phase of a job as its file (or the flags of an ad-hoc
// job) states it, before the job run turns it into a workload.FilePhase.
type PhaseSpec struct {
	Name   string
	Op     string // one of the Op constants
	Access workload.Access
	Select workload.Access
	// Distribution draws the random picks of blocks (access: random) and
	// of files (select: random) from a skewed distribution; the zero one
	// is uniform.
	Distribution skew.Spec
	XferSize     int64
	FileSize     int64 // without a tree: size of each thread's files (reads and writes: 1 GiB unless given)
	Files        int   // without a tree: files per thread
	ReadPct      int   // rw: share of reads, percent; -1 when not given
	Ops          int64
	Duration     time.Duration
	// Once makes Duration a stonewall: one pass over the files, ended
	// early when Duration is up (fio's runtime without time_based).
	Once     bool
	Warmup   time.Duration
	Interval time.Duration
	Rate     float64
	// Shared has every thread (of every host) write or read its part of
	// one file, IOR's N-1 layout: Segments segments of one Block a
	// thread, moved in XferSize transfers; a read is of what a write
	// phase wrote, each thread reading another's part.
	Shared   bool
	Block    int64 // 0: XferSize
	Segments int   // 0: as many as fill FileSize (for all threads), at least 1
	// IOEngine and IODepth issue the block reads and writes of read, write
	// and rw phases (fio's ioengine and iodepth); 0 depth: 1.
	IOEngine workload.IOEngine
	IODepth  int
	Line     int
}

// Kind is the engine's operation for the phase.
func (p *PhaseSpec) Kind() workload.Kind { return opKinds[p.Op] }

// Random reports whether the phase picks blocks or files at random, as a
// distribution needs.
func (p *PhaseSpec) Random() bool {
	return p.Access == workload.Random && p.Data() || p.Select == workload.Random
}

// Data reports whether the phase reads or writes blocks of files.
func (p *PhaseSpec) Data() bool { return p.Kind().IsData() }

// OnePass reports whether the phase does each file (or block) once, as
// opposed to running for a count of operations or a time.
func (p *PhaseSpec) OnePass() bool { return p.Once || p.Ops == 0 && p.Duration == 0 }

// Defaults of a phase's settings.
const (
	DefaultXferSize = units.MiB
	DefaultFileSize = units.GiB
	DefaultReadPct  = 50
)

// Error is a mistake in a workload file, at a line, or in a workload
// built from flags (no File).
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	switch {
	case e.File == "":
		// A job built from command-line flags has no file and no lines.
		return e.Msg
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// fileSize is the size of the files a phase works on.
func (j *Job) fileSize(ph *PhaseSpec) int64 {
	if j.Tree != nil {
		return j.Tree.FileSize
	}
	return ph.FileSize
}

// FileSize is the size of the files phase i works on.
func (j *Job) FileSize(i int) int64 { return j.fileSize(&j.Phases[i]) }

// MaxXfer is the largest transfer size of the job's phases.
func (j *Job) MaxXfer() int64 {
	var m int64
	for _, p := range j.Phases {
		m = max(m, min(p.XferSize, max(j.fileSize(&p), 1)))
	}
	return m
}

// Limits are the bounds Shrink puts on a job.
type Limits struct {
	FileSize int64         // largest file
	Duration time.Duration // longest phase (warm-up included)
	Files    int           // most files in the tree, or per thread
	Ops      int64         // most operations of a count-limited phase
}

// Shrink scales a job down to the limits, keeping its shape: the same
// phases and operations on smaller files, fewer of them and for less time.
// Tests run the example files this way.
func (j *Job) Shrink(l Limits) {
	if t := j.Tree; t != nil {
		if l.FileSize > 0 && t.FileSize > l.FileSize {
			t.FileSize = l.FileSize
		}
		for l.Files > 0 && t.NumFiles() > l.Files {
			switch {
			case t.Files > 1:
				t.Files = max(1, t.Files*l.Files/t.NumFiles())
			case t.Width > 1:
				t.Width--
			default:
				t.Depth--
			}
		}
	}
	for i := range j.Phases {
		p := &j.Phases[i]
		size := p.FileSize
		if size == 0 && j.Tree == nil && p.Data() {
			size = DefaultFileSize // what Validate gives it
		}
		if l.FileSize > 0 && size > l.FileSize {
			p.FileSize = l.FileSize
		}
		if l.Files > 0 && p.Files > l.Files {
			p.Files = l.Files
		}
		if fs := j.fileSize(p); fs > 0 && p.XferSize > fs {
			p.XferSize = fs
		}
		if l.Duration > 0 && p.Duration+p.Warmup > l.Duration {
			p.Warmup = min(p.Warmup, l.Duration/4)
			p.Duration = l.Duration - p.Warmup
		}
		if p.Interval > 0 && l.Duration > 0 && p.Interval > l.Duration/2 {
			p.Interval = max(l.Duration/2, 10*time.Millisecond)
		}
		if l.Ops > 0 && p.Ops > l.Ops {
			p.Ops = l.Ops
		}
	}
}
