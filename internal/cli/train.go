package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/train"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/verdict"
	"github.com/fsbench/fsbench/pkg/object"
)

// TrainOptions are the flags of `fsbench train`.
type TrainOptions struct {
	train.Options
	RunFlags
	// JobFile is -f: a model's job file instead of a preset.
	JobFile string
	// job is the model's job file as read, sent to agents.
	job []byte
	// Cap is --slo and --curve: the sample rates of the training chosen
	// by a search or a curve.
	Cap CapacityFlags

	store                                                          storeFlags
	data                                                           dataFlags
	model, accel, sampleSize, sampleStdev, computeTime, dropCaches string
	distribution                                                   string
	files, perFile, batch, readers, prefetch, epochs               int
	threshold                                                      float64
}

// trainCatalog is what `fsbench train` measures, for --expect.
var trainCatalog = expect.Catalog{Command: "train", Metrics: []expect.Metric{{Name: "generate", Bytes: true}, {Name: "train", Bytes: true}}}

// trainQuick is the --quick preset of train.
var trainQuick = []Preset{{"epochs", "5"}}

func newTrainCmd(app *App) *cobra.Command { return newTrainCmdWith(app, nil) }

// newTrainCmdWith builds the command; runF replaces the run in tests of
// flag parsing and on agents.
func newTrainCmdWith(app *App, runF func(context.Context, *TrainOptions) error) *cobra.Command {
	o := &TrainOptions{Options: train.Options{Seed: 1, GenThreads: 4, Accelerators: 1}}
	cmd := &cobra.Command{
		Use:   "train PATH|URL --model MODEL -p N",
		Short: "Emulate the data loading of AI training: how many accelerators the storage keeps busy",
		Long: `Emulate the data loading of AI training on the file system that holds PATH,
with the model of DLIO, the tool behind MLPerf Storage: generate a dataset
of samples in a new directory under PATH, drop the caches, then train for
--epochs epochs with -p/--threads emulated accelerators (ranks) on each host. Each
epoch the samples are shuffled and split into one shard per rank; per rank,
--read-threads readers read the samples of the next batches (up to
--prefetch batches ahead) while the accelerator "computes" the current one
for --compute-time (a sleep) and waits when the next is not ready.

The result is the accelerator utilisation (AU: compute time over wall time,
the first step of each epoch excluded) with its interval, against the
model's threshold, the samples and bytes per second, and the accelerators'
wait times. An AU whose interval is below the threshold exits with code 3,
however few the steps; one whose interval straddles it, or with too few
steps to pass, warns and exits 0 (3 with --strict; more --dataset-files,
--epochs or --repeat make it judgeable). --quick trains 5 epochs on as many
--dataset-files as the AU's verdict needs (100 measured steps against 90%).
This is an emulation, not an MLPerf result.

Presets (--model, --accelerator-type) are the training workloads of MLPerf
Storage and DLIO, with a dataset small enough for a test machine; -f FILE
loads a model's job file of one's own (see "fsbench train --print-job").
Flags override both.

With --storage, the dataset lives in an object store (the storage types,
URLs and credentials of "fsbench objbench"): one object per file, under a
new prefix (fsbench-train-HOST-TIME-RANDOM/) that is removed at the end,
object by object, unless --keep; --dataset PREFIX trains on a kept one (or
on every object under PREFIX, one sample each, read only). Readers GET whole
objects, or with --samples-per-file over 1 ranged GETs of one sample each
within record objects, into buffers they reuse. Objects already in the
bucket are never written or deleted; a bucket that does not exist is
created and left in place. With --hosts as well, every agent opens the
store itself (credentials from its own environment, or sent over TLS
only) and the hosts make one dataset under the run's key prefix, as on a
shared file system.`,
		Example: `  fsbench train /mnt/jfs --model resnet50 -p 8
  fsbench train /mnt/jfs --model unet3d --accelerator-type a100 -p 4 --epochs 5
  fsbench train /mnt/jfs --model resnet50 --dataset-files 64 --keep
  fsbench train /mnt/jfs --model resnet50 --dataset /mnt/jfs/fsbench-host-123-abcd --find-max
  fsbench train /mnt/jfs --job my-model.yaml -p 2 --hosts node1:7781,node2:7781
  fsbench train --storage minio http://127.0.0.1:9000/train --model resnet50 --samples-per-file 64 --find-max
  fsbench train --storage minio http://minio:9000/train --model resnet50 -p 4 --hosts node1:7781,node2:7781`,
		Args: curveArgs(trainArgs),
	}
	run := hostsCommand[*TrainOptions]{opts: o, flags: &o.RunFlags, runF: runF, cluster: trainCluster, run: runTrain,
		resolve: func(cmd *cobra.Command, args []string) error {
			o.Path = args[0]
			return o.resolve(cmd, app)
		}}.runE(app)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if print, _ := cmd.Flags().GetBool("print-job"); print {
			return printJob(cmd, app, o)
		}
		return run(cmd, args)
	}
	addTrainFlags(cmd, o)
	addDataFlags(cmd, &o.data)
	addCapacityFlags(cmd, &o.Cap)
	o.store.add(cmd, &o.Storage, &o.Object)
	addRunFlags(cmd, &o.RunFlags, trainQuick)
	return cmd
}

