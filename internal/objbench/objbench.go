// Package objbench is `fsbench objbench`: it checks that an object store
// behaves as a storage backend must (JuiceFS objbench's functional checks
// and a few more), then measures it (JuiceFS's ten performance items),
// through pkg/object. It knows nothing of the command line.
//
// It touches no object outside the run's own key prefix, and reaches stores
// only through pkg/object.
package objbench

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/objstore"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// Options are the parameters of one objbench run.
type Options struct {
	Storage string // driver name: s3, minio, cos, file, nfs
	URL     string
	Object  object.Config

	BlockSize       int64 // size of each object of the "big object"
	BigObjectSize   int64 // uploaded in BlockSize objects
	SmallObjectSize int64
	SmallObjects    int
	Threads         int

	// Limits of each performance item, as bench's: with a Duration (or
	// Ops) an item repeats its objects until the limit instead of doing
	// each once; Rate paces it (open loop); Interval cuts it into a time
	// series. Delete always does each object once.
	Duration time.Duration
	Warmup   time.Duration
	Ops      int64
	Rate     float64
	Interval time.Duration
	// Verify checks every downloaded byte against what was uploaded.
	Verify bool
	// DropCaches is how a file store's objects leave the kernel's caches
	// before the items that get them (runenv's auto, always or never);
	// SkipDropCaches is SKIP_DROP_CACHES=true. Other stores ignore them.
	DropCaches     string
	SkipDropCaches bool

	SkipFunctional bool
	Keep           bool // keep the run's objects
	// ListExisting downloads the objects already under ExistingPrefix
	// (RunExisting) instead of checking and measuring with objects of the
	// run's own.
	ListExisting   bool
	ExistingPrefix string
	// Prefix, if set, is the run's own key prefix (ending in "/") instead
	// of a new one: a run on many hosts gives each host its own.
	Prefix string `json:"-"`
	// CleanupWait bounds the clean-up, waiting for a store that stopped
	// answering included (2 minutes when 0).
	CleanupWait time.Duration
	// BigCheckSize is the size of the "put a big object" check (256 MiB
	// by default, as JuiceFS).
	BigCheckSize int64

	// Workload, if set, runs this object workload (see Workload) instead
	// of the functional checks and JuiceFS's items.
	Workload string
	// Objects is how many objects a workload prepares before its timed
	// phase (or puts, for put, without another limit).
	Objects int
	// Distribution draws the get and stat workloads' picks of the
	// prepared objects (zipf, a hot zone, ...); uniform when zero.
	Distribution skew.Spec
	// Data is how the content of the objects written compresses and
	// repeats (--compress-ratio, --dedupe-ratio).
	Data pattern.Data
	// Sizes is the sizes of the objects a workload writes.
	Sizes SizeDist
	// Range, if set, makes gets read this many bytes at a random offset.
	Range int64
	// Batch, if set, makes the delete workload delete this many objects a
	// request (S3's multi-object delete) instead of one.
	Batch int
	// Mix weighs the operations of the mixed workload.
	Mix Mix
	// AutoTerm ends a workload's timed phase once its throughput is stable.
	AutoTerm AutoTerm
	// Seed, if not 0, fixes the random choices of a workload (operations,
	// sizes, offsets): runs with one seed make the same choices.
	Seed uint64
	// Endpoints, if set, are other scheme://host:port of the same store,
	// used in turn for every request, with figures per endpoint.
	Endpoints []string
	// PartSize and PartsInFlight shape the multipart workload's uploads.
	PartSize      int64
	PartsInFlight int
	// Journal, if set, records the workload's acknowledged puts and
	// deletes (see CheckJournal).
	Journal Journal `json:"-"`

	Hooks Hooks
}

