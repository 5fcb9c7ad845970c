package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/verdict"
)

// RunFlags are the flags every benchmark command (bench, objbench, train,
// checkpoint) shares: how its result is written, what it must reach, and
// the hosts it runs on.
type RunFlags struct {
	Output OutputOptions
	CI     CIOptions
	// Cluster runs the command on many hosts (--hosts).
	Cluster HostsOptions
	// Repeat is --repeat: how many times the whole benchmark runs.
	Repeat int
	// MetricsListen is --metrics-listen: where to serve live metrics.
	MetricsListen string
}

// addRunFlags declares the shared flags on cmd; quick is the command's
// --quick preset.
func addRunFlags(cmd *cobra.Command, r *RunFlags, quick []Preset) {
	addOutputFlags(cmd, &r.Output)
	addCIFlags(cmd, &r.CI, quick)
	addHostsFlags(cmd, &r.Cluster)
	addMetricsFlag(cmd, &r.MetricsListen)
	cmd.Flags().IntVar(&r.Repeat, "repeat", 1, "run the whole benchmark `N` times, each as a run of its own; the result keeps every run, the table shows each figure's median and range, and compare can then tell a change from noise (4 or more runs a side)")
}

// checkRepeat checks --repeat.
func (r *RunFlags) checkRepeat() error {
	if r.Repeat < 1 {
		return Usagef("--repeat %d: want 1 or more runs", r.Repeat)
	}
	return nil
}

// newClusterRun makes the run of command on the agents given by --hosts,
// with the arguments of this command line.
// The files its flags name (-f, --ca-cert, ...) travel with the job.
func (r *RunFlags) newClusterRun(command string, cmd *cobra.Command, args []string) (*clusterRun, error) {
	agentArgs, files, err := agentArgs(cmd, args)
	if err != nil {
		return nil, err
	}
	return &clusterRun{command: command, hosts: &r.Cluster, output: &r.Output, ci: &r.CI, repeat: r.Repeat,
		job: cluster.Job{Command: command, Args: agentArgs, Files: files}}, nil
}

// hostsCommand is how a benchmark command runs once cobra has parsed its
// flags: resolve checks the command line and fills opts; then runF, when
// set (in tests of flag parsing and on agents), replaces the run; with
// --hosts, cluster makes the run the agents do; else run runs here.
type hostsCommand[O any] struct {
	opts    O
	flags   *RunFlags
	resolve func(cmd *cobra.Command, args []string) error
	runF    func(context.Context, O) error
	cluster func(cmd *cobra.Command, args []string, o O) (*clusterRun, error)
	run     func(context.Context, *App, O) error
}

// runE is the command's RunE.
func (h hostsCommand[O]) runE(app *App) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := h.flags.checkRepeat(); err != nil {
			return err
		}
		if err := checkFileFlags(cmd); err != nil {
			return err
		}
		if h.runF == nil { // not on an agent: a launcher may have started it
			if err := h.flags.Cluster.Launch.detect(cmd, app, &h.flags.Cluster); err != nil {
				return err
			}
		}
		if err := h.resolve(cmd, args); err != nil {
			return err
		}
		if h.runF != nil {
			return h.runF(cmd.Context(), h.opts)
		}
		listen := h.flags.MetricsListen
		if env := h.flags.Cluster.Launch.env; env != nil && env.Rank > 0 {
			// A launcher may start many ranks on one host: rank 0 serves
			// every rank's counts, which its heartbeats bring.
			listen = ""
		}
		ctx, m, err := startMetrics(cmd.Context(), app, listen)
		if err != nil {
			return err
		}
		defer m.Close()
		switch {
		case h.flags.Cluster.Launch.env != nil:
			return runLaunched(ctx, app, cmd, args, &h.flags.Cluster, func() error {
				c, err := h.cluster(cmd, args, h.opts)
				if err != nil {
					return err
				}
				return runCluster(ctx, app, c)
			})
		case h.flags.Cluster.active():
			c, err := h.cluster(cmd, args, h.opts)
			if err != nil {
				return err
			}
			return runCluster(ctx, app, c)
		}
		return h.run(ctx, app, h.opts)
	}
}

// agentRun is a command's run on an agent: run fills a new result of
// command, whose resource usage and error are recorded as on one host.
func agentRun(command string, run func(*report.Result) error) (*report.Result, error) {
	res := newResult(command)
	meter := startUsage()
	err := run(res)
	res.Usage = meter.stop()
	if err != nil && !res.Interrupted {
		res.Error = err.Error()
	}
	return res, err
}

// measureOnce measures one run of a benchmark into res.
type measureOnce func(ctx context.Context, res *report.Result) error

// measure runs a benchmark once, or n times (--repeat n) into one result:
// each run keeps its own figures in res.Runs and res.Phases summarise
// them (verdict.SummarizeRuns). Repeating stops at the first run that
// fails or is interrupted; the result then holds the runs until then, and
// the error is that run's.
func (a *App) measure(ctx context.Context, command string, n int, once measureOnce) (*report.Result, error) {
	meter := startUsage()
	if n <= 1 {
		res := newResult(command)
		err := once(ctx, res)
		res.Usage = meter.stop()
		res.Host.Load = sysio.LoadAverage()
		return res, err
	}
	var out *report.Result
	var err error
	for i := 1; i <= n; i++ {
		if !a.Globals.Quiet {
			fmt.Fprintf(a.IO.Err, "Run %d of %d\n", i, n)
		}
		res := newResult(command)
		t0 := time.Now()
		err = once(ctx, res)
		run := report.Run{Index: i, StartedAt: res.StartedAt, Seconds: time.Since(t0).Seconds(), Load: sysio.LoadAverage(),
			Phases: res.Phases, Training: res.Training, Interrupted: res.Interrupted}
		if err != nil && !res.Interrupted {
			run.Error = err.Error()
		}
		if out == nil {
			out = res
		} else {
			out.Warnings = append(out.Warnings, res.Warnings...)
			out.Internal = res.Internal
			out.Interrupted = res.Interrupted
		}
		out.Runs = append(out.Runs, run)
		if err != nil || res.Interrupted {
			break
		}
	}
	if serr := verdict.SummarizeRuns(out); serr != nil && err == nil {
		err = serr
	}
	out.Usage = meter.stop()
	out.Host.Load = sysio.LoadAverage()
	return out, err
}