func addTrainFlags(cmd *cobra.Command, o *TrainOptions) {
	f := cmd.Flags()
	f.StringVar(&o.model, "model", "resnet50", "the model's preset: "+strings.Join(train.PresetModels(), ", "))
	f.StringVar(&o.accel, "accelerator-type", "h100", "the accelerator of the preset: h100, a100 or v100; dlio for DLIO's workloads that name none (taken when the model has no other)")
	f.StringVarP(&o.JobFile, "job", "f", "", "read the model from this job `FILE` (YAML) instead of a preset")
	f.StringVar(&o.JobFile, oldJobFlag, "", "former name of --job")
	_ = f.MarkHidden(oldJobFlag)
	markFiles(f, fileIn, "job", oldJobFlag)
	f.IntVarP(&o.Accelerators, "threads", "p", 1, "parallel workers on each host: here emulated accelerators (ranks), each with its --read-threads readers")
	f.IntVarP(&o.Accelerators, oldAccelerators, "n", 1, "former spelling of --threads")
	_ = f.MarkHidden(oldAccelerators)
	f.IntVar(&o.epochs, "epochs", 0, "epochs of training (preset: 2)")
	f.IntVar(&o.files, "dataset-files", 0, "files of the whole dataset, not per reader (the dataset's size scales with it)")
	f.IntVar(&o.files, oldTrainFiles, 0, "former spelling of --dataset-files")
	_ = f.MarkHidden(oldTrainFiles)
	f.IntVar(&o.perFile, "samples-per-file", 0, "samples per file: 1 is a file per sample, more are record files read by offset")
	f.StringVar(&o.sampleSize, "sample-size", "", "mean size of a sample (K, M, ...)")
	f.StringVar(&o.sampleStdev, "sample-size-stdev", "", "standard deviation of the samples' sizes")
	f.IntVar(&o.batch, "batch-size", 0, "samples per batch")
	f.IntVar(&o.readers, "read-threads", 0, "readers per accelerator")
	f.IntVar(&o.prefetch, "prefetch", 0, "batches read ahead of the one computed")
	f.StringVar(&o.computeTime, "compute-time", "", "time an accelerator computes on a batch (e.g. 0.224s)")
	f.Float64Var(&o.threshold, "au-threshold", 0, "AU (percent) the run must reach to pass")
	f.Uint64Var(&o.Seed, "seed", o.Seed, "seed of the sample sizes and the shuffles")
	f.StringVar(&o.distribution, "distribution", "uniform", "`DIST` of the samples read: uniform (each epoch a shuffle, every sample once), or drawn from zipf:S, pareto:H, "+
		"normal:SIGMA% or zoned:A/B:... over the whole dataset (a hot set); the result gives the share of reads of the hottest 1% and 10%")
	f.IntVar(&o.GenThreads, "gen-threads", o.GenThreads, "writers generating the dataset")
	f.StringVar(&o.Dataset, "dataset", "", "train on the dataset in `DIR` (with --storage, under the key PREFIX) instead of generating one: one an earlier run kept (--keep), or any directory of files, each file one sample, read-only")
	f.BoolVar(&o.Keep, "keep", false, "keep the dataset for later runs (--dataset)")
	f.BoolVar(&o.Direct, "direct", false, "O_DIRECT writes and reads (sample sizes rounded up to the alignment)")
	f.BoolVar(&o.FindMax, "find-max", false, "search for the largest accelerator count that meets the AU threshold, from -p/--threads up")
	f.StringVar(&o.dropCaches, "drop-caches", "auto", "drop the dataset from the kernel's caches before training: auto or never; SKIP_DROP_CACHES=true disables")
	f.Bool("print-job", false, "print the job file of the preset (a start for one's own) and exit")
	markAgentPath(cmd, "dataset")
}