// Hooks let the caller show progress; all are optional.
type Hooks struct {
	// Info is told of the run's stages ("Start Functional Testing ...").
	Info func(msg string)
	// Warn is told of every warning, which is also kept in the result.
	Warn func(msg string)
	// ItemStart is called before a performance item with what its
	// progress counts (objects, or the pages, operations or cycles of a
	// workload), how many it will do and a function returning how many
	// are done; ItemEnd after it.
	ItemStart func(title, unit string, total int64, poll func() int64)
	ItemEnd   func(title string)
	// ItemMeasured is called as an item ends, before ItemEnd, with the
	// units its progress counted and their time as its result counts them
	// (the warm-up left out), so that a progress line can end with the
	// table's rate.
	ItemMeasured func(title string, done int64, elapsed time.Duration)
	// Check is called after each functional check.
	Check func(c report.Check)
	// Interval is called at the end of each interval of an item, with
	// Options.Interval set, from a goroutine of the engine's.
	Interval func(title string, s report.Sample)
	// Created is called once the run's prefix is in use, with a phrase
	// that names it and says how to remove it (package leftover); Removed
	// once everything under it is deleted. In between, a process that ends
	// abruptly leaves it behind.
	Created func(left string)
	Removed func()
}

// Defaults are JuiceFS objbench's defaults.
func Defaults() Options {
	return Options{
		Storage:         "file",
		BlockSize:       4 * units.MiB,
		BigObjectSize:   units.GiB,
		SmallObjectSize: 128 * units.KiB,
		SmallObjects:    100,
		Threads:         4,
		Verify:          true,
		BigCheckSize:    256 * units.MiB,
		Objects:         1000,
		Sizes:           FixedSize(128 * units.KiB),
		Mix:             DefaultMix,
		PartSize:        5 * units.MiB,
		PartsInFlight:   4,
		AutoTerm:        AutoTerm{MinDur: 15 * time.Second, Pct: 7.5, Samples: 7},
	}
}

// Limits of the options.
const (
	maxThreads   = 1024
	maxBlockSize = units.GiB
	maxObjects   = 1_000_000
)

// Validate checks the options before anything is opened. Its errors are the
// user's to fix.
func (o *Options) Validate() error {
	switch {
	case o.URL == "":
		return errors.New("a storage URL (or directory) is required")
	case o.Threads < 1 || o.Threads > maxThreads:
		return fmt.Errorf("--threads must be between 1 and %d (got %d)", maxThreads, o.Threads)
	case o.BlockSize <= 0 || o.BlockSize > maxBlockSize:
		return fmt.Errorf("--block-size must be more than 0 and at most %s", units.FormatBytes(maxBlockSize))
	case o.BigObjectSize <= 0:
		return errors.New("--big-object-size must be more than 0")
	case o.SmallObjectSize <= 0 || o.SmallObjectSize > maxBlockSize:
		return fmt.Errorf("--small-object-size must be more than 0 and at most %s", units.FormatBytes(maxBlockSize))
	case o.SmallObjects < 1 || o.SmallObjects > maxObjects:
		return fmt.Errorf("--small-objects must be between 1 and %d (got %d), as in juicefs objbench; 0 does not turn the small objects off (bench's --small-file-count 0 does)", maxObjects, o.SmallObjects)
	case o.bigCount() > maxObjects:
		return fmt.Errorf("--big-object-size / --block-size makes %d objects, more than %d", o.bigCount(), maxObjects)
	case o.BigCheckSize < 0:
		return errors.New("the big-object check size must not be negative")
	case o.Duration < 0, o.Warmup < 0, o.Ops < 0, o.Interval < 0:
		return errors.New("--duration, --warmup, --ops and --interval must not be negative")
	case o.Warmup > 0 && o.Duration == 0:
		return errors.New("--warmup needs --duration")
	}
	if err := engine.CheckRate(o.Rate, int(o.bigCount())+o.SmallObjects, o.Ops, o.Duration); err != nil {
		return fmt.Errorf("--rate: %w", err)
	}
	if err := o.checkEndpoints(); err != nil {
		return err
	}
	return o.checkWorkload()
}

// GCPercent is the garbage collector's target (GOGC) that suits a run of
// o. A run keeps its blocks alive and makes garbage with every request;
// the default GOGC of 100 would let its heap grow to twice the blocks.
// 25 keeps the footprint small (about 30 MiB of heap at -p 4 with 4 MiB
// blocks) where the blocks are most of the heap. A workload of objects
// under smallWorkloadObject (256 KiB) holds little and makes its garbage
// in many small requests: there 25 would mean a collection every few
// hundred requests and a tenth of the client's CPU (a stat workload at
// -p 4), so it gets 100, which costs it a few MiB.
func (o *Options) GCPercent() int {
	if o.Workload != "" && o.Sizes.Largest() < smallWorkloadObject {
		return 100
	}
	return 25
}

