package train

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/verdict"
	"github.com/fsbench/fsbench/pkg/object"
)

// Options are the parameters of one training run.
type Options struct {
	// Path is the directory to train from, or with Storage the URL of the
	// object store (pkg/object's driver Storage) and Object its
	// configuration.
	Path        string
	Storage     string
	Object      object.Config `json:"-"`
	Model       string
	Accelerator string
	// Accelerators is the number of emulated accelerators (ranks) on this
	// host.
	Accelerators   int
	Files          int
	SamplesPerFile int
	SampleSize     int64 // mean, bytes
	SampleStdev    int64
	BatchSize      int
	ReadThreads    int // per accelerator
	Prefetch       int // batches read ahead of the one computed
	Epochs         int
	ComputeTime    time.Duration // per batch
	AUThreshold    float64       // percent
	Seed           uint64
	// Distribution draws each sample a reader reads from a skewed
	// distribution over the whole dataset (sample 0 the hottest, for
	// zipf), instead of the epoch's shuffle: a hot set, as a cache sees it.
	Distribution skew.Spec
	GenThreads   int // writers of the dataset
	// Data is how the dataset generated compresses and repeats
	// (--compress-ratio, --dedupe-ratio); the zero Data neither.
	Data   pattern.Data
	Direct bool
	Keep   bool
	// Hold keeps a complete dataset made on many hosts (RunDir on a file
	// system) for later runs of the caller's, which train on it as
	// Dataset and remove it with RemoveShare; unlike Keep, it says
	// nothing of it.
	Hold       bool
	DropCaches bool
	// Dataset is a directory of an earlier run's dataset (kept with Keep)
	// to train on instead of generating one.
	Dataset string
	// FindMax searches for the largest accelerator count whose AU meets
	// the threshold, from Accelerators up.
	FindMax bool
	// Capacity, if set, replaces the training run once the dataset is
	// ready (made, or opened): it is given train, which trains on the
	// dataset at an open-loop rate, as many times as it calls it.
	Capacity func(ctx context.Context, train Trainer) error
	Hooks    Hooks
	// rate, above 0, is the open loop of a Trainer's run: samples per
	// second across this host's accelerators.
	rate float64

	// The fields below serve a run on many hosts (fsbench agent). RunDir
	// is the run's directory, shared by the hosts, in which the dataset is
	// made (it may exist), or with Storage its key prefix (ending in "/",
	// which every host claims before any host writes); Host is this host's index of Hosts. Ranks are
	// numbered across hosts: host h runs ranks h*Accelerators and on.
	RunDir string `json:"-"`
	Host   int    `json:"-"`
	Hosts  int    `json:"-"`
	// Clock makes each rank's clock; nil is the real one (tests give
	// another).
	Clock func() Clock `json:"-"`
}

// Trainer runs one training on the dataset and returns its train phase.
// At rate samples per second (across this host's accelerators; 0: as fast
// as the readers go) it is an open loop: each accelerator asks for its
// batches on a steady schedule, whatever the storage did, and a batch's
// wait counts from when it was due (latency corrected for coordinated
// omission, as bench's --rate); the accelerators compute nothing, the
// schedule standing for their compute time. It runs the options' epochs,
// or more, until the phase holds at least minSteps steps. The caches are
// dropped before each run but the first.
type Trainer func(ctx context.Context, rate float64, minSteps int64) (report.PhaseResult, error)

// Hooks are the run's callbacks to its caller; all are optional.
type Hooks struct {
	// PhaseStart is called before each measured phase (generate, train)
	// with its engine and its progress units; PhaseEnd after it.
	PhaseStart func(name string, e *engine.Engine, total int64, unit string)
	PhaseEnd   func(name string)
	// Finished is called after the last phase, before the dataset is
	// removed (also on failure).
	Finished func()
	// Created is called once the run's directory exists, with a phrase
	// naming it and how to remove it; Removed once it is gone.
	Created func(left string)
	Removed func()
	Warn    func(msg string)
}

// Limits of the options.
const (
	maxAccelerators = 4096
	maxThreads      = 1024
	maxPrefetch     = 1 << 16
	// A dataset's shape is held in memory (8 bytes a sample) and its bytes
	// must add up within an int64.
	maxSamples = 1 << 25
	maxSample  = 8 << 30
)

// ErrBadInput is wrapped by errors the user fixes by changing the command
// line or the job file.
var ErrBadInput = errors.New("bad input")

type badInput struct{ err error }

func (b *badInput) Error() string   { return b.err.Error() }
func (b *badInput) Unwrap() []error { return []error{ErrBadInput, b.err} }

func badf(format string, args ...any) error { return &badInput{fmt.Errorf(format, args...)} }