// resolve builds the options: the preset or job file, then the flags
// given, then checks everything before anything runs.
func (o *TrainOptions) resolve(cmd *cobra.Command, app *App) error {
	if err := o.Cluster.resolve(cmd); err != nil {
		return err
	}
	if err := o.CI.resolve(cmd, trainCatalog); err != nil {
		return err
	}
	if cmd.Flags().Changed("distribution") {
		d, err := skew.Parse(o.distribution)
		if err != nil {
			return Usagef("--distribution: %v", err)
		}
		o.Distribution = d
	}
	if err := o.loadModel(cmd); err != nil {
		return err
	}
	if err := o.override(cmd); err != nil {
		return err
	}
	var err error
	if o.Data, err = o.data.resolve(cmd); err != nil {
		return err
	}
	if o.CI.Quick && o.Dataset == "" && !cmd.Flags().Changed("dataset-files") {
		o.Files = train.QuickFiles(o.Options, len(o.Cluster.Hosts))
	}
	if err := o.store.resolveOptional(app, cmd, o.Path); err != nil {
		return err
	}
	switch o.dropCaches {
	case "auto":
		o.DropCaches = !skipDropCaches(app)
	case "never":
	default:
		return Usagef("--drop-caches must be auto or never (got %q)", o.dropCaches)
	}
	if o.Cluster.active() && o.FindMax {
		return Usagef("--find-max runs on one host")
	}
	if o.Repeat > 1 && o.FindMax {
		return Usagef("--repeat and --find-max: the search already runs training several times; give one of them")
	}
	if err := o.resolveCapacity(cmd); err != nil {
		return err
	}
	if err := o.Options.Check(len(o.Cluster.Hosts)); err != nil {
		return &UsageError{Err: err}
	}
	return o.Output.resolve()
}

// trainArgs wants one PATH, or none with --print-job.
func trainArgs(cmd *cobra.Command, args []string) error {
	if print, _ := cmd.Flags().GetBool("print-job"); print && len(args) == 0 {
		return nil
	}
	return exactArgs(1, "one PATH, the directory to train from (with --storage, the store's URL)")(cmd, args)
}

// defaultAccel picks the accelerator type when none is given and the
// model has presets for one type only (DLIO's workloads that name none).
func (o *TrainOptions) defaultAccel(cmd *cobra.Command) {
	if accels := train.PresetAccelerators(o.model); !cmd.Flags().Changed("accelerator-type") && len(accels) == 1 {
		o.accel = accels[0]
	}
}

// printJob prints the job file of the preset.
func printJob(cmd *cobra.Command, app *App, o *TrainOptions) error {
	o.defaultAccel(cmd)
	text, err := train.PresetText(o.model, o.accel)
	if err != nil {
		return Usagef("--model %s --accelerator-type %s: no such preset (presets: %s)", o.model, o.accel, strings.Join(train.Presets(), ", "))
	}
	_, err = app.IO.Out.Write(text)
	return err
}