// smallWorkloadObject is the object size below which a workload runs with
// the default GOGC (see GCPercent).
const smallWorkloadObject = 256 << 10

func (o *Options) bigCount() int64 { return (o.BigObjectSize + o.BlockSize - 1) / o.BlockSize }

// Error is a failure of the run, naming the stage it happened in.
type Error struct {
	Stage string // open, prepare, functional, performance
	Err   error
}

func (e *Error) Error() string {
	// A store's error of the stage's own operation names it already.
	if oe := (*object.Error)(nil); errors.As(e.Err, &oe) && oe.Op == e.Stage {
		return e.Err.Error()
	}
	return e.Stage + ": " + e.Err.Error()
}
func (e *Error) Unwrap() error { return e.Err }

// ErrBadInput is wrapped by errors the user can fix by changing the command
// line: an unknown storage type, a URL that does not parse.
var ErrBadInput = errors.New("bad input")

type badInput struct{ err error }

func (b *badInput) Error() string   { return b.err.Error() }
func (b *badInput) Unwrap() []error { return []error{ErrBadInput, b.err} }

// run is the state of one run.
type run struct {
	o      Options
	res    *report.Result
	base   object.Storage // the store as given
	own    object.Storage // base under the run's own prefix
	store  object.Storage // own, watched: what the checks and items use
	prefix string
	pat    *pattern.Pattern
	seed   uint64
	eng    *engine.Engine
	// big and small are the keys (numbers) of the big and small objects
	// the items have put so far.
	big, small []int
	// objs is the objects a workload prepared, sorted by key.
	objs []objRef
	// x is the state of endpoints, versions and the steps of operations.
	x extras
	// local is the cache drops of a file store before its gets.
	local localReads
}

// Run checks and measures the store, filling res. It returns the result
// measured so far with any error; on cancellation (Ctrl-C) res is marked
// interrupted and the error wraps ctx.Err(). Every key it writes is under
// a new prefix, removed at the end unless Keep is set; nothing else in the
// bucket is written or deleted.
func Run(ctx context.Context, o Options, res *report.Result) error {
	if o.ListExisting {
		return RunExisting(ctx, o, res)
	}
	if err := o.Validate(); err != nil {
		return &badInput{err}
	}
	r := &run{o: o, res: res}
	if o.Workload == "" && (o.Threads > o.SmallObjects || int64(o.Threads) > o.bigCount()) {
		n := min(int64(o.SmallObjects), o.bigCount())
		r.warn("%s are more than the objects to move; using %d", units.Count(o.Threads, "thread"), n)
		r.o.Threads = int(n)
	}
	if r.o.Seed == 0 {
		r.o.Seed = pattern.RandomSeed() // in the parameters: a run can be repeated
	}
	if r.o.Object.Threads == 0 {
		r.o.Object.Threads = r.o.Threads
	}
	o = r.o
	res.Target = report.Target{Storage: o.Storage, URL: object.RedactURL(o.URL)}
	res.Parameters, res.Threads = o.params(), o.Threads

	base, err := r.openStore(ctx, res)
	if err != nil {
		return err
	}
	defer base.Close()
	r.base = base
	res.Target.URL = base.String()

	r.prefix = o.Prefix
	if r.prefix == "" {
		r.prefix = newPrefix()
	}
	if err := r.prepare(ctx); err != nil {
		if ctx.Err() != nil {
			res.Interrupted = true
			return ctx.Err()
		}
		return &Error{"prepare", err}
	}
	r.own = object.WithPrefix(base, r.prefix)
	r.setupLocalReads()
	if o.Hooks.Created != nil {
		o.Hooks.Created(r.leftover())
	}
	r.seed = o.Seed
	r.pat = pattern.NewData(r.seed, o.Data)
	r.newEngine()
	err = r.measure(ctx)
	r.cleanup(ctx, err)
	if err == nil && ctx.Err() != nil {
		// Ctrl-C during the clean-up: every item is complete, and the run
		// still ends as interrupted.
		res.Interrupted = true
		err = ctx.Err()
	}
	return err
}

