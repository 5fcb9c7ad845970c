package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/replay"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// ReplayOptions are the flags of `fsbench replay`.
type ReplayOptions struct {
	replay.Options
	// Logs are the logs given: one, or with --hosts one per host.
	Logs    []string
	Output  OutputOptions
	CI      CIOptions
	Cluster HostsOptions
	// MetricsListen is --metrics-listen: where to serve live metrics.
	MetricsListen string
	// AllowDifferences is --allow-differences: outcomes that differ from
	// the recording's (a write failing here that succeeded there) are
	// counted, not an error.
	AllowDifferences bool
	// maxLogSize and maxLineSize are --max-log-size and --max-line-size.
	maxLogSize, maxLineSize string
	// data is --compress-ratio and --dedupe-ratio.
	data dataFlags
	// Cap is --slo and --curve: the pace of the replay chosen by a
	// search or a curve.
	Cap CapacityFlags
	// onAgent is set on an agent, whose logs are the job's copies: the
	// names given travel unchecked, as no path of the agent's host is
	// read but PATH.
	onAgent bool
}

func newReplayCmd(app *App) *cobra.Command {
	return newReplayCmdWith(app, nil)
}

// newReplayCmdWith builds the command; runF replaces the run in tests of
// flag parsing.
func newReplayCmdWith(app *App, runF func(context.Context, *ReplayOptions) error) *cobra.Command {
	return replayCmd(app, &ReplayOptions{}, runF)
}

// newReplayAgentCmd is the command an agent parses a replay job with.
func newReplayAgentCmd(app *App, runF func(context.Context, *ReplayOptions) error) *cobra.Command {
	return replayCmd(app, &ReplayOptions{onAgent: true}, runF)
}

func replayCmd(app *App, o *ReplayOptions, runF func(context.Context, *ReplayOptions) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replay LOG [LOG...] PATH",
		Short: "Replay a recorded access log (JuiceFS's, fsbench's or strace's) on the file system that holds PATH",
		Long:  replayLong,
		Example: `  fsbench replay /jfs-logs/access.log /mnt/nfs
  fsbench replay access.log.gz /mnt/jfs --speed 1
  head -n 100000 /jfs/.accesslog | fsbench replay - /mnt/nfs
  strace -f -ttt -T -y -o app.trace ./app && fsbench replay app.trace /mnt/nfs
  fsbench bench /data --access-log /tmp/bench.log && fsbench replay /tmp/bench.log /mnt/other
  fsbench replay access.log /mnt/jfs --expect 'replay-read.p99<10ms' -o json > replay.json
  fsbench replay node1.log node2.log /mnt/jfs --hosts node1:7781,node2:7781`,
		Args: curveArgs(minArgs(2, "a LOG to replay and the PATH to replay it in")),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Logs, o.Path = args[:len(args)-1], args[len(args)-1]
			o.Log = o.Logs[0]
			o.SkipDropCaches = skipDropCaches(app)
			if err := checkFileFlags(cmd); err != nil {
				return err
			}
			if err := o.resolve(cmd); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			ctx, m, err := startMetrics(cmd.Context(), app, o.MetricsListen)
			if err != nil {
				return err
			}
			defer m.Close()
			if o.Cluster.active() {
				c, err := replayCluster(cmd, args, o)
				if err != nil {
					return err
				}
				return runCluster(ctx, app, c)
			}
			return runReplay(ctx, app, o)
		},
	}
	f := cmd.Flags()
	f.Float64Var(&o.Speed, "speed", 0, "pace: 0 as fast as possible, 1 as recorded, 2 twice as fast (the recorded gaps between operations, divided by this)")
	f.BoolVar(&o.Keep, "keep", false, "keep the replay's files instead of removing them")
	f.BoolVar(&o.AllowDifferences, "allow-differences", false, "exit 0 when operations failed here that succeeded in the recording (or the other way round); without it they are named on stderr and the exit code is 1")
	f.StringVar(&o.maxLogSize, "max-log-size", "4G", "refuse a log of more text than this (blank lines left out), read into memory before the replay")
	f.StringVar(&o.maxLineSize, "max-line-size", "1M", "refuse a log with a line longer than this")
	f.StringVar(&o.DropCaches, "drop-caches", "auto", "drop kernel caches once the files the log reads are made, before the replay: auto (all caches as root, else those files), always, never; SKIP_DROP_CACHES=true disables")
	addDataFlags(cmd, &o.data)
	addCapacityFlags(cmd, &o.Cap)
	addOutputFlags(cmd, &o.Output)
	addCIFlags(cmd, &o.CI, nil)
	addHostsFlags(cmd, &o.Cluster)
	addMetricsFlag(cmd, &o.MetricsListen)
	_ = f.MarkHidden("read-others") // each host replays its own log
	_ = f.MarkHidden("quick")       // a replay is as long as its log
	return cmd
}