// loadModel reads the preset or the job file into the options.
func (o *TrainOptions) loadModel(cmd *cobra.Command) error {
	f := cmd.Flags()
	var m *train.Model
	var err error
	if o.JobFile != "" {
		if f.Changed("model") || f.Changed("accelerator-type") {
			return Usagef("-f %s names its model: --model and --accelerator-type do not go with it", o.JobFile)
		}
		if o.job, err = os.ReadFile(o.JobFile); err != nil {
			return Usagef("-f %s: %v", o.JobFile, sysio.PathCause(err))
		}
		m, err = train.Parse(o.job, o.JobFile)
	} else {
		o.defaultAccel(cmd)
		m, err = train.Preset(o.model, o.accel)
	}
	if err != nil {
		return &UsageError{Err: err}
	}
	m.Apply(&o.Options)
	return nil
}

// override applies the flags given to the model's options.
func (o *TrainOptions) override(cmd *cobra.Command) error {
	f := cmd.Flags()
	if o.Dataset != "" {
		for _, n := range []string{"dataset-files", "samples-per-file", "sample-size", "sample-size-stdev"} {
			if f.Changed(n) {
				return Usagef("--%s shapes a new dataset: it does not go with --dataset (which has its own shape)", n)
			}
		}
	}
	ints := map[string][2]*int{"dataset-files": {&o.files, &o.Files}, "samples-per-file": {&o.perFile, &o.SamplesPerFile},
		"batch-size": {&o.batch, &o.BatchSize}, "read-threads": {&o.readers, &o.ReadThreads},
		"prefetch": {&o.prefetch, &o.Prefetch}, "epochs": {&o.epochs, &o.Epochs}}
	for name, v := range ints {
		if f.Changed(name) {
			*v[1] = *v[0]
		}
	}
	if f.Changed("au-threshold") {
		o.AUThreshold = o.threshold
	}
	for _, s := range []sizeArg{{"sample-size", o.sampleSize, &o.SampleSize, 0}, {"sample-size-stdev", o.sampleStdev, &o.SampleStdev, 0}} {
		if f.Changed(s.flag) {
			if err := parseSizes(s); err != nil {
				return err
			}
		}
	}
	if f.Changed("compute-time") {
		d, err := units.ParseDuration(o.computeTime)
		if err != nil {
			return Usagef("--compute-time: %v", err)
		}
		o.ComputeTime = d
	}
	return nil
}

func runTrain(ctx context.Context, app *App, o *TrainOptions) error {
	var prog *Progress
	target := o.Path
	if o.Storage != "" {
		target = object.RedactURL(o.Path)
	}
	pub := startTrainLive(app, target)
	defer pub.stop()
	o.Hooks = train.Hooks{
		PhaseStart: func(name string, e *engine.Engine, total int64, unit string) {
			title := strings.ToUpper(name[:1]) + name[1:]
			pub.begin(name, title, e)
			prog = app.StartProgress(title, total, unit, func() int64 { return e.Live.Ops.Load() }).from(&e.Live, 1)
		},
		PhaseEnd: func(string) {
			pub.end()
			prog.Done()
		},
		Warn:    func(msg string) { app.Warnf("%s", msg) },
		Created: app.Left.Set,
		Removed: app.Left.Clear,
	}
	if !app.Globals.Quiet && (o.Storage != "" || !notADir(o.Path)) {
		fmt.Fprintf(app.IO.Err, "Training %s on %s from %s\n", o.Model, units.Count(o.Accelerators, "emulated "+o.Accelerator+" accelerator"), target)
	}
	repeat, capRun := o.Repeat, o.capacityRun()
	if capRun != nil {
		repeat = 1 // each rate runs o.Repeat times instead
	}
	res, err := app.measure(ctx, "train", repeat, func(ctx context.Context, res *report.Result) error {
		opts := o.Options
		if capRun != nil {
			opts.Capacity = trainCapacity(app, capRun, res)
		}
		return train.Run(ctx, opts, res)
	})
	if err != nil && !res.Interrupted {
		if errors.Is(err, train.ErrBadInput) {
			return &UsageError{Err: err}
		}
		return app.writeFailed(res, &o.Output, err)
	}
	return app.finishTrain(res, o)
}

