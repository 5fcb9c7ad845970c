package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/origin"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
	"github.com/fsbench/fsbench/pkg/object"
)

// Defaults of a run.
const (
	// DefaultSize is the checkpoint's total size unless --size says
	// otherwise: small enough for a test machine.
	DefaultSize    = units.GiB
	DefaultBlock   = units.MiB
	maxBlock       = units.GiB
	DefaultModel   = "llama3-8b"
	sequentialName = "sequential.data"
)

// Options are the parameters of one checkpoint run.
type Options struct {
	// Path is the directory to checkpoint in, or with Storage the URL of
	// an object store (pkg/object's driver Storage), Object its
	// configuration; PartSize and PartsInFlight shape its uploads and
	// ranged reads.
	Path          string
	Storage       string
	Object        object.Config `json:"-"`
	PartSize      int64
	PartsInFlight int
	Model         Model
	// Ranks is the number of ranks on all hosts together; 0: the model's.
	Ranks int
	// RanksPerHost, if set, is the ranks on each host (-p/--threads):
	// Ranks is then RanksPerHost times Hosts.
	RanksPerHost int
	// Size is the checkpoint's total size on all hosts together; 0:
	// DefaultSize.
	Size           int64
	BlockSize      int64 // bytes of each read and write call; 0: DefaultBlock
	Direct         bool
	Keep           bool
	DropCaches     string // runenv.DropAuto (also ""), DropAlways or DropNever
	SkipDropCaches bool
	// Hooks are runenv's: progress, warnings, the run directory's life.
	Hooks runenv.Hooks
	// ObjectHooks are the calls around the phases of a checkpoint in an
	// object store, whose phases have no file engine: before and after
	// each (in progress units of shards), and after the last, before the
	// clean-up. Warnings and the prefix's life go through Hooks.
	ObjectHooks ObjectHooks

	// The fields below serve a run on many hosts (fsbench agent): this
	// host's place among Hosts (0: one host alone), its own run directory
	// (which must not exist) and the next host's, whose shards it reads
	// back, and the seed all hosts share so that they verify each other's
	// shards. With Storage, RunDir and ReadDir are key prefixes (ending in
	// "/") in the store.
	Host, Hosts     int
	RunDir, ReadDir string
	Seed            uint64
	// Data is how the shards' content compresses and repeats
	// (--compress-ratio, --dedupe-ratio).
	Data pattern.Data
}

// ObjectHooks are the callbacks of a checkpoint in an object store; all
// are optional.
type ObjectHooks struct {
	PhaseStart func(name, title string, e *engine.Engine, shards int64)
	PhaseEnd   func(name string)
	Finished   func()
}

// ErrBadInput is wrapped by errors the user fixes by changing the command
// line: options out of range, a checkpoint too large for the free space.
var ErrBadInput = errors.New("bad input")

type badInput struct{ error }

func (b badInput) Unwrap() []error { return []error{ErrBadInput, b.error} }

// Resolve fills the defaults and returns how the checkpoint is cut: the
// plan of all hosts and this host's part of it. Its errors are the user's
// to fix.
func (o *Options) Resolve() (Plan, Part, error) {
	if o.Model.Name == "" {
		return Plan{}, Part{}, errors.New("--model is required")
	}
	if o.Ranks == 0 {
		o.Ranks = o.Model.Ranks
	}
	if o.Size == 0 {
		o.Size = DefaultSize
	}
	if o.BlockSize == 0 {
		o.BlockSize = DefaultBlock
	}
	if o.Hosts == 0 {
		o.Hosts = 1
	}
	if o.RanksPerHost > 0 {
		o.Ranks = o.RanksPerHost * o.Hosts
	}
	if o.PartSize == 0 {
		o.PartSize = DefaultPartSize
	}
	if o.PartsInFlight == 0 {
		o.PartsInFlight = DefaultPartsInFlight
	}
	if o.DropCaches == "" {
		o.DropCaches = runenv.DropAuto
	}
	switch {
	case o.Ranks < 0:
		return Plan{}, Part{}, fmt.Errorf("-p/--threads (the ranks on each host) must be at least 1 (got %d ranks)", o.Ranks)
	case o.Size < 0:
		return Plan{}, Part{}, errors.New("--size must be greater than 0")
	case o.BlockSize < 0 || o.BlockSize > maxBlock:
		return Plan{}, Part{}, fmt.Errorf("--block-size must be between 1 byte and %s", units.FormatBytes(maxBlock))
	case !runenv.ValidDropCaches(o.DropCaches):
		return Plan{}, Part{}, fmt.Errorf("--drop-caches must be auto, always or never (got %q)", o.DropCaches)
	}
	plan, err := NewPlan(o.Size, o.Ranks)
	if err != nil {
		return plan, Part{}, err
	}
	if o.Storage != "" {
		if err := o.checkObjects(plan); err != nil {
			return plan, Part{}, err
		}
	}
	part, err := plan.Split(o.Host, o.Hosts)
	return plan, part, err
}

