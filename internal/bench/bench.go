// Package bench is `fsbench bench`: JuiceFS's default benchmark (big-file
// write and read, small-file write, read and stat) as a preset of file
// phases for workload.Runner, run in a directory of its own under any path.
//
// It knows nothing of the command line (package cli) or of other hosts
// (package cluster), and writes and removes nothing outside the run's own
// directory.
package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/fsbench/fsbench/internal/juicefs"
	"github.com/fsbench/fsbench/internal/origin"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// Options are the parameters of one bench run.
type Options struct {
	Path           string
	BlockSize      int64
	BigFileSize    int64 // 0 turns the big-file phases off
	SmallFileSize  int64
	SmallFileCount int // per thread; 0 turns the small-file phases off
	Threads        int
	Direct         bool
	Fsync          bool
	Verify         bool
	Keep           bool
	DropCaches     string // auto, always, never
	// SkipDropCaches is SKIP_DROP_CACHES=true: no cache dropping at all.
	SkipDropCaches bool
	Tracer         workload.Tracer
	// Data is how the content written compresses and repeats
	// (--compress-ratio, --dedupe-ratio; fio's and vdbench's options).
	Data pattern.Data
	// ReadExisting reads the files already below Path (RunExisting)
	// instead of writing its own; Sample chooses which.
	ReadExisting bool
	Sample       Sample
	// Hooks lets the caller show progress and warnings; all are optional.
	Hooks runenv.Hooks

	// The fields below serve a run on many hosts (fsbench agent).
	// RunDir is the run's own directory, made by the run (it must not
	// exist), instead of a new name under Path.
	RunDir string `json:"-"`
	// ReadDir, if set, is another run directory whose files the read and
	// stat phases use: what another host wrote, so that a client's own
	// cache cannot serve the reads.
	ReadDir string `json:"-"`
	// PinnedPath, if set, names Path as the agent opened it beneath its
	// allowed root (/proc/self/fd/N): a kept tree (tree.dir) is made and
	// opened beneath it, and used through its own descriptor, so that
	// no link swapped into Path leads the tree elsewhere.
	PinnedPath string `json:"-"`
	// Interval cuts every phase into intervals (Result series).
	Interval time.Duration `json:"-"`
	// Seed of the data written; 0: a random one. Hosts that read each
	// other's files share one, so that --verify checks them.
	Seed uint64 `json:"-"`
	// Host is this host's place among Hosts (0 and 0 on one host): a
	// workload's shared file is then shared by the threads of every host.
	Host, Hosts int `json:"-"`
}

// Defaults are JuiceFS bench's defaults.
func Defaults() Options {
	return Options{
		BlockSize:      units.MiB,
		BigFileSize:    units.GiB,
		SmallFileSize:  128 * units.KiB,
		SmallFileCount: 100,
		Threads:        1,
		DropCaches:     runenv.DropAuto,
	}
}

// maxThreads bounds -p: each thread holds one block-size buffer.
const maxThreads = 4096

// Validate checks the options before anything touches the storage. Its
// errors are the user's to fix (exit code 2).
func (o *Options) Validate() error {
	switch {
	case o.Threads < 1:
		return fmt.Errorf("--threads must be at least 1 (got %d)", o.Threads)
	case o.Threads > maxThreads:
		return fmt.Errorf("--threads %d is more than %d", o.Threads, maxThreads)
	case o.BlockSize <= 0:
		return fmt.Errorf("--block-size must be greater than 0")
	case o.BlockSize > units.GiB:
		return fmt.Errorf("--block-size %s is larger than 1 GiB", units.FormatBytes(o.BlockSize))
	case o.BigFileSize < 0, o.SmallFileSize < 0:
		return fmt.Errorf("file sizes must not be negative")
	case o.SmallFileCount < 0:
		return fmt.Errorf("--small-file-count must not be negative (got %d)", o.SmallFileCount)
	case o.SmallFileCount > 0 && o.SmallFileSize == 0:
		return fmt.Errorf("--small-file-size must be greater than 0 when --small-file-count is not 0")
	case o.BigFileSize == 0 && (o.SmallFileCount == 0 || o.SmallFileSize == 0):
		return fmt.Errorf("nothing to do: big files are off (--big-file-size 0) and there are no small files")
	}
	if !runenv.ValidDropCaches(o.DropCaches) {
		return fmt.Errorf("--drop-caches must be auto, always or never (got %q)", o.DropCaches)
	}
	if o.Path == "" {
		return errors.New("a PATH to benchmark is required")
	}
	return nil
}