// finishTrain judges the AU, evaluates the expectations and writes the
// result.
func (a *App) finishTrain(res *report.Result, o *TrainOptions) error {
	if err := addAUExpectation(res); err != nil {
		return a.writeFailed(res, &o.Output, err)
	}
	return a.finishRun(res, &o.Output, &o.CI)
}

// addAUExpectation records the AU's verdict (verdict.JudgeAU; judged
// here when the run did not) as the run's first expectation: a failing AU
// fails the run (exit 3), one too short to judge warns, and JUnit shows
// either.
func addAUExpectation(res *report.Result) error {
	t := res.Training
	if t == nil || res.Interrupted {
		return nil
	}
	if t.Verdict == "" {
		if err := verdict.JudgeAU(t); err != nil {
			return err
		}
	}
	x := report.Expectation{Expr: fmt.Sprintf("au>=%g%%", t.Threshold), Metric: "au", Op: string(expect.GE),
		Want: t.Threshold, Unit: "%", Measured: expect.RoundSig(t.AU, 6), Verdict: t.Verdict,
		Pass: t.Verdict != report.VerdictFail, Reason: t.VerdictReason}
	if t.Verdict == report.VerdictFail {
		x.Reason = fmt.Sprintf("AU %.2f%% is under the threshold %g%%", t.AU, t.Threshold)
		if t.AUHigh != nil {
			x.Reason += fmt.Sprintf(" (%g%% interval %.2f-%.2f%%)", 100*t.AUConfidence, *t.AULow, *t.AUHigh)
		}
	}
	res.Expectations = append(res.Expectations, x)
	return nil
}

// trainCluster makes the run of train on the agents: each runs
// -p/--threads ranks; the hosts generate the dataset together (in the
// run's directory, or with --storage under its key prefix), and each rank
// reads samples any host wrote.
func trainCluster(cmd *cobra.Command, args []string, o *TrainOptions) (*clusterRun, error) {
	c, err := o.newClusterRun("train", cmd, args)
	if err != nil {
		return nil, err
	}
	dir := storeTarget(o.Storage, o.Path)
	if dir != "" {
		c.left = runDirLeft(dir)
	} else {
		c.left = objectsLeft(o.Path, func(run string, _ int) string { return trainPrefix(run) })
	}
	c.secrets = o.Storage != "" && storeSecrets(cmd, o.Path)
	if o.Dataset == "" && dir != "" {
		c.job.Need = int64(float64(o.Files*o.SamplesPerFile)*float64(o.SampleSize)*1.1) / int64(len(o.Cluster.Hosts))
	}
	c.finish = mergeTraining
	c.judge = addAUExpectation
	if c.capacity = o.capacityRun(); c.capacity != nil {
		c.probes = &trainProbes{samples: c.capacity.scale(), share: o.Dataset == "", keep: o.Keep, path: o.Path}
	}
	return c, nil
}

// mergeTraining puts the hosts' ranks and measured waits together in the
// merged result.
func mergeTraining(res *report.Result, parts []cluster.HostResult) error {
	var ts []*report.Training
	for _, h := range parts {
		if h.Result != nil && h.Result.Training != nil {
			for i := range h.Result.Training.Ranks {
				h.Result.Training.Ranks[i].Host = h.Address
			}
			ts = append(ts, h.Result.Training)
		}
	}
	t, err := report.MergeTraining(ts)
	if err != nil {
		return fmt.Errorf("merge the hosts' training figures: %w", err)
	}
	res.Training = t
	p := res.FindPhase("train")
	if t == nil || p == nil {
		return nil
	}
	if err := verdict.JudgeAU(t); err != nil {
		return err
	}
	p.Cost = train.AUMeasure(t)
	t.SamplesPerSec, t.BytesPerSec = p.ItemsPerSec, p.BytesPerSec
	return nil
}
