package workload

// One file shared by every rank (IOR's N-1 mode). Ranks are the workers of
// all hosts: worker w of a host is rank Rank0+w of World. Segment s of rank
// r is Block bytes at s*World*Block + r*Block, moved in transfers of the
// phase's BlockSize (IOR's -s, -b and -t): one segment of a big block is
// "segmented" (each rank its own stretch), many segments of one transfer
// each is "strided" (every rank's transfers interleaved, as ior-hard).
//
// A write phase records how many whole segments each rank wrote in a
// status file beside the shared file (eight bytes a rank, at rank*8), so
// that a stonewalled write is read back exactly as far as it went, by a
// rank of any host (IOR keeps a stonewall status file for the same need).

import (
	"context"

	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/pattern"
)

// SharedFile is the layout of a phase on one shared file.
type SharedFile struct {
	Block    int64 // bytes of one rank in one segment; a multiple of the transfer size
	Segments int   // segments of the file (with a stonewall, at most)
	Rank0    int   // global rank of this host's worker 0
	World    int   // ranks of all hosts; 0: this host's workers
	// Shift: a read phase's rank r reads what rank r+Shift wrote (IOR's
	// -C), so that no rank reads back its own data from its cache. 0
	// means the next host's first rank with more than one host, the next
	// rank with one; negative means a rank reads its own.
	Shift int
	// PerRank gives each rank a file of its own, the target's path with
	// "."+rank appended, holding its segments one after another (IOR's
	// -F, ior-easy's layout); the status file is still the target's.
	PerRank bool
	// Written is, after a write phase, the whole segments each of this
	// host's ranks wrote; after a read phase, the segments each read.
	Written []int64
	counts  []int64  // a read phase: the segments each rank of the world wrote
	span    int      // segments a worker has tasks for in this phase
	paths   []string // PerRank: each rank's file, by global rank
	ids     []uint64
	id      uint64 // the shared file's identity
	// big files are written as streams (pattern.Sized): their blocks, at
	// any offset, come from the worker's stream, not made anew.
	big bool
	fds []int // per worker: its open descriptor, -1 when closed
}

// StatusSuffix names the file beside a shared file that records the
// segments each rank wrote.
const StatusSuffix = ".segments"

// Offset is the byte offset of transfer k of segment s of rank r.
func (l *SharedFile) Offset(r, s int, k int64, xfer int64) int64 {
	if l.PerRank {
		return int64(s)*l.Block + k*xfer
	}
	return int64(s)*int64(l.World)*l.Block + int64(r)*l.Block + k*xfer
}

// source is the rank whose data global rank r reads.
func (l *SharedFile) source(r, workers int) int {
	shift := l.Shift
	switch {
	case shift < 0:
		return r
	case shift == 0 && l.World > workers:
		shift = workers
	case shift == 0:
		shift = 1
	}
	return (r + shift) % l.World
}

// ReadFiles are the files the workers of this host read in a read phase
// on path: each worker's source rank's file, or path itself when every
// rank shares it.
func (l *SharedFile) ReadFiles(path string, workers int) []string {
	if !l.PerRank {
		return []string{path}
	}
	world := l.World
	if world == 0 {
		world = workers
	}
	c := *l
	c.World = world
	files := make([]string, workers)
	for w := range workers {
		files[w] = RankFile(path, c.source(l.Rank0+w, workers))
	}
	return files
}

func (l *SharedFile) check(p *FilePhase, workers int) error {
	if l.World == 0 {
		l.World = workers
	}
	switch {
	case p.Kind != Write && p.Kind != Read:
		return fmt.Errorf("a shared file is written or read, not %v", p.Kind)
	case p.Targets.Len() != 1:
		return fmt.Errorf("a shared file phase works on one file, not %d", p.Targets.Len())
	case l.Segments < 1:
		return fmt.Errorf("segments must be at least 1 (got %d)", l.Segments)
	case l.Block < p.BlockSize || l.Block%p.BlockSize != 0:
		return fmt.Errorf("block size %d is not a multiple of the transfer size %d", l.Block, p.BlockSize)
	case l.Rank0 < 0 || l.Rank0+workers > l.World:
		return fmt.Errorf("ranks %d..%d are not within a world of %d", l.Rank0, l.Rank0+workers-1, l.World)
	case l.PerRank && int64(l.Segments) > (1<<62)/l.Block:
		return fmt.Errorf("%d segments of %d bytes are too large a file", l.Segments, l.Block)
	case !l.PerRank && int64(l.Segments) > (1<<62)/int64(l.World)/l.Block:
		return fmt.Errorf("%d segments of %d ranks of %d bytes are too large a file", l.Segments, l.World, l.Block)
	}
	return nil
}