// ErrBadInput is wrapped by errors the user fixes by changing the command
// line: options out of range, a PATH that is not a directory. It is
// runenv's, which checks the PATH.
var ErrBadInput = runenv.ErrBadInput

// env is what the run's directory and cache drops are made of.
func (o *Options) env() runenv.Options {
	return runenv.Options{RunDir: o.RunDir, Keep: o.Keep, DropCaches: o.DropCaches,
		SkipDropCaches: o.SkipDropCaches, Tracer: o.Tracer, Hooks: o.Hooks}
}

// Run benchmarks o.Path. It returns the result measured so far together
// with any error; on cancellation (Ctrl-C) the result is marked interrupted
// and the error wraps ctx.Err(). Every file it creates is below one new
// directory, which it removes at the end unless Keep is set.
func Run(ctx context.Context, o Options, res *report.Result) error {
	if err := o.Validate(); err != nil {
		return runenv.BadInput(err)
	}
	r := &benchRun{o: &o, res: res}
	abs, mnt, mounted, err := runenv.OpenTargetMount(o.Path, res)
	if err != nil {
		return err
	}
	res.Parameters, res.Threads = o.params(), o.Threads
	if err := CheckSpace(o, nil); err != nil {
		return err
	}
	r.origin = origin.New(abs)
	r.origin.Direct = o.Direct
	if err := r.prepare(abs); err != nil {
		return err
	}
	jfs := r.juiceFSBefore(mnt, mounted)
	dropper := runenv.NewDropper(o.env(), os.Geteuid() == 0, r.warn)
	// The method the run ended with: a global drop that fails (a container's
	// read-only /proc/sys) falls back to fadvise for this and later phases.
	defer func() { res.CacheDrop = dropper.Method() }()

	runErr := r.runPhases(ctx, dropper, o.phases(r.runner, r.own.Path()), r.own.Path())
	if jfs != nil && runErr == nil {
		if after, err := juicefs.ReadStats(mnt.MountPoint); err == nil {
			res.Internal = jfsInternal(*jfs, after, res.Phases)
		} else {
			r.warn("read JuiceFS .stats after the run: %v", err)
		}
	}
	if o.Hooks.Finished != nil {
		o.Hooks.Finished(r.runner)
	}
	r.cleanup()
	if runErr == nil && ctx.Err() != nil {
		// Ctrl-C during the clean-up: every phase is complete, and the run
		// still ends as interrupted.
		res.Interrupted = true
		runErr = ctx.Err()
	}
	return runErr
}

// benchRun is one run of the default benchmark.
type benchRun struct {
	o      *Options
	res    *report.Result
	own    *runenv.RunDir
	runner *workload.Runner
	// origin measures where read phases' bytes come from.
	origin *origin.Probe
}

// warn records a warning in the result and shows it.
func (r *benchRun) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.res.Warnings = append(r.res.Warnings, msg)
	if r.o.Hooks.Warn != nil {
		r.o.Hooks.Warn(msg)
	}
}

func (r *benchRun) cleanup() { r.own.Remove(r.warn) }