// run is the state of one Run.
type run struct {
	o     Options
	plan  Plan
	part  Part
	res   *report.Result
	dir   string
	align sysio.Alignment
	drop  *runenv.Dropper
	clock *rankClock
	// origin measures where the read-back's bytes come from.
	origin *origin.Probe
}

// Run runs the checkpoint on o.Path: a sequential write of this host's
// share (one stream), then the ranks' write and read-back. It returns what
// was measured with any error; on cancellation the result is marked
// interrupted and the error wraps ctx.Err(). Every file is below one new
// directory, removed at the end unless Keep is set.
func Run(ctx context.Context, o Options, res *report.Result) error {
	plan, part, err := o.Resolve()
	if err != nil {
		return badInput{err}
	}
	r := &run{o: o, plan: plan, part: part, res: res, clock: newRankClock(part.Ranks)}
	if o.Storage != "" {
		return r.runObjects(ctx)
	}
	abs, err := runenv.OpenTarget(o.Path, res)
	if err != nil {
		return err
	}
	res.Parameters, res.Threads = r.params(), r.part.Ranks
	if err := checkSpace(abs, plan.Total); err != nil {
		return badInput{err}
	}
	bo := r.env()
	dir, err := runenv.MakeRunDir(bo, abs)
	if err != nil {
		return err
	}
	defer dir.Remove(r.warn)
	r.dir = dir.Path()
	r.drop = runenv.NewDropper(bo, os.Geteuid() == 0, r.warn)
	r.origin = origin.New(abs)
	r.origin.Direct = o.Direct
	defer func() { res.CacheDrop = r.drop.Method() }()
	err = r.phases(ctx)
	if ctx.Err() != nil {
		res.Interrupted = true
		return ctx.Err()
	}
	return err
}

func (r *run) env() runenv.Options {
	o := r.o
	return runenv.Options{Keep: o.Keep, DropCaches: o.DropCaches, SkipDropCaches: o.SkipDropCaches,
		RunDir: o.RunDir, Hooks: o.Hooks}
}

func (r *run) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.res.Warnings = append(r.res.Warnings, msg)
	if r.o.Hooks.Warn != nil {
		r.o.Hooks.Warn(msg)
	}
}

// CheckSpace refuses, before anything is printed or made, a checkpoint
// on a local PATH larger than its free space (Run checks again); nil for
// an object store, or when the plan itself is bad (Run says why).
func (o *Options) CheckSpace() error {
	if o.Storage != "" {
		return nil
	}
	plan, _, err := o.Resolve()
	if err != nil {
		return nil
	}
	if err := checkSpace(o.Path, plan.Total); err != nil {
		return badInput{err}
	}
	return nil
}

// checkSpace refuses a checkpoint larger than the free space of dir.
func checkSpace(dir string, need int64) error {
	if free, short := sysio.Short(dir, need); short {
		return fmt.Errorf("--size: the checkpoint needs %s and %s has %s free; give a smaller --size",
			units.FormatBytes(need), dir, units.FormatBytes(free))
	}
	return nil
}

// phases runs the sequential write, then the checkpoint's write and
// read-back, on engines of one stream and of a worker per rank.
func (r *run) phases(ctx context.Context) error {
	if err := r.probe(); err != nil {
		return &runenv.Error{Phase: "prepare", Err: err}
	}
	seed := r.o.Seed
	if seed == 0 {
		seed = randomSeed()
	}
	cfg := workload.Config{Dir: r.dir, Direct: r.o.Direct, Align: r.align, Fsync: true, Verify: true, Seed: seed,
		Workers: 1, MaxErrorSamples: 5, Data: r.o.Data}
	block := min(r.o.BlockSize, r.plan.Shard)
	seq := workload.NewRunner(cfg, min(r.o.BlockSize, r.seqSize()))
	cfg.Workers, cfg.Tracer = r.part.Ranks, r.clock
	ranks := workload.NewRunner(cfg, block)
	if h := r.o.Hooks; h.Started != nil {
		h.Started(ranks, r.dir)
	}
	if h := r.o.Hooks; h.Finished != nil {
		defer h.Finished(ranks)
	}
	if err := r.sequential(ctx, seq); err != nil {
		return err
	}
	write, read := r.rankPhases(ranks, block)
	if _, err := r.measure(ctx, ranks, write); err != nil {
		return err
	}
	r.drop.Drop(read.Name, write.Targets.Paths)
	reading := r.origin.Begin(ctx, read.Targets.Paths, r.drop.Method() == "drop_caches")
	res, err := r.measure(ctx, ranks, read)
	ph := &r.res.Phases[len(r.res.Phases)-1]
	if w := reading.End(ctx, ph, ph.Bytes); w != "" {
		r.warn("%s", w)
	}
	if err == nil && res.Errors > 0 {
		err = &runenv.Error{Phase: read.Title, Err: fmt.Errorf("%d of %d shards differ from what was written: %s",
			res.Errors, r.part.Ranks, res.Samples[0])}
	}
	return err
}

