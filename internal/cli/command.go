package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/report"
)

// RunFlags are the flags every benchmark command (bench, objbench, train,
// checkpoint) shares: how its result is written, what it must reach, and
// the hosts it runs on.
type RunFlags struct {
	Output OutputOptions
	CI     CIOptions
	// Cluster runs the command on many hosts (--hosts).
	Cluster HostsOptions
}

// addRunFlags declares the shared flags on cmd; quick is the command's
// --quick preset.
func addRunFlags(cmd *cobra.Command, r *RunFlags, quick []Preset) {
	addOutputFlags(cmd, &r.Output)
	addCIFlags(cmd, &r.CI, quick)
	addHostsFlags(cmd, &r.Cluster)
}

// clusterRun is the run of command on the agents given by --hosts, with
// the arguments of this command line.
// The files its flags name (-f, --ca-cert, ...) travel with the job.
func (r *RunFlags) clusterRun(command string, cmd *cobra.Command, args []string) (*clusterRun, error) {
	agentArgs, files, err := agentArgs(cmd, args)
	if err != nil {
		return nil, err
	}
	return &clusterRun{command: command, hosts: &r.Cluster, output: &r.Output, ci: &r.CI,
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
		if err := h.resolve(cmd, args); err != nil {
			return err
		}
		switch {
		case h.runF != nil:
			return h.runF(cmd.Context(), h.opts)
		case h.flags.Cluster.active():
			c, err := h.cluster(cmd, args, h.opts)
			if err != nil {
				return err
			}
			return runCluster(cmd.Context(), app, c)
		}
		return h.run(cmd.Context(), app, h.opts)
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
