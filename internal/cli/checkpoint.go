package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/checkpoint"
	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/live"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
	"github.com/fsbench/fsbench/pkg/object"
)

// CheckpointOptions are the flags of `fsbench checkpoint`.
type CheckpointOptions struct {
	checkpoint.Options
	RunFlags

	store                            storeFlags
	model, size, blockSize, partSize string
	data                             dataFlags
}

func newCheckpointCmd(app *App) *cobra.Command {
	return newCheckpointCmdWith(app, nil)
}

// newCheckpointCmdWith builds the command; runF replaces the run in tests
// of flag parsing and on an agent.
func newCheckpointCmdWith(app *App, runF func(context.Context, *CheckpointOptions) error) *cobra.Command {
	o := &CheckpointOptions{}
	cmd := &cobra.Command{
		Use:   "checkpoint PATH|URL [--model NAME] [-p N] [--size SIZE]",
		Short: "Emulate saving and restoring an AI model's checkpoint, as MLPerf Storage does",
		Long: `Emulate the checkpointing workload of MLPerf Storage v2 on the file system
that holds PATH. N ranks on each host (-p/--threads; default the model's
MLPerf count over all hosts together) start together: each writes its
shard of the checkpoint (the total over the ranks) and fsyncs it; the kernel's caches are dropped; then each rank reads back a
shard another rank wrote and checks it byte for byte. Before that, the same
total is written as one file by one stream, so the table shows what the
checkpoint's pattern costs.

The checkpoint is scaled down to --size (default 1G, which fits a test
machine); --size full writes the model's real size. A size larger than the
free space is refused. Each shard is the total over the ranks, rounded down
to a multiple of 4 KiB. Times are the slowest rank's; throughput is the
total over that time; -v adds a row per rank.

With --hosts, each agent runs -p ranks (without -p, the model's count
must be a multiple of the host count, spread evenly) and host i's ranks
read the shards written on host i+1: PATH must be one shared file system seen by every host.

With --storage, the checkpoint goes to an object store (the storage types,
URLs and credentials of "fsbench objbench"): each rank uploads its shard as
one object in --part-size parts, --parts-in-flight at a time (one streamed
PUT where the store has no multipart upload), then each rank reads back
another rank's shard with --parts-in-flight ranged GETs of --part-size at a
time and checks every byte. The shards are under a new prefix
(fsbench-checkpoint-HOST-TIME-RANDOM/) and deleted by their keys at the end
unless --keep; nothing else in the bucket is written or deleted. There is no
sequential single-stream row, no cache to drop and no --direct. With
--hosts as well, every agent opens the store itself (credentials from its
own environment, or sent over TLS only); host i's ranks write under its own
prefix of the run and read back the shards of host i+1.

These are fsbench's figures, not an MLPerf Storage result.`,
		Example: `  fsbench checkpoint /mnt/jfs --model llama3-8b
  fsbench checkpoint /mnt/jfs --model llama3-70b --size 8G -p 16 -v
  fsbench checkpoint /mnt/jfs --model llama3-8b --size full --direct -o json > ckpt.json
  fsbench checkpoint /mnt/jfs --model llama3-405b --size 64G --hosts n1:7781,n2:7781
  fsbench checkpoint --storage minio http://127.0.0.1:9000/ckpt --size 2G -p 4 --parts-in-flight 8`,
		Args: exactArgs(1, "one PATH, the directory to checkpoint in"),
		RunE: hostsCommand[*CheckpointOptions]{opts: o, flags: &o.RunFlags, runF: runF, cluster: checkpointCluster, run: runCheckpoint,
			resolve: func(cmd *cobra.Command, args []string) error {
				o.Path = args[0]
				return o.resolve(cmd, app)
			}}.runE(app),
	}
	f := cmd.Flags()
	f.StringVar(&o.model, "model", checkpoint.DefaultModel, "the checkpoint to emulate: "+strings.Join(checkpoint.ModelNames(), ", "))
	f.IntVarP(&o.RanksPerHost, "threads", "p", 0, "parallel workers on each host: here ranks, each writing and reading back its shard (default: the model's MLPerf count, 8 to 1024, over all hosts together)")
	f.IntVar(&o.Ranks, oldRanks, 0, "former spelling: ranks on all hosts together")
	_ = f.MarkHidden(oldRanks)
	f.StringVar(&o.size, "size", "1G", "total checkpoint size, scaled down to fit a test machine; 'full' for the model's")
	f.StringVar(&o.blockSize, "block-size", "1M", "size of each read and write call")
	f.BoolVar(&o.Direct, "direct", false, "use O_DIRECT, bypassing the page cache")
	f.BoolVar(&o.Keep, "keep", false, "keep the checkpoint's files instead of removing them")
	f.StringVar(&o.DropCaches, "drop-caches", runenv.DropAuto, "drop kernel caches before the read-back: auto, always, never; SKIP_DROP_CACHES=true disables")
	f.StringVar(&o.partSize, "part-size", "16M", "with --storage: size of each uploaded part and of each ranged GET of the read-back")
	f.IntVar(&o.PartsInFlight, "parts-in-flight", checkpoint.DefaultPartsInFlight, "with --storage: parts each rank uploads, and ranged GETs it reads, at a time")
	o.store.add(cmd, &o.Storage, &o.Object)
	addDataFlags(cmd, &o.data)
	addRunFlags(cmd, &o.RunFlags, []Preset{{"size", "256M"}, {"block-size", "256K"}})
	_ = f.MarkHidden("read-others") // always so: a host reads the next host's shards
	return cmd
}