// probe checks that O_DIRECT works in the run directory and that the
// sizes suit it.
func (r *run) probe() error {
	if !r.o.Direct {
		return nil
	}
	a, err := sysio.ProbeDirect(r.dir, r.res.Target.FSType)
	if err != nil {
		return err
	}
	r.align = a
	return a.CheckAligned([]string{"--block-size", "shard size"}, []int64{r.o.BlockSize, r.plan.Shard})
}

// sequential writes this host's share of the checkpoint as one file, one
// stream, and removes it.
func (r *run) sequential(ctx context.Context, e *workload.Runner) error {
	size := r.seqSize()
	p := &workload.FilePhase{Name: "seq-write", Title: "Sequential write (1 stream)", Kind: workload.Create,
		Targets: e.NewTargets(r.dir, []string{sequentialName}), FileSize: size, BlockSize: min(r.o.BlockSize, size)}
	_, err := r.measure(ctx, e, p)
	if rerr := os.Remove(p.Targets.Paths[0]); rerr != nil && !errors.Is(rerr, os.ErrNotExist) && err == nil {
		err = fmt.Errorf("remove %s: %w", p.Targets.Paths[0], rerr)
	}
	return err
}

// seqSize is this host's share of the checkpoint.
func (r *run) seqSize() int64 { return r.plan.Shard * int64(r.part.Ranks) }

// rankPhases are the checkpoint's write (each rank its own shard) and its
// read-back (each rank another rank's shard, from ReadDir on many hosts).
func (r *run) rankPhases(e *workload.Runner, block int64) (write, read *workload.FilePhase) {
	var own, other []string
	for i := range r.part.Ranks {
		own = append(own, ShardName(r.part.First+i))
		other = append(other, ShardName(r.part.Reads(i)))
	}
	readDir := r.dir
	if r.o.ReadDir != "" {
		readDir = r.o.ReadDir
	}
	write = &workload.FilePhase{Name: "write", Title: "Checkpoint write", Kind: workload.Create,
		Targets: e.NewTargets(r.dir, own), FileSize: r.plan.Shard, BlockSize: block}
	read = &workload.FilePhase{Name: "read", Title: "Checkpoint read-back", Kind: workload.Read,
		Targets: e.NewTargets(readDir, other), FileSize: r.plan.Shard, BlockSize: block}
	return write, read
}

// measure runs one phase and adds it to the result, with a row per rank when
// the phase is the ranks'.
func (r *run) measure(ctx context.Context, e *workload.Runner, p *workload.FilePhase) (*workload.Result, error) {
	h := r.o.Hooks
	if h.PhaseStart != nil {
		h.PhaseStart(e, p, int64(p.Targets.Len())*((p.FileSize+p.BlockSize-1)/p.BlockSize))
	}
	r.clock.reset()
	res, err := e.Run(ctx, *p)
	if h.PhaseEnd != nil {
		h.PhaseEnd(e, p)
	}
	rp := toPhase(res, p)
	if p.Name != "seq-write" {
		rp.Ranks = r.clock.rows(r.part, p.FileSize, p.Name == "read")
	}
	r.res.Phases = append(r.res.Phases, rp)
	if err != nil && ctx.Err() == nil {
		return res, &runenv.Error{Phase: p.Title, Err: err}
	}
	return res, err
}

// toPhase is the result model's phase: throughput over the slowest rank's
// time (VALUE) and that time (COST).
func toPhase(r *workload.Result, wp *workload.FilePhase) report.PhaseResult {
	p := r.Report()
	p.Value = report.Measure{Value: p.BytesPerSec / float64(units.MiB), Unit: report.UnitMiBPerSec}
	p.Cost = report.Measure{Value: p.Seconds, Unit: report.UnitSeconds}
	op := "write"
	if wp.Kind == workload.Read {
		op = "read"
	}
	p.LatencyOf = units.FormatBytes(wp.BlockSize) + " " + op
	return p
}

func (r *run) params() report.Params {
	o, pl := r.o, r.plan
	return append(report.Params{
		{Key: "model", Label: "Model", Value: o.Model.Name, Display: o.Model.Name},
		{Key: "ranks", Label: "Ranks", Value: pl.Ranks, Display: strconv.Itoa(pl.Ranks)},
		{Key: "threads", Value: r.part.Ranks},
		{Key: "checkpoint_size", Label: "Checkpoint", Value: pl.Total, Display: units.FormatBytes(pl.Total)},
		{Key: "shard_size", Label: "Shard", Value: pl.Shard, Display: units.FormatBytes(pl.Shard)},
		{Key: "model_size", Label: "Full size", Value: o.Model.Bytes, Display: DecimalBytes(o.Model.Bytes)},
		{Key: "block_size", Label: "BlockSize", Value: o.BlockSize, Display: units.FormatBytes(o.BlockSize)},
		report.Switch("direct", "Direct", o.Direct),
	}, report.DataParams(o.Data.Compress, o.Data.Dedupe)...)
}

func randomSeed() uint64 {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}
