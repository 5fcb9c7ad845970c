package cli

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/history"
)

// ProbeOptions are the flags of `fsbench probe`.
type ProbeOptions struct {
	Interval      time.Duration
	Duration      time.Duration
	Rounds        int
	Expect        []string
	Push          string
	MetricsListen string
	// Name is --name: the host label of the metrics.
	Name string
	// History is --history: a history each finished round is kept in,
	// every HistoryEvery-th of them.
	History      string
	HistoryEvery int
	// Args is the command line of one round: a command and its arguments.
	Args []string

	exprs []expect.Expr
	push  *url.URL
}

func newProbeCmd(app *App) *cobra.Command {
	return newProbeCmdWith(app, nil)
}

// newProbeCmdWith builds the command; runF replaces the run in tests of
// flag parsing.
func newProbeCmdWith(app *App, runF func(context.Context, *ProbeOptions) error) *cobra.Command {
	o := &ProbeOptions{}
	cmd := &cobra.Command{
		Use:   "probe [flags] COMMAND ARGS...",
		Short: "Run a small benchmark every interval, for weeks, and export each round as Prometheus metrics",
		Long:  probeLong,
		Example: `  fsbench probe --interval 5m --metrics-listen :9782 --expect 'write.p99<50ms' bench /mnt/jfs --rw write --file-size 4M --duration 10s
  fsbench probe --interval 1m --push http://pushgateway:9091 bench /mnt/nfs --job examples/metadata.yaml --files 200
  fsbench probe --interval 30s --duration 24h --metrics-listen :9782 objbench --storage minio http://minio:9000/probe --workload mixed --duration 10s`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return Usagef("give the command of a round: bench, objbench, train, checkpoint or replay, with its arguments")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Args = args
			if err := o.resolve(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runProbe(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.SetInterspersed(false) // the flags after COMMAND are the round's
	f.DurationVar(&o.Interval, "interval", time.Minute, "start a round this often (a round longer than this is followed by the next at once)")
	f.DurationVar(&o.Duration, "duration", 0, "stop after this long (0: run until interrupted)")
	f.IntVar(&o.Rounds, "rounds", 0, "stop after `N` rounds (0: no limit)")
	f.StringArrayVar(&o.Expect, "expect", nil, "judge each round by this expectation, as bench --expect does (e.g. 'write.p99<50ms'); repeatable. A failed one makes the round fail, not the probe")
	f.StringVar(&o.Push, "push", "", "push each round's metrics to the Prometheus pushgateway at this `URL` (job fsbench_probe, instance the host's name)")
	f.StringVar(&o.Name, "name", "", "the host's `NAME` in the host label of the metrics and as the pushgateway's instance (default: its host name)")
	f.StringVar(&o.History, "history", "", historyHelp)
	f.IntVar(&o.HistoryEvery, "history-every", 1, "with --history, keep every `N`th finished round (the first, then every Nth), not each")
	addMetricsFlag(cmd, &o.MetricsListen)
	return cmd
}

const probeLong = `Watch a storage system: run a small benchmark every --interval, forever or
for --duration, and export what each round measured and its verdict as
Prometheus metrics, served at --metrics-listen and/or pushed to a
pushgateway (--push) for hosts that cannot be scraped.

COMMAND ARGS... is the round: an ordinary bench, objbench, train, checkpoint
or replay command line (a quick bench, a workload file, an object workload).
Its result becomes the fsbench_probe_* metrics and one log line per round
on stderr; with --history, each finished round's result (not one that
failed to run or was interrupted) is also kept in that history, as
"fsbench history add" keeps it, and --history-every N keeps every Nth. A
history that refuses the first result ends the probe; a later refusal is
logged and the probe goes on. --expect judges each round: a failed
expectation makes the round "fail"; a round that cannot run (the mount is
gone or hangs, the store refuses) is an "error" with its cause in the log.
Neither ends the probe: the next round runs at its time.

Every round removes what it created. A round's directory that could not be
removed (the mount went away under it) is removed by a later round once the
mount is back. A file system target whose mount changes or disappears is
noticed before the round runs, rather than benchmarking the directory
underneath. See docs/metrics.md for every metric.`

// probeRefused are the flags a round may not take: the probe writes
// nothing but metrics and log lines, runs on this host, and judges rounds
// itself.
var probeRefused = map[string]string{
	"o": "output", "output": "output", "json": "output", "result-file": "output", "html": "output", "history": "give it to the probe",
	"access-log": "output", "keep": "the probe leaves nothing behind", "hosts": "many hosts", "hosts-file": "many hosts",
	"repeat": "the probe repeats", "metrics-listen": "give it to the probe", "expect": "give it to the probe",
	"expect-file": "give --expect to the probe", "baseline": "compare results instead", "print-job": "output", "find-max": "a search, not a probe",
}

// probeCommands are the commands a round may run.
var probeCommands = map[string]bool{"bench": true, "objbench": true, "train": true, "checkpoint": true, "replay": true}

// resolve checks the flags and the round's command line.
func (o *ProbeOptions) resolve() error {
	if !probeCommands[o.Args[0]] {
		return Usagef("probe runs bench, objbench, train, checkpoint or replay, not %q", o.Args[0])
	}
	for _, a := range o.Args[1:] {
		if a == "--" {
			break
		}
		name, ok := strings.CutPrefix(a, "-")
		if !ok {
			continue
		}
		name, _, _ = strings.Cut(strings.TrimPrefix(name, "-"), "=")
		if why, refused := probeRefused[name]; refused {
			return Usagef("a probe's round does not take %s (%s)", a, why)
		}
	}
	switch {
	case o.Interval <= 0:
		return Usagef("--interval %v: want a positive duration", o.Interval)
	case o.Duration < 0:
		return Usagef("--duration %v: want 0 (no end) or a positive duration", o.Duration)
	case o.Rounds < 0:
		return Usagef("--rounds %d: want 0 (no limit) or more", o.Rounds)
	case o.HistoryEvery < 1:
		return Usagef("--history-every %d: want 1 (every round) or more", o.HistoryEvery)
	}
	if err := history.CheckWhere(o.History); err != nil {
		return Usagef("--history: %v", err)
	}
	if o.History == "" && o.HistoryEvery != 1 {
		return Usagef("--history-every keeps rounds in a history: give --history DIR or URL")
	}
	for _, s := range o.Expect {
		e, err := expect.Parse(s)
		if err != nil {
			return &UsageError{Err: fmt.Errorf("--expect %q: %w", s, err)}
		}
		o.exprs = append(o.exprs, e)
	}
	if o.Push != "" {
		u, err := url.Parse(o.Push)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Usagef("--push: want the pushgateway's http:// or https:// URL")
		}
		if u.RawQuery != "" || u.Fragment != "" {
			// The pushgateway's paths go after the URL, so a query would
			// end up inside them, and in every error that names the URL.
			return Usagef("--push: the pushgateway's URL takes no query or fragment; give a user and password as https://user:password@host:port")
		}
		o.push = u
	}
	return nil
}