// resolve checks every flag before anything runs.
func (o *CheckpointOptions) resolve(cmd *cobra.Command, app *App) error {
	if err := o.Cluster.resolve(cmd); err != nil {
		return err
	}
	if err := o.CI.resolve(cmd, expect.Checkpoint); err != nil {
		return err
	}
	m, err := checkpoint.FindModel(o.model)
	if err != nil {
		return Usagef("--model: %v", err)
	}
	o.Model = m
	if o.Data, err = o.data.resolve(cmd); err != nil {
		return err
	}
	if err := o.parseSizes(cmd); err != nil {
		return err
	}
	if err := o.resolveStore(cmd, app); err != nil {
		return err
	}
	o.SkipDropCaches = o.SkipDropCaches || skipDropCaches(app)
	if o.Cluster.active() {
		o.Hosts = len(o.Cluster.Hosts)
	}
	if _, _, err := o.Options.Resolve(); err != nil {
		return &UsageError{Err: err}
	}
	o.Hosts = 0 // the agents are told their place
	if st, err := os.Stat(o.Path); err == nil && !st.IsDir() && !o.Cluster.active() && o.Storage == "" {
		return Usagef("PATH %s is not a directory: give the directory to checkpoint in", o.Path)
	}
	return o.Output.resolve()
}

// resolveStore checks the flags of a checkpoint in an object store.
func (o *CheckpointOptions) resolveStore(cmd *cobra.Command, app *App) error {
	if err := o.store.resolveOptional(app, cmd, o.Path); err != nil {
		return err
	}
	f := cmd.Flags()
	if o.Storage == "" {
		for _, n := range []string{"part-size", "parts-in-flight"} {
			if f.Changed(n) {
				return Usagef("--%s shapes the requests to an object store: give --storage too", n)
			}
		}
		return nil
	}
	for _, n := range []string{"direct", "drop-caches"} {
		if f.Changed(n) {
			return Usagef("--%s does not apply to a checkpoint in an object store", n)
		}
	}
	if o.PartsInFlight < 1 {
		return Usagef("--parts-in-flight must be between 1 and 256 (got %d)", o.PartsInFlight)
	}
	return parseSizes(sizeArg{"part-size", o.partSize, &o.PartSize, 0})
}

// parseSizes reads --size, --block-size and the ranks (-p, --ranks), where 0 is a mistake
// (in the options, 0 means the default).
func (o *CheckpointOptions) parseSizes(cmd *cobra.Command) error {
	f := cmd.Flags()
	if f.Changed(oldRanks) && f.Changed("threads") {
		return Usagef("give the ranks once: -p/--threads N, the ranks on each host (--ranks, the ranks on all hosts together, is its former spelling)")
	}
	if f.Changed(oldRanks) && o.Ranks < 1 {
		return Usagef("--ranks must be at least 1 (got %d)", o.Ranks)
	}
	if f.Changed("threads") && o.RanksPerHost < 1 {
		return Usagef("-p/--threads must be at least 1 (got %d)", o.RanksPerHost)
	}
	size := o.Model.Bytes
	if o.size != "full" {
		var err error
		if size, err = units.ParseSizeIn(o.size, 0); err != nil {
			return Usagef("--size %s: %v (or 'full')", o.size, err)
		}
	}
	if err := parseSizes(sizeArg{"block-size", o.blockSize, &o.BlockSize, 0}); err != nil {
		return err
	}
	switch {
	case size == 0:
		return Usagef("--size must be greater than 0")
	case o.BlockSize == 0:
		return Usagef("--block-size must be greater than 0")
	}
	o.Size = size
	return nil
}

