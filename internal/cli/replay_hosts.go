package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/replay"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
)

// replayCluster makes the replay on the agents: each host replays its own
// log, or its share of one log's recorded processes. The coordinator
// reads every log first (a bad one fails here, before any host starts),
// and the logs travel with the job, compressed: an agent reads no path of
// its own host but PATH.
func replayCluster(cmd *cobra.Command, args []string, o *ReplayOptions) (*clusterRun, error) {
	hosts := len(o.Cluster.Hosts)
	traces := make([]*replay.Trace, len(o.Logs))
	for i, l := range o.Logs {
		t, err := replay.LoadLog(cmd.Context(), l, o.Limits)
		if err != nil {
			if errors.Is(err, replay.ErrBadInput) {
				return nil, &UsageError{Err: err}
			}
			return nil, err
		}
		traces[i] = t
	}
	if len(o.Logs) == 1 && hosts > 1 {
		if n := traces[0].SplitStreams(); n < hosts {
			return nil, Usagef("LOG %s has %d recorded processes or threads, fewer than the %d hosts: give one LOG per host", o.Log, n, hosts)
		}
	}
	jobArgs, _, err := agentArgs(cmd, args)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	size := 0
	for _, l := range o.Logs {
		if files[l], err = compressedLog(l); err != nil {
			return nil, err
		}
		size += len(files[l])
	}
	if size > cluster.MaxJobBytes-(64<<10) {
		return nil, Usagef("the logs take %.1f MiB compressed; a job carries at most %d MiB to the agents: replay a shorter log, or split it by process into one log per host",
			float64(size)/(1<<20), cluster.MaxJobBytes>>20)
	}
	c := &clusterRun{command: "replay", hosts: &o.Cluster, output: &o.Output, ci: &o.CI, repeat: 1,
		job: cluster.Job{Command: "replay", Args: jobArgs, Files: files}, left: runDirLeft(o.Path)}
	if err := replayProbesOf(c, o, traces); err != nil {
		return nil, err
	}
	c.finish = func(res *report.Result, parts []cluster.HostResult) error {
		var done []*report.Replay
		for _, p := range parts {
			if p.Result != nil && p.Result.Replay != nil {
				done = append(done, p.Result.Replay)
			}
		}
		speed := o.Speed
		if c.job.Pace != nil { // a probe's
			speed = c.job.Pace.Speed
		}
		res.Replay = replay.Merge(res, done, traces, strings.Join(o.Logs, ","), speed)
		if o.AllowDifferences || res.Interrupted {
			return nil
		}
		return differed(res.Replay)
	}
	return c, nil
}

// replayProbesOf readies the search or curve of --slo or --curve (if
// given) on the hosts: its rates are of the logs' operations together,
// over the longest log's span, each a speed.
func replayProbesOf(c *clusterRun, o *ReplayOptions, traces []*replay.Trace) error {
	if c.capacity = o.capacityRun(); c.capacity == nil {
		return nil
	}
	var ops int64
	var span time.Duration
	for _, t := range traces {
		ops, span = ops+t.Ops(), max(span, t.Span)
	}
	if err := c.capacity.replayable(ops, span); err != nil {
		return err
	}
	c.probes = &replayProbes{recorded: float64(ops) / span.Seconds()}
	return nil
}

// compressedLog is the content of a log, gzip-compressed unless it is
// already.
func compressedLog(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, Usagef("LOG %s: %v", path, sysio.PathCause(err))
	}
	if len(data) > 1 && data[0] == 0x1f && data[1] == 0x8b {
		return data, nil
	}
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestSpeed)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// replayAgentJob prepares a replay on an agent: its log is the copy the
// job carries (the host's own when there is one log per host, else the
// one log, of which it replays its share of the streams), never a path of
// the agent's host.
func replayAgentJob(o *ReplayOptions, job *cluster.Job, files map[string]string) (cluster.Prepared, error) {
	local := make([]string, len(o.Logs))
	for i, l := range o.Logs {
		p, ok := files[l]
		if !ok {
			return nil, fmt.Errorf("LOG %s is not in the job: an agent replays only the logs the coordinator sends", l)
		}
		local[i] = p
	}
	switch {
	case len(local) == job.Hosts:
		o.Log, o.LogName = local[job.Index], o.Logs[job.Index]
	case len(local) == 1:
		o.Log, o.LogName, o.Part, o.Parts = local[0], o.Logs[0], job.Index, job.Hosts
	default:
		return nil, fmt.Errorf("%d logs for %d hosts", len(local), job.Hosts)
	}
	return newAgentJob(o, job, o.Path, replayOnAgent), nil
}

// replayOnAgent is a host's replay: in its directory of the run's, started
// with the other hosts' at the coordinator's barrier.
func replayOnAgent(ctx context.Context, gate cluster.Gate, o *ReplayOptions, job *cluster.Job) (*report.Result, error) {
	base, err := runBase(o.Path, job)
	if err != nil {
		return nil, err
	}
	o.RunDir = filepath.Join(base, cluster.HostDir(job.Index))
	o.Hooks = replay.Hooks{
		Started:  func(*engine.Engine, int64) { _ = gate(ctx, "replay") },
		Finished: func(*engine.Engine) { _ = gate(ctx, cluster.FinishPhase) },
	}
	return agentRun("replay", func(res *report.Result) error {
		if p := job.Pace; p != nil { // a probe: the log once at its speed, an open loop
			o.Capacity = func(ctx context.Context, _ *replay.Trace, play replay.Player) error { return play(ctx, p.Speed, res) }
		}
		return replay.Run(ctx, o.Options, res)
	})
}
