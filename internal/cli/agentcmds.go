package cli

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/jobfile"
)

// agentCommand is a command that runs on agents (one of
// cluster.Commands): how it is built where its user runs it, and on an
// agent.
type agentCommand struct {
	// build makes the command as its user runs it; given --hosts, it
	// coordinates the run on the agents.
	build func(*App) *cobra.Command
	// prepare makes the command an agent parses a job with: the job's
	// flags are checked as on one host, and its run, rather than running,
	// sets prepared to what the agent runs.
	prepare func(app *App, job *cluster.Job, files map[string]string, prepared *cluster.Prepared) *cobra.Command
}

// agentCommands are the commands that run on agents, by name: the one
// table that an agent's Prepare and the tests read, matching
// cluster.Commands (which an agent's check of a job reads). To make a
// command run on agents, add it to both, and decide for each of its
// flags whether agents get it (agentFlags).
var agentCommands = map[string]agentCommand{
	cluster.CommandBench:      {build: newBenchCmd, prepare: prepareBench},
	cluster.CommandObjbench:   {build: newObjbenchCmd, prepare: prepareObjbench},
	cluster.CommandCheckpoint: {build: newCheckpointCmd, prepare: prepareCheckpoint},
	cluster.CommandTrain:      {build: newTrainCmd, prepare: prepareTrain},
	cluster.CommandReplay:     {build: newReplayCmd, prepare: prepareReplay},
	cluster.CommandIO500:      {build: newIO500Cmd, prepare: prepareIO500},
}

// coordinatedAs names the commands that take --hosts without being run on
// agents themselves: each coordinates a run of the agent command it names
// (vdbench sends its parameter files to the agents as bench's workload).
var coordinatedAs = map[string]string{"vdbench": cluster.CommandBench}

func prepareBench(app *App, job *cluster.Job, _ map[string]string, prepared *cluster.Prepared) *cobra.Command {
	return newBenchCmdWith(app, func(_ context.Context, o *BenchOptions) error {
		if job.ReadOthers && o.Job.Job != nil {
			return Usagef("--read-others applies to the default benchmark, not to workloads")
		}
		if j := o.Job.Job; j != nil {
			if err := paceBench(j, job); err != nil {
				return err
			}
			for i := range j.Phases {
				j.Phases[i].Rate = hostShare(j.Phases[i].Rate, job.Index, job.Hosts)
			}
		}
		var err error
		if o.Journal, err = agentJournal(o.Journal, job); err != nil {
			return err
		}
		o.journalConfine = app.confine
		*prepared = newAgentJob(o, job, o.Path, benchOnAgent, benchTreeDir(o), o.Journal)
		return nil
	})
}

// agentJournal is the journal this host writes for --journal file (""
// for none): FILE.host-N. It is one of the job's paths, which the agent
// confines to its allowed roots before it looks at it; the run makes it,
// and refuses one that exists.
func agentJournal(file string, job *cluster.Job) (string, error) {
	if file == "" {
		return "", nil
	}
	if !filepath.IsAbs(file) {
		return "", Usagef("--journal %s: give an absolute path: each host writes its own journal, FILE.host-N", file)
	}
	return hostJournal(file, job.Index), nil
}

func prepareObjbench(app *App, job *cluster.Job, _ map[string]string, prepared *cluster.Prepared) *cobra.Command {
	return newObjbenchCmdWith(app, func(_ context.Context, o *ObjbenchOptions) error {
		if job.ReadOthers {
			return Usagef("--read-others applies to bench")
		}
		if pace := job.Pace; pace != nil { // a probe, as objbenchProbe's
			o.Rate = pace.Rate
			o.Duration, o.Ops = pacedLength(pace, job.Hosts, o.Duration, o.Ops)
		}
		o.Rate = hostShare(o.Rate, job.Index, job.Hosts)
		var err error
		if o.JournalPath, err = agentJournal(o.JournalPath, job); err != nil {
			return err
		}
		o.journalConfine = app.confine
		*prepared = newAgentJob(o, job, objbenchTarget(o), objbenchOnAgent, o.JournalPath)
		return nil
	})
}

func prepareCheckpoint(app *App, job *cluster.Job, _ map[string]string, prepared *cluster.Prepared) *cobra.Command {
	return newCheckpointCmdWith(app, func(_ context.Context, o *CheckpointOptions) error {
		*prepared = newAgentJob(o, job, storeTarget(o.Storage, o.Path), checkpointOnAgent)
		return nil
	})
}

func prepareTrain(app *App, job *cluster.Job, _ map[string]string, prepared *cluster.Prepared) *cobra.Command {
	return newTrainCmdWith(app, func(_ context.Context, o *TrainOptions) error {
		if err := paceTrain(o, job); err != nil {
			return err
		}
		*prepared = newAgentJob(o, job, storeTarget(o.Storage, o.Path), trainOnAgent)
		return nil
	})
}

func prepareReplay(app *App, job *cluster.Job, files map[string]string, prepared *cluster.Prepared) *cobra.Command {
	return newReplayAgentCmd(app, func(_ context.Context, o *ReplayOptions) (err error) {
		*prepared, err = replayAgentJob(o, job, files)
		return err
	})
}

func prepareIO500(app *App, job *cluster.Job, _ map[string]string, prepared *cluster.Prepared) *cobra.Command {
	return newIO500CmdWith(app, func(_ context.Context, o *IO500Options) error {
		*prepared = newAgentJob(o, job, o.Path, io500OnAgent)
		return nil
	})
}