// measure runs the functional checks and the performance items on the
// watched store. A store that stops answering ends them at once with a
// DownError, instead of failing every remaining operation one by one.
func (r *run) measure(ctx context.Context) error {
	wctx, down := context.WithCancelCause(ctx)
	defer down(nil)
	r.store = watch(r.own, r.base.String(), down)
	stopped := func(stage string) error {
		if ctx.Err() != nil {
			r.res.Interrupted = true
			return ctx.Err()
		}
		if wctx.Err() != nil {
			err := context.Cause(wctx)
			r.warn("stopped the %s tests: %v", stage, err)
			return &Error{stage, err}
		}
		return nil
	}
	if r.o.Workload != "" {
		err := r.runWorkload(wctx)
		if serr := stopped("workload"); serr != nil {
			return serr
		}
		return err
	}
	if !r.o.SkipFunctional {
		r.info("Start Functional Testing ...")
		r.functional(wctx)
		if err := stopped("functional"); err != nil {
			return err
		}
	}
	r.info("Start Performance Testing ...")
	r.performance(wctx)
	return stopped("performance")
}

// leftover names what the run leaves behind if it ends before its clean-up.
func (r *run) leftover() string { return objstore.Leftover(r.own) }

func timeoutOf(c object.Config) time.Duration { return objstore.Timeout(c) }

func (r *run) info(msg string) {
	if r.o.Hooks.Info != nil {
		r.o.Hooks.Info(msg)
	}
}

func (r *run) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.res.Warnings = append(r.res.Warnings, msg)
	if r.o.Hooks.Warn != nil {
		r.o.Hooks.Warn(msg)
	}
}

// newPrefix is the run's own key prefix: a name no other run and no user
// object has.
func newPrefix() string { return objstore.NewPrefix("objbench") }

// prepare makes sure the bucket exists and the credentials work, within
// bounded time, before anything is written (objstore.Claim).
func (r *run) prepare(ctx context.Context) error {
	created, err := objstore.Claim(ctx, r.base, r.prefix, timeoutOf(r.o.Object))
	if created {
		r.x.createdBucket = true
		r.warn("%s", objstore.CreatedNote(r.base))
	}
	return err
}

func (o *Options) params() report.Params {
	if o.Workload != "" {
		return o.workloadParams()
	}
	ps := report.Params{
		{Key: "storage", Label: "", Value: o.Storage},
		{Key: "block_size", Label: "BlockSize", Value: o.BlockSize, Display: units.FormatBytes(o.BlockSize)},
		{Key: "big_object_size", Label: "BigObjectSize", Value: o.BigObjectSize, Display: units.FormatBytes(o.BigObjectSize)},
		{Key: "small_object_size", Label: "SmallObjectSize", Value: o.SmallObjectSize, Display: units.FormatBytes(o.SmallObjectSize)},
		{Key: "small_objects", Label: "SmallObjects", Value: o.SmallObjects, Display: strconv.Itoa(o.SmallObjects)},
		{Key: "threads", Label: "NumThreads", Value: o.Threads, Display: strconv.Itoa(o.Threads)},
		{Key: "skip_functional_tests", Label: "", Value: o.SkipFunctional},
		{Key: "retries", Label: "", Value: o.Object.Retries},
		{Key: "checksum", Label: "", Value: checksumOf(o.Object)},
		{Key: "storage_class", Label: "", Value: o.Object.StorageClass},
		{Key: "sign_payload", Label: signLabel(o.Storage), Value: o.Object.SignPayload},
		{Key: "verify", Label: "", Value: o.Verify},
	}
	return append(append(ps, o.moreParams()...), o.limitParams()...)
}

// signLabel shows whether payloads are signed on the header line of the
// stores that sign requests, and nowhere else.
func signLabel(storage string) string {
	switch storage {
	case "s3", "minio", "cos":
		return "SignPayload"
	}
	return ""
}

func checksumOf(c object.Config) string {
	if c.Checksum == "" {
		return "when-required"
	}
	return c.Checksum
}

// openStore opens the store within its limit (objstore.Open); an error
// is bad input for an unknown driver or an unparsable URL, and marks res
// interrupted when ctx ended.
func (r *run) openStore(ctx context.Context, res *report.Result) (object.Storage, error) {
	base, err := objstore.Open(ctx, timeoutOf(r.o.Object), r.open)
	switch {
	case err == nil:
		return base, nil
	case ctx.Err() != nil:
		res.Interrupted = true
		return nil, ctx.Err()
	case errors.Is(err, objstore.ErrBadInput):
		return nil, &badInput{err}
	}
	return nil, &Error{"open", err}
}