// prepare makes the run's own directory under abs, checks O_DIRECT's
// alignment, and builds the runner.
func (r *benchRun) prepare(abs string) error {
	o := r.o
	own, err := runenv.MakeRunDir(o.env(), abs)
	if err != nil {
		return err
	}
	r.own = own
	dir := own.Path()
	var align sysio.Alignment
	if o.Direct {
		align, err = sysio.ProbeDirect(dir, r.res.Target.FSType)
		if err == nil {
			err = align.CheckAligned(
				[]string{"--block-size", "--big-file-size", "--small-file-size"},
				[]int64{o.BlockSize, o.BigFileSize, o.SmallFileSize})
		}
		if err != nil {
			r.cleanup()
			return &runenv.Error{Phase: "prepare", Err: err}
		}
	}
	seed := o.Seed
	if seed == 0 {
		seed = pattern.RandomSeed()
	}
	r.runner = workload.NewRunner(workload.Config{
		Dir: dir, Workers: o.Threads, Direct: o.Direct, Align: align,
		Fsync: o.Fsync, Verify: o.Verify, Seed: seed, Tracer: o.Tracer, Data: o.Data,
	}, o.maxBlock())
	if o.Hooks.Started != nil {
		o.Hooks.Started(r.runner, dir)
	}
	return nil
}

// juiceFSBefore reads the JuiceFS client's counters before the run, or
// returns nil when the target is not a JuiceFS mount or has none.
func (r *benchRun) juiceFSBefore(mnt sysio.Mount, mounted bool) *juicefs.Stats {
	if !mounted || !juicefs.IsJuiceFS(mnt.FSType) {
		return nil
	}
	before, err := juicefs.ReadStats(mnt.MountPoint)
	if err != nil {
		r.warn("JuiceFS mount without readable .stats, internal rows skipped: %v", err)
		return nil
	}
	return &before
}

// runPhases runs the phases ps in dir in order, dropping caches before
// those that read, until one fails or the run is cancelled.
func (r *benchRun) runPhases(ctx context.Context, dropper *runenv.Dropper, ps []workload.FilePhase, dir string) error {
	o, runner := r.o, r.runner
	for _, p := range ps {
		if p.Kind == workload.Read || p.Kind == workload.Stat {
			dropper.Drop(p.Name, p.Targets.Paths)
		}
		if h := o.Hooks.Interval; h != nil && p.Interval > 0 {
			p.OnInterval = func(s workload.Sample) { h(&p, s.Report()) }
		}
		var reading *origin.Reading
		if p.Kind == workload.Read {
			reading = r.origin.Begin(ctx, p.Targets.Paths, dropper.Method() == "drop_caches")
		}
		total := progressUnits(&p)
		if h := o.Hooks.PhaseStart; h != nil {
			// At the phase's start, once it is set up: a host's barrier
			// then leaves each host's preparation out of the common time.
			p.Ready = func() { h(runner, &p, total) }
		}
		res, err := runner.Run(ctx, p)
		if o.Hooks.PhaseEnd != nil {
			o.Hooks.PhaseEnd(runner, &p)
		}
		ph := toPhase(res, &p, *o)
		if w := reading.End(ctx, &ph, ph.Bytes); w != "" {
			r.warn("%s", w)
		}
		r.res.Phases = append(r.res.Phases, ph)
		if err != nil {
			if ctx.Err() != nil {
				r.res.Interrupted = true
				return ctx.Err()
			}
			return runenv.ExplainVanished(dir, &runenv.Error{Phase: p.Title, Err: err})
		}
	}
	return nil
}

// progressUnits is the number of progress units of phase p: files, or
// blocks when each block is timed.
func progressUnits(p *workload.FilePhase) int64 {
	n := int64(p.Targets.Len())
	switch {
	case p.PerFile || p.Kind == workload.Stat:
		return n
	case p.Targets.Sizes != nil:
		var blocks int64
		for _, s := range p.Targets.Sizes {
			blocks += ceilDiv(s, p.BlockSize)
		}
		return blocks
	}
	return n * ceilDiv(p.FileSize, p.BlockSize)
}

func ceilDiv(a, b int64) int64 {
	if b <= 0 {
		return 0
	}
	return (a + b - 1) / b
}

func (o *Options) maxBlock() int64 {
	m := o.BlockSize
	if o.BigFileSize > 0 && o.BigFileSize < m && (o.SmallFileCount == 0 || o.SmallFileSize < o.BigFileSize) {
		m = o.BigFileSize
	}
	if o.BigFileSize == 0 && o.SmallFileSize < m {
		m = o.SmallFileSize
	}
	return m
}