// paceBench sets the rate and length of j's paced phase for a probe of a
// capacity search or curve (job.Pace), as benchProbe does on one host; a
// count is this host's part of the probe's.
func paceBench(j *jobfile.Job, job *cluster.Job) error {
	pace := job.Pace
	if pace == nil {
		return nil
	}
	i, err := pacedPhase(j)
	if err != nil {
		return err
	}
	p := &j.Phases[i]
	p.Rate = pace.Rate
	p.Duration, p.Ops = pacedLength(pace, job.Hosts, p.Duration, p.Ops)
	return nil
}

// pacedLength is the duration and count of a probe's phase on one of
// hosts: the probe's duration, or the count raised to this host's part of
// the probe's fewest operations.
func pacedLength(pace *cluster.Pace, hosts int, d time.Duration, ops int64) (time.Duration, int64) {
	switch n := int64(max(1, hosts)); {
	case pace.Duration > 0:
		return pace.Duration, ops
	case pace.MinOps > 0:
		return d, max(ops, (pace.MinOps+n-1)/n)
	}
	return d, ops
}

// hostShare is host index's part of an open loop's rate, total over
// hosts (as vdbench's fwdrate over its hd= hosts): an even split, a whole
// rate's remainder one more on each of the first hosts so that the parts
// add up to it exactly. 0 (a closed loop) stays 0.
func hostShare(total float64, index, hosts int) float64 {
	if total <= 0 || hosts <= 1 {
		return total
	}
	n := float64(hosts)
	if total != math.Trunc(total) || total < n || total > 1<<53 {
		return total / n // too few, or not whole: no host gets 0
	}
	share := math.Floor(total / n)
	if float64(index) < total-share*n {
		share++
	}
	return share
}

// agentFlag is what becomes of a flag of a command run on agents.
type agentFlag int

const (
	// undecided: nobody said; the coordinator refuses to send it and an
	// agent to take it, and TestAgentFlagsDecided fails.
	undecided agentFlag = iota
	// sentFlag goes to the agents as given (a file it names travels with
	// the job: isAgentFile).
	sentFlag
	// coordinatorFlag is the coordinator's alone: not sent, and an agent
	// refuses a job that carries one. Most name files or outputs of the
	// coordinator's host, which an agent must never read or write.
	coordinatorFlag
)

// agentFlags says, by name, what becomes of every flag of the commands
// run on agents; a name means the same in every command, as in
// flagGroups.
var agentFlags = map[string]agentFlag{}

func init() {
	for decision, names := range map[agentFlag][]string{
		coordinatorFlag: {
			"hosts", "hosts-file", "token-file", "tls-ca", "read-others", // read-others travels as cluster.Job.ReadOthers
			"launcher", "world-size", "rendezvous", "rendezvous-timeout",
			"output", "json", "result-file", "html", "history", "access-log", "metrics-listen", "print-job", "help",
			"expect", "expect-file", "baseline", "threshold", "baseline-metrics",
			"repeat", "find-max", "strict", "allow-differences", // judged where the hosts' results meet
			"slo", "curve", // a search of many runs, each probe's rate sent as cluster.Job.Pace
			// juicefs's flags that change nothing here (juicefsOnly, --shards).
			"debug", "trace", "log-level", "log-id", "no-agent", "pyroscope", "shards",
		},
		sentFlag: {
			// What runs and how much of it.
			"quick", "job", "workload", "threads", "keep", "verify", "seed",
			// Each host writes its own, FILE.host-N, confined to the agent's roots.
			"journal", "interval", "duration", "warmup",
			"ops", "rate", "direct", "drop-caches", "distribution", "compress-ratio", "dedupe-ratio",
			// bench.
			"big-file-size", "small-file-count", "small-file-size", "block-size", "fsync", "depth", "width",
			"file-select", "file-size", "files", "iodepth", "ioengine", "read-existing", "read-pct", "rw", "sample",
			"tree-dir", "tree-format", "xfer-size",
			// objbench.
			"big-object-size", "small-object-size", "small-objects", "objects", "obj-size", "obj-size-dist",
			"part-size", "parts-in-flight", "autoterm", "autoterm-dur", "autoterm-pct", "batch", "mix", "range",
			"list-existing", "skip-functional-tests", "endpoints", "prefix", "storage-class", "sc",
			// The object store and its credentials (storeFlags).
			"storage", "access-key", "secret-key", "secret-key-file", "session-token", "session-token-file",
			"anonymous", "region", "addressing", "retries", "checksum", "sign-payload", "insecure", "ca-cert", "timeout",
			// train and checkpoint.
			"model", "accelerator-type", "accelerators", "dataset-files", "au-threshold", "batch-size", "compute-time", "dataset",
			"epochs", "gen-threads", "prefetch", "read-threads", "sample-size", "sample-size-stdev",
			"samples-per-file", "ranks", "size",
			// replay and io500.
			"speed", "max-log-size", "max-line-size", "stonewall", "ior-easy-transfers", "ior-easy-xfer", "ior-hard-segments",
			"mdtest-easy-files", "mdtest-hard-files", "data-packet-type", "no-space-check",
		},
	} {
		for _, n := range names {
			if agentFlags[n] != undecided {
				panic(fmt.Sprintf("agentFlags: --%s is decided twice", n))
			}
			agentFlags[n] = decision
		}
	}
}

// isCoordinatorFlag reports whether f is the coordinator's alone.
func isCoordinatorFlag(f *pflag.Flag) bool { return agentFlags[f.Name] == coordinatorFlag }

// undecidedFlag is the error for a flag nobody decided agents get or not.
func undecidedFlag(f *pflag.Flag) error {
	return fmt.Errorf("--%s: whether agents get it is not decided (agentFlags, internal/cli/agentcmds.go)", f.Name)
}