// prepare readies a shared phase before its workers start: a read phase
// learns how far each rank wrote.
func (l *SharedFile) prepare(p *FilePhase, workers int) error {
	l.Written = make([]int64, workers)
	l.fds = make([]int, workers)
	for i := range l.fds {
		l.fds[i] = -1
	}
	l.span = l.Segments
	size := int64(l.Segments) * l.Block
	if !l.PerRank {
		size *= int64(l.World)
	}
	l.big = size >= pattern.StreamMin
	l.id = pattern.Sized(p.Targets.IDs[0], size)
	if l.PerRank {
		l.paths, l.ids = make([]string, l.World), make([]uint64, l.World)
		for r := range l.World {
			l.paths[r] = RankFile(p.Targets.Paths[0], r)
			l.ids[r] = pattern.Sized(p.Targets.IDs[0]+uint64(r+1)*0x9e3779b97f4a7c15, size)
		}
	}
	if p.Kind == Write {
		return nil
	}
	counts, err := ReadSegments(p.Targets.Paths[0], l.World)
	if err != nil {
		return err
	}
	for i := range counts {
		counts[i] = min(counts[i], int64(l.Segments))
	}
	l.counts = counts
	// Readers have tasks for the most segments any of them reads, not
	// for the segments a stonewalled write never reached.
	l.span = 1
	for w := range workers {
		l.span = max(l.span, int(counts[l.source(l.Rank0+w, workers)]))
	}
	return nil
}

// RankFile is the file of rank r of a layout with a file per rank.
func RankFile(path string, r int) string { return path + "." + strconv.Itoa(r) }

// ReadSegments reads the status file of a shared file: the whole segments
// each of world ranks wrote.
func ReadSegments(path string, world int) ([]int64, error) {
	data, err := os.ReadFile(path + StatusSuffix)
	if err != nil {
		return nil, fmt.Errorf("read the segments written to %s: %w", path, err)
	}
	if len(data) < 8*world {
		return nil, fmt.Errorf("%s%s holds %d ranks, want %d: was it written by as many?", path, StatusSuffix, len(data)/8, world)
	}
	out := make([]int64, world)
	for i := range out {
		out[i] = int64(binary.LittleEndian.Uint64(data[8*i:]))
	}
	return out, nil
}

// finish closes what the workers left open and, after a write, records
// the segments of this host's ranks in the status file, opened beneath
// the phase's directory as its data file is (b).
func (l *SharedFile) finish(p *FilePhase, b *beneath) error {
	var errs []error
	for i, fd := range l.fds {
		if fd >= 0 {
			errs = append(errs, unix.Close(fd))
			l.fds[i] = -1
		}
	}
	if p.Kind != Write {
		return errors.Join(errs...)
	}
	status := p.Targets.Paths[0] + StatusSuffix
	fd, err := b.open(false, status, unix.O_WRONLY|unix.O_CREAT|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return errors.Join(append(errs, &PathError{Op: "open", Path: status, Err: err})...)
	}
	buf := make([]byte, 8*len(l.Written))
	for i, n := range l.Written {
		binary.LittleEndian.PutUint64(buf[8*i:], uint64(n))
	}
	if _, err := pwriteFull(false, fd, buf, int64(8*l.Rank0), 1); err != nil {
		errs = append(errs, &PathError{Op: "write", Path: status, Err: err})
	}
	if err := unix.Close(fd); err != nil {
		errs = append(errs, &PathError{Op: "close", Path: status, Err: err})
	}
	return errors.Join(errs...)
}