const replayLong = `Replay an access log on the file system that holds PATH: what an application
did, recorded where it ran, done again here, so that "how will my workload run
on this storage?" is measured rather than guessed.

LOG is JuiceFS's access log (the .accesslog of a mount, saved with cat), the
log fsbench writes with --access-log, or the output of
"strace -f -ttt -T -y -o LOG COMMAND" (any program on any Linux file system);
plain or gzip-compressed; "-" reads it from standard input. Every recorded
process or thread becomes a stream that keeps its recorded order; the streams
run together, as recorded, and an operation waits for another stream's only
where the recording shows that stream changing the same file, directory or
handle first. The files are mapped to files of a new directory under PATH:
what the log uses without creating it is made first, with the sizes the log
needs, outside the measured time, and the caches are then dropped (as root
all of them, else those files': --drop-caches), so that the replay reads them
from the storage as the application read data that was there before it.
Everything is removed at the end. The replay-read row says how much of what
it read came from the storage; the rest is the recording's own re-reads,
which the page cache answers here as it did there.

A recorded failure (a lookup of a missing name) is replayed and must fail the
same way; it is counted apart. Operations on JuiceFS's virtual files (.stats,
.accesslog, .config) are the client's own and are skipped, as are strace's
calls on pipes, sockets, /proc, /dev and /sys; operations the
replay does not perform and malformed lines are counted and named.

The table has a row for the whole replay and one per type of operation
(replay-read, replay-write, ...: names for --expect and compare), then each
type's counts, bytes and latency percentiles beside the recording's, and the
replay's time against the recording's span.

With --hosts, each host (running "fsbench agent") replays a log of its own,
all starting together, and the results are merged: give one LOG per host,
or one LOG whose recorded processes are shared out among the hosts. The
logs travel with the job; an agent reads no path of its own but PATH.`

// loadProgressMin is the size of a log from which its load shows its
// progress: a million lines (80 to 100 MiB) load in a quarter of a second.
var loadProgressMin int64 = 64 << 20

// replayHooks are a replay's hooks for its progress on stderr, and what
// ends the load's display if the load never ends (a bad log).
func replayHooks(app *App, o *ReplayOptions) (replay.Hooks, func()) {
	from := o.Log
	if from == replay.StdinLog {
		from = "standard input"
	}
	var loading, prog *Progress
	endLoad := func() {
		if loading != nil {
			loading.Done()
			loading = nil
		}
	}
	return replay.Hooks{
		Loading: func(size int64, read func() int64) {
			if size >= loadProgressMin {
				loading = app.StartProgress("Load", size>>20, "MiB", func() int64 { return read() >> 20 })
			}
		},
		Loaded: func(t *replay.Trace) {
			endLoad()
			if !app.Globals.Quiet && !notADir(o.Path) {
				fmt.Fprintf(app.IO.Err, "Replaying %s of %s from %s (%s log) in %s\n",
					units.Count(int(t.Ops()), "operation"), units.Count(len(t.Streams), "stream"), from, t.Format, o.Path)
			}
		},
		Started: func(e *engine.Engine, ops int64) {
			prog = app.StartProgress("Replay", ops, "ops", func() int64 { return e.Live.Ops.Load() })
		},
		Finished: func(*engine.Engine) {
			if prog != nil {
				prog.Done()
			}
		},
		Warn:    func(msg string) { app.Warnf("%s", msg) },
		Created: app.Left.Set,
		Removed: app.Left.Clear,
	}, endLoad
}

// replayCatalog is what a replay can measure: the whole replay and each
// type of operation it performs.
func replayCatalog() expect.Catalog {
	c := expect.Catalog{Command: "replay", Metrics: []expect.Metric{{Name: "replay", Bytes: true}}}
	for _, op := range replay.OpNames() {
		c.Metrics = append(c.Metrics, expect.Metric{Name: "replay-" + op, Bytes: op == "read" || op == "write"})
	}
	return c
}