// Big files are named big.<thread>, small files small.<thread>.<n>.
func bigName(w, _ int) string   { return "big." + strconv.Itoa(w) }
func smallName(w, i int) string { return "small." + strconv.Itoa(w) + "." + strconv.Itoa(i) }

// fileNames lists n files per thread, thread by thread: worker w owns the
// w-th stretch of the list, so each thread works on its own files.
func fileNames(threads, n int, name func(w, i int) string) []string {
	out := make([]string, 0, threads*n)
	for w := range threads {
		for i := range n {
			out = append(out, name(w, i))
		}
	}
	return out
}

// phases is the bench preset: JuiceFS's five phases, in its order. Big
// files are timed per block, small files from open to close.
func (o *Options) phases(e *workload.Runner, dir string) []workload.FilePhase {
	var ps []workload.FilePhase
	readDir := dir
	if o.ReadDir != "" {
		readDir = o.ReadDir
	}
	if o.BigFileSize > 0 {
		names := fileNames(o.Threads, 1, bigName)
		size, bs := wholeBlocks(o.BigFileSize, o.BlockSize)
		ps = append(ps,
			workload.FilePhase{Name: "write-big", Title: "Write big file", Kind: workload.Create, Targets: e.NewTargets(dir, names), FileSize: size, BlockSize: bs},
			workload.FilePhase{Name: "read-big", Title: "Read big file", Kind: workload.Read, Targets: e.NewTargets(readDir, names), FileSize: size, BlockSize: bs},
		)
	}
	if o.SmallFileCount > 0 {
		names := fileNames(o.Threads, o.SmallFileCount, smallName)
		small := e.NewTargets(readDir, names)
		written := small // one list of paths when the phases share a directory
		if readDir != dir {
			written = e.NewTargets(dir, names)
		}
		size, bs := wholeBlocks(o.SmallFileSize, o.BlockSize)
		ps = append(ps,
			workload.FilePhase{Name: "write-small", Title: "Write small file", Kind: workload.Create, Targets: written, FileSize: size, BlockSize: bs, PerFile: true},
			workload.FilePhase{Name: "read-small", Title: "Read small file", Kind: workload.Read, Targets: small, FileSize: size, BlockSize: bs, PerFile: true},
			workload.FilePhase{Name: "stat", Title: "Stat file", Kind: workload.Stat, Targets: small, PerFile: true},
		)
	}
	for i := range ps {
		ps[i].Interval = o.Interval
	}
	return ps
}

// wholeBlocks is the size a file of size is written at, and its block
// size, as juicefs bench does: a file no larger than a block is one block
// of its size; a larger one is whole blocks, its size rounded up.
func wholeBlocks(size, block int64) (int64, int64) {
	if size <= block {
		return size, size
	}
	return ceilDiv(size, block) * block, block
}

func (o *Options) params() report.Params {
	return append(report.Params{
		{Key: "block_size", Label: "BlockSize", Value: o.BlockSize, Display: units.FormatBytes(o.BlockSize)},
		{Key: "big_file_size", Label: "BigFileSize", Value: o.BigFileSize, Display: units.FormatBytes(o.BigFileSize)},
		{Key: "small_file_size", Label: "SmallFileSize", Value: o.SmallFileSize, Display: units.FormatBytes(o.SmallFileSize)},
		{Key: "small_file_count", Label: "SmallFileCount", Value: o.SmallFileCount, Display: strconv.Itoa(o.SmallFileCount)},
		{Key: "threads", Label: "NumThreads", Value: o.Threads, Display: strconv.Itoa(o.Threads)},
		report.Switch("direct", "Direct", o.Direct),
		report.Switch("fsync", "Fsync", o.Fsync),
		report.Switch("verify", "Verify", o.Verify),
	}, report.DataParams(o.Data.Compress, o.Data.Dedupe)...)
}