// shared does segment task%Segments of worker w's rank: its transfers,
// each one operation. The worker opens the file at its first segment and
// closes it (with fsync, if asked) after its last, inside the phase's time.
func (e *Runner) shared(w *engine.Worker, p *FilePhase, task int) error {
	l := p.Shared
	f := w.State.(*files)
	s := task % l.span
	rank := l.Rank0 + w.ID
	write := p.Kind == Write
	src, last := rank, l.Segments
	if !write {
		src = l.source(rank, len(l.fds))
		last = int(l.counts[src])
		if s >= last {
			return nil
		}
	}
	path, id := p.Targets.Paths[0], l.id
	if l.PerRank {
		path, id = l.paths[src], l.ids[src]
	}
	if l.fds[w.ID] < 0 {
		flags := unix.O_RDONLY
		if write {
			flags = unix.O_WRONLY | unix.O_CREAT
		}
		fd, err := e.open(w, path, flags, "open")
		if err != nil {
			return err
		}
		l.fds[w.ID] = fd
	}
	fd := l.fds[w.ID]
	var mismatch error
	for k := int64(0); k < l.Block/p.BlockSize; k++ {
		off := l.Offset(src, s, k, p.BlockSize)
		buf := f.buf[:p.BlockSize]
		if write {
			buf = e.content(f, buf, id, off)
			if !l.PerRank && len(buf) <= warmMax {
				// Into the processor's cache before the write: the
				// kernel copies the block under the file's lock, for
				// which the other writers of the file wait.
				f.warm += warmCache(buf)
			}
		}
		st, ok := w.Begin()
		if !ok {
			return e.closeShared(w, l, path, write)
		}
		if err := e.timedIO(w, st, fd, path, buf, off, write); err != nil {
			return err
		}
		if !write && mismatch == nil {
			mismatch = e.verify(buf, id, path, off)
		}
	}
	l.Written[w.ID]++
	w.Item()
	if s == last-1 {
		if err := e.closeShared(w, l, path, write); err != nil {
			return err
		}
	}
	return mismatch
}

// closeShared ends worker w's use of the shared file.
func (e *Runner) closeShared(w *engine.Worker, l *SharedFile, path string, wrote bool) error {
	fd := l.fds[w.ID]
	if fd < 0 {
		return nil
	}
	l.fds[w.ID] = -1
	return e.closeFile(w, fd, path, wrote)
}

// runShared runs a phase on a shared file: one pass of every worker's
// segments, ended early by the phase's Duration, if any.
func (e *Runner) runShared(ctx context.Context, p *FilePhase) (*Result, error) {
	l := p.Shared
	if p.Kind != Write && p.Ready != nil {
		// A read counts the segments every writer wrote (prepare): on
		// many hosts, only once all have passed the barrier.
		p.Ready()
	}
	if err := l.prepare(p, e.cfg.Workers); err != nil {
		return &Result{Name: p.Name, Title: p.Title, Workers: e.cfg.Workers, Hist: metrics.NewHistogram(), Incomplete: true}, err
	}
	res, err := e.core.Run(ctx, engine.Phase{
		Name: p.Name, Title: p.Title, Tasks: e.cfg.Workers * l.span, Once: true,
		Duration: p.Duration, Interval: p.Interval, OnInterval: p.OnInterval, Ready: p.Ready,
		Setup:  func(w *engine.Worker) error { e.setup(w, p); return nil },
		Do:     func(w *engine.Worker, task, _ int) error { return e.shared(w, p, task) },
		Finish: e.finish(p),
	})
	if ferr := l.finish(p, &e.beneath); ferr != nil && err == nil {
		err = ferr
	}
	return res, err
}

// warmMax is the largest block warmCache is given: one that a processor's
// second-level cache holds beside the rest.
const warmMax = 256 << 10

// warmCache reads a byte of every cache line of b and returns their sum
// (kept, so that the reads are not left out). A shared file's writers
// take turns at its lock (i_rwsem), and the kernel's copy of the block
// happens while one holds it: from a stream block of 47,008 bytes that is
// not in the cache, the copy under the lock was the phase's bottleneck,
// and ior-hard-write ran at 0.87-0.89 of IOR's with 2 ranks on tmpfs,
// 0.95-0.96 with the block read first (benchmarks/records/hpc-io500.md).
func warmCache(b []byte) byte {
	var s byte
	for i := 0; i < len(b); i += 64 {
		s += b[i]
	}
	return s
}