// Validate checks the options before anything touches the storage.
func (o *Options) Validate() error {
	if err := o.checkCounts(); err != nil {
		return err
	}
	switch {
	case o.SampleSize <= 0:
		return badf("--sample-size must be greater than 0")
	case o.SampleStdev < 0:
		return badf("--sample-size-stdev must not be negative")
	case o.SampleSize > maxSample || o.SampleStdev > maxSample:
		return badf("--sample-size and --sample-size-stdev must not be over %s", units.FormatBytes(maxSample))
	case o.ComputeTime < 0:
		return badf("--compute-time must not be negative")
	case !(o.AUThreshold >= 0 && o.AUThreshold <= 100):
		return badf("--au-threshold %g is not a percentage between 0 and 100", o.AUThreshold)
	case o.Path == "":
		return badf("a PATH to train from is required")
	case o.Hosts > 1 && o.FindMax:
		return badf("--find-max runs on one host")
	case o.Capacity != nil && o.FindMax:
		return badf("--find-max searches accelerator counts, --slo and --curve sample rates: give one of them")
	case o.Storage != "" && o.Direct:
		return badf("--direct is for a file system; an object store is read with GETs")
	case o.Dataset != "" && !o.Data.Plain():
		return badf("--dataset writes nothing: --compress-ratio and --dedupe-ratio shape a dataset generated (the kept one's are in its %s)", markerName)
	}
	if err := o.Data.Check(); err != nil {
		return badf("%v", err)
	}
	return nil
}

// Check validates the options and whether a run on the given number of
// hosts can split the dataset (the one to make, or o.Dataset) between its
// accelerators, without touching the storage.
func (o *Options) Check(hosts int) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Dataset != "" && o.Storage != "" {
		return nil // the store's dataset is read, and checked, when the run starts
	}
	samples := o.Files * o.SamplesPerFile
	if o.Dataset != "" {
		ds, err := OpenDataset(o.Dataset)
		if err != nil {
			return err
		}
		samples = ds.Samples()
	}
	_, err := NewPlan(samples, o.Accelerators*max(hosts, 1), o.BatchSize)
	return err
}

// checkCounts checks the counts of the options.
func (o *Options) checkCounts() error {
	for _, c := range []struct {
		flag   string
		v, min int
		max    int
	}{
		{"threads", o.Accelerators, 1, maxAccelerators},
		{"dataset-files", o.Files, 1, 1 << 30},
		{"samples-per-file", o.SamplesPerFile, 1, 1 << 30},
		{"batch-size", o.BatchSize, 1, 1 << 30},
		{"read-threads", o.ReadThreads, 1, maxThreads},
		{"prefetch", o.Prefetch, 0, maxPrefetch},
		{"epochs", o.Epochs, 1, 1 << 20},
		{"gen-threads", o.GenThreads, 1, maxThreads},
	} {
		if c.v < c.min || c.v > c.max {
			return badf("--%s must be between %d and %d (got %d)", c.flag, c.min, c.max, c.v)
		}
	}
	if int64(o.Files)*int64(o.SamplesPerFile) > maxSamples {
		return badf("%d files of %d samples is more than %d samples", o.Files, o.SamplesPerFile, maxSamples)
	}
	return nil
}

// ranks is the number of accelerators of the whole run.
func (o *Options) ranks() int { return o.Accelerators * max(o.Hosts, 1) }

// Plan is how the samples of an epoch fall to the ranks.
type Plan struct {
	Samples int // in the dataset
	Ranks   int
	Shard   int // samples per rank
	Steps   int // batches per rank and epoch
	Batch   int
}

// Read is the samples read per epoch: Steps x Batch x Ranks.
func (p Plan) Read() int64 { return int64(p.Steps) * int64(p.Batch) * int64(p.Ranks) }

// Dropped is the samples per epoch that no rank reads.
func (p Plan) Dropped() int64 { return int64(p.Samples) - p.Read() }

// NewPlan splits samples over ranks: each rank gets samples/ranks of them
// (the remainder goes to none), and reads whole batches of its share; the
// samples that do not fill a batch are dropped, as DLIO's drop_last. The
// first step of an epoch is not measured, so a rank needs two.
func NewPlan(samples, ranks, batch int) (Plan, error) {
	p := Plan{Samples: samples, Ranks: ranks, Batch: batch}
	if ranks > samples {
		return p, badf("%d accelerators for %d samples: each accelerator needs samples of its own; add --dataset-files or use fewer accelerators", ranks, samples)
	}
	p.Shard = samples / ranks
	p.Steps = p.Shard / batch
	if p.Steps < 2 {
		return p, badf("each of %d accelerators gets %d samples, %d batches of %d per epoch; at least 2 are needed (the first step is not measured): add --dataset-files, or lower --batch-size or -p/--threads",
			ranks, p.Shard, p.Steps, batch)
	}
	return p, nil
}

func (o *Options) describe() string {
	return fmt.Sprintf("%d files x %d samples of %s", o.Files, o.SamplesPerFile, units.FormatBytes(o.SampleSize))
}

// QuickFiles is the number of files of a smoke run (--quick) of o on
// hosts hosts (0: one): the fewest whose epochs hold the measured steps
// an AU against o.AUThreshold needs (verdict.MinSteps), the first step
// of each epoch, which is not measured, aside.
func QuickFiles(o Options, hosts int) int {
	ranks := o.Accelerators * max(hosts, 1)
	if ranks < 1 || o.Epochs < 1 || o.BatchSize < 1 || o.SamplesPerFile < 1 {
		return o.Files
	}
	per := max(o.Epochs*ranks, 1)
	steps := (int(verdict.MinSteps(o.AUThreshold))+per-1)/per + 1
	samples := steps * ranks * o.BatchSize
	return (samples + o.SamplesPerFile - 1) / o.SamplesPerFile
}