func (o *ReplayOptions) resolve(cmd *cobra.Command) error {
	if err := o.CI.resolve(cmd, replayCatalog()); err != nil {
		return err
	}
	if err := replay.CheckSpeed(o.Speed, 0); err != nil {
		return &UsageError{Err: err}
	}
	if err := o.resolveLimits(); err != nil {
		return err
	}
	var err error
	if o.Data, err = o.data.resolve(cmd); err != nil {
		return err
	}
	if err := o.Options.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	if err := o.Cluster.resolve(cmd); err != nil {
		return err
	}
	if o.Cluster.ReadOthers {
		return Usagef("--read-others applies to bench: each host of a replay replays its own log")
	}
	if err := o.resolveCapacity(cmd); err != nil {
		return err
	}
	if o.onAgent {
		return o.Output.resolve()
	}
	hosts := len(o.Cluster.Hosts)
	switch {
	case !o.Cluster.active() && len(o.Logs) > 1:
		return Usagef("%d logs: give one LOG, or one LOG per host with --hosts", len(o.Logs))
	case o.Cluster.active() && len(o.Logs) > 1 && len(o.Logs) != hosts:
		return Usagef("%d logs for %d hosts: give one LOG per host, or one LOG to split by its recorded processes", len(o.Logs), hosts)
	}
	for _, l := range o.Logs {
		if l == replay.StdinLog && o.Cluster.active() {
			return Usagef("LOG - (standard input) is for a replay on this host: with --hosts, give the log's file")
		}
		if st, err := os.Stat(l); err == nil && st.IsDir() {
			return Usagef("LOG %s is a directory: give the log file (for a JuiceFS mount, save its .accesslog first)", l)
		}
	}
	if err := missingPath(o.Path, o.Cluster.active()); err != nil {
		return err
	}
	if st, err := os.Stat(o.Path); err == nil && !st.IsDir() {
		return Usagef("PATH %s is not a directory: give the directory to replay in", o.Path)
	}
	return o.Output.resolve()
}

// resolveLimits reads --max-log-size and --max-line-size.
func (o *ReplayOptions) resolveLimits() error {
	size, err := units.ParseSizeIn(o.maxLogSize, 0)
	if err != nil || size <= 0 {
		return Usagef("--max-log-size %q: want a size such as 4G", o.maxLogSize)
	}
	line, err := units.ParseSizeIn(o.maxLineSize, 0)
	if err != nil || line <= 0 || line > math.MaxInt32 {
		return Usagef("--max-line-size %q: want a size such as 1M, below 2G", o.maxLineSize)
	}
	o.Limits = replay.Limits{Size: size, Line: int(line)}
	return nil
}

// runReplay replays the log and reports it: a progress bar of the log's
// load (a long one) and of operations on stderr while it runs, the result
// on stdout.
func runReplay(ctx context.Context, app *App, o *ReplayOptions) error {
	if o.Log == replay.StdinLog && app.IO.InTTY {
		return Usagef("LOG - reads the log from standard input, which is a terminal here: pipe the log in, or give its file")
	}
	o.Stdin = app.IO.In
	var endLoad func()
	o.Hooks, endLoad = replayHooks(app, o)
	res, err := app.measure(ctx, "replay", 1, func(ctx context.Context, res *report.Result) error {
		opts := o.Options
		if c := o.capacityRun(); c != nil {
			opts.Capacity = replayCapacity(app, c, res)
		}
		return replay.Run(ctx, opts, res)
	})
	endLoad() // a load that failed
	var usage *UsageError
	if errors.As(err, &usage) {
		return err
	}
	if err == nil && !res.Interrupted && !o.AllowDifferences {
		err = differed(res.Replay)
	}
	if err != nil && !res.Interrupted {
		if errors.Is(err, replay.ErrBadInput) {
			return &UsageError{Err: err}
		}
		return app.writeFailed(res, &o.Output, err)
	}
	return app.finishRun(res, &o.Output, &o.CI)
}

// differed is the error of a replay whose operations had outcomes the
// recording did not have, naming each distinct one with its count; nil
// when there were none.
func differed(r *report.Replay) error {
	if r == nil || len(r.Differed) == 0 {
		return nil
	}
	var n int64
	var b strings.Builder
	for _, d := range r.Differed {
		n += d.Count
		fmt.Fprintf(&b, "\n  %s: %s", d.Error, units.Count(int(d.Count), "time"))
	}
	return fmt.Errorf("replay: %s differed from the recording (--allow-differences accepts that):%s",
		units.Count(int(n), "operation"), b.String())
}