func runCheckpoint(ctx context.Context, app *App, o *CheckpointOptions) error {
	if err := missingPath(o.Path, o.Cluster.active() || o.Storage != ""); err != nil {
		return err
	}
	if !o.Cluster.active() {
		if err := o.CheckSpace(); err != nil {
			return &UsageError{Err: err}
		}
	}
	var stop func()
	target := o.Path
	if o.Storage != "" {
		target = object.RedactURL(o.Path)
	}
	o.Hooks, stop = checkpointHooks(app, target)
	defer stop()
	var prog *Progress
	o.ObjectHooks = checkpoint.ObjectHooks{
		PhaseStart: func(_, title string, e *engine.Engine, shards int64) {
			prog = app.StartProgress(title, shards, "shards", func() int64 { return e.Live.Ops.Load() }).from(&e.Live, 1)
		},
		PhaseEnd: func(string) { prog.Done() },
	}
	if !app.Globals.Quiet && (o.Storage != "" || !notADir(o.Path)) {
		fmt.Fprintf(app.IO.Err, "Checkpointing %s (%s) in %s with %s\n",
			o.Model.Name, units.FormatBytes(o.Size), target, units.Count(o.ranks(), "rank"))
	}
	res, err := app.measure(ctx, "checkpoint", o.Repeat, func(ctx context.Context, res *report.Result) error {
		return checkpoint.Run(ctx, o.Options, res)
	})
	stop()
	if err != nil && !res.Interrupted {
		if errors.Is(err, checkpoint.ErrBadInput) {
			return &UsageError{Err: err}
		}
		return app.writeFailed(res, &o.Output, err)
	}
	return app.finishRun(res, &o.Output, &o.CI)
}

// checkpointHooks show each phase's progress and warnings, keep track of
// the run's directory for a second Ctrl-C, and publish the live counters
// of the engine in use for `fsbench stats`. The returned function stops
// publishing.
func checkpointHooks(app *App, path string) (runenv.Hooks, func()) {
	var prog *Progress
	var cur atomic.Pointer[workload.Runner]
	pub, err := live.Start(live.Options{Command: "checkpoint", Target: path, Probe: live.RunnerProbe(cur.Load)})
	if err != nil {
		app.Warnf("fsbench stats will not see this run: %v", err)
	}
	return runenv.Hooks{
		PhaseStart: func(e *workload.Runner, p *workload.FilePhase, total int64) {
			cur.Store(e)
			prog = app.phaseProgress(p, total, "blocks", func() int64 { return e.Live.Ops.Load() }).from(e.Live, 1)
		},
		PhaseEnd: func(e *workload.Runner, p *workload.FilePhase) {
			pub.EndPhase(p)
			prog.Done()
		},
		// Before the clean-up: the run's counters are final.
		Finished: func(*workload.Runner) { pub.Stop() },
		Warn:     func(msg string) { app.Warnf("%s", msg) },
		Wait:     app.Wait,
		Created:  app.Left.Set,
		Removed:  app.Left.Clear,
	}, pub.Stop
}

// checkpointCluster makes the run of checkpoint on the agents. The whole
// checkpoint must fit: on a shared file system, every host sees it all.
func checkpointCluster(cmd *cobra.Command, args []string, o *CheckpointOptions) (*clusterRun, error) {
	plan, _ := checkpoint.NewPlan(o.Size, o.ranks())
	c, err := o.newClusterRun("checkpoint", cmd, args)
	if err != nil {
		return nil, err
	}
	if dir := storeTarget(o.Storage, o.Path); dir != "" {
		c.left = runDirLeft(dir)
		c.job.Need = plan.Total
	} else {
		c.left = objectsLeft(o.Path, hostPrefix)
	}
	c.secrets = o.Storage != "" && storeSecrets(cmd, o.Path)
	return c, nil
}

func (o *CheckpointOptions) ranks() int {
	if o.Ranks > 0 {
		return o.Ranks
	}
	return o.Model.Ranks
}

// checkpointOnAgent is checkpoint on an agent: host i of n, in its own
// directory of the run (with --storage, its own key prefix of the run's,
// in the store it opens itself), reading back the shards of host i+1.
func checkpointOnAgent(ctx context.Context, gate cluster.Gate, o *CheckpointOptions, job *cluster.Job) (*report.Result, error) {
	o.Host, o.Hosts, o.Seed = job.Index, job.Hosts, job.Seed
	if o.Storage != "" {
		o.RunDir = hostPrefix(job.RunName, job.Index)
		o.ReadDir = hostPrefix(job.RunName, (job.Index+1)%job.Hosts)
	} else {
		base, err := runBase(o.Path, job)
		if err != nil {
			return nil, err
		}
		o.RunDir = filepath.Join(base, cluster.HostDir(job.Index))
		o.ReadDir = nextHostDir(base, job)
	}
	o.Hooks = gateHooks(ctx, gate)
	o.ObjectHooks = checkpoint.ObjectHooks{
		PhaseStart: func(name, _ string, e *engine.Engine, shards int64) {
			_ = gate(ctx, name)
			cluster.Meter(ctx, name, shards, "shards", func() int64 { return e.Live.Ops.Load() })
		},
		PhaseEnd: endGate(ctx, gate),
		Finished: func() { _ = gate(ctx, cluster.FinishPhase) },
	}
	return agentRun("checkpoint", func(res *report.Result) error { return checkpoint.Run(ctx, o.Options, res) })
}
