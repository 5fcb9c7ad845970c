package cli

import (
	"bufio"
	"context"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/accesslog"
	"github.com/fsbench/fsbench/internal/profile"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// ProfileOptions are the flags of `fsbench profile`.
type ProfileOptions struct {
	profile.Options
	Target string // MOUNTPOINT, LOGFILE or "-"
	Follow bool

	interval              string
	uids, gids, pids, ops string
	output                string
	json                  bool
	speedSet              bool
}

// followPoll is how often a followed file is checked for growth.
const followPoll = 100 * time.Millisecond

func newProfileCmd(app *App) *cobra.Command {
	return newProfileCmdWith(app, nil)
}

// newProfileCmdWith builds the command; runF replaces the run in tests of
// flag parsing.
func newProfileCmdWith(app *App, runF func(context.Context, *ProfileOptions) error) *cobra.Command {
	o := &ProfileOptions{}
	cmd := &cobra.Command{
		Use:   "profile MOUNTPOINT|LOGFILE|-",
		Short: "Show which file operations take the time, from an access log (JuiceFS's format)",
		Long: `Read an access log in JuiceFS's format and show, per operation, how many
there were, their average and total latency, the share of the time they took
(Percent: time in the operation over the window's time, above 100 when
operations overlap), errors and latency percentiles.

MOUNTPOINT  a JuiceFS mount: its .accesslog is read live, and every
            --interval the table shows the window that just ended.
LOGFILE     a saved log, plain or gzip-compressed: replayed in windows of the
            log's own time (on a terminal at the log's pace; Enter pauses and
            resumes), or with --interval 0 summarised in one table.
            With --follow, read live as it grows, like tail -f.
-           standard input, replayed (or live with --follow).

Any file system can be profiled: "fsbench bench DIR --access-log FILE" writes
such a log of every operation the benchmark performs.

Lines that are not entries (keep-alive "#" lines, blank, truncated, run
together, not UTF-8) are skipped and counted; they never stop the run.`,
		Example: `  fsbench profile /mnt/jfs
  fsbench profile /mnt/jfs --uid 1000 --op read,write --interval 5s
  fsbench profile access.log.gz --interval 0
  fsbench profile access.log --interval 0 --sort p99 --top 5 -o json
  fsbench bench /data -p 4 --access-log /tmp/bench.log && fsbench profile /tmp/bench.log --interval 0
  ssh host cat /jfs/.accesslog | fsbench profile - --follow`,
		Args: exactArgs(1, "one MOUNTPOINT, LOGFILE or - (standard input)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Target = args[0]
			o.speedSet = cmd.Flags().Changed("speed")
			o.takeOldFollow(app, cmd)
			if err := o.resolve(app); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runProfile(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.interval, "interval", "2s", "the `DURATION` of a window, e.g. 2s; 0 reads the whole log and prints one summary (not for live input)")
	f.BoolVar(&o.Follow, "follow", false, "read LOGFILE (or -) live as it grows, from its end, like tail -f")
	addOldFollowFlag(cmd)
	f.StringVar(&o.uids, "uid", "", "count only these user ids (comma-separated)")
	f.StringVar(&o.gids, "gid", "", "count only these group ids (comma-separated)")
	f.StringVar(&o.pids, "pid", "", "count only these process ids (comma-separated)")
	f.StringVar(&o.ops, "op", "", "count only these operations (comma-separated, e.g. read,write)")
	f.StringVar(&o.Filter.Path, "path", "", "count only entries whose arguments contain this text (a name or path)")
	f.StringVar(&o.Sort, "sort", profile.SortTotal, "order of the rows, largest first: "+strings.Join(profile.SortKeys, ", "))
	f.IntVar(&o.Top, "top", 0, "show only the first N operations (0: all)")
	f.StringVarP(&o.output, "output", "o", "table", "output format: table, json (one JSON object per window, one per line)")
	f.BoolVar(&o.json, "json", false, "shorthand for --output json")
	f.Float64Var(&o.Speed, "speed", 0, "replay pace: log seconds per second, 0 as fast as possible (default: 1 on a terminal, 0 otherwise)")
	return cmd
}

func (o *ProfileOptions) resolve(app *App) error {
	d, err := units.ParseDuration(o.interval)
	if err != nil || d > 24*time.Hour {
		return Usagef("--interval %q: want a duration from 0 to 24h, such as 2s", o.interval)
	}
	if o.Interval = d; d > 0 && d < time.Millisecond {
		return Usagef("--interval %v: at least 1ms", o.interval)
	}
	if o.Follow && o.Interval == 0 {
		return Usagef("--follow needs --interval above 0: a live log has no end to summarise")
	}
	if o.Filter.UIDs, err = parseIDs("uid", o.uids); err != nil {
		return err
	}
	if o.Filter.GIDs, err = parseIDs("gid", o.gids); err != nil {
		return err
	}
	if o.Filter.PIDs, err = parseIDs("pid", o.pids); err != nil {
		return err
	}
	if o.ops != "" {
		for _, op := range strings.Split(o.ops, ",") {
			if op = strings.TrimSpace(op); op == "" {
				return Usagef("--op %q: empty operation name", o.ops)
			}
			o.Filter.Ops = append(o.Filter.Ops, strings.ToLower(strings.TrimSpace(op)))
		}
	}
	if err := profile.CheckSort(o.Sort); err != nil {
		return Usagef("--sort: %v", err)
	}
	if o.Top < 0 {
		return Usagef("--top %d: want 0 (all) or more", o.Top)
	}
	switch {
	case o.json && o.output != "table" && o.output != "json":
		return Usagef("--json and --output %s contradict each other", o.output)
	case o.json || o.output == "json":
		o.JSON = true
	case o.output != "table":
		return Usagef("unknown output format %q (want table or json)", o.output)
	}
	if math.IsNaN(o.Speed) || o.Speed < 0 || math.IsInf(o.Speed, 0) {
		return Usagef("--speed %v: want 0 or more", o.Speed)
	}
	o.Terminal = app.IO.OutTTY && !o.JSON
	o.Color = app.Color(app.IO.OutTTY)
	if !o.speedSet && o.Terminal {
		o.Speed = 1
	}
	return nil
}

// parseIDs reads a comma-separated list of uids, gids or pids.
func parseIDs(flag, s string) ([]uint32, error) {
	if s == "" {
		return nil, nil
	}
	var out []uint32
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseUint(strings.TrimSpace(f), 10, 32)
		if err != nil {
			return nil, Usagef("--%s %q: %q is not a number from 0 to 4294967295", flag, s, strings.TrimSpace(f))
		}
		out = append(out, uint32(v))
	}
	return out, nil
}

func runProfile(ctx context.Context, app *App, o *ProfileOptions) error {
	in, err := openProfileInput(ctx, app, o)
	if err != nil {
		return err
	}
	defer in.Close()
	// Enter pauses a paced replay, only when someone is at a terminal
	// (and standard input is not the log).
	if !o.Live && o.Terminal && o.Speed > 0 && o.Interval > 0 && app.IO.InTTY && o.Target != "-" {
		pause := make(chan struct{})
		o.Pause = pause
		go readEnter(ctx, app.IO.In, pause)
	}
	err = profile.Run(ctx, in, app.IO.Out, o.Options)
	if errors.Is(err, context.Canceled) {
		return ErrInterrupted
	}
	if errors.Is(err, profile.ErrBadInput) {
		return &UsageError{Err: err}
	}
	return err
}

// openProfileInput opens what the target names and sets the mode: live for
// a mount point or --follow, replay otherwise.
func openProfileInput(ctx context.Context, app *App, o *ProfileOptions) (io.ReadCloser, error) {
	in, err := profile.Open(ctx, profile.Input{Target: o.Target, Follow: o.Follow, Interval: o.Interval, Stdin: app.IO.In, Poll: followPoll})
	if errors.Is(err, profile.ErrBadInput) {
		return nil, &UsageError{Err: err}
	}
	if err != nil {
		return nil, err
	}
	o.Source, o.Live = in.Source, in.Live
	return in, nil
}

// readEnter sends on pause each time a line (Enter) is read from in.
func readEnter(ctx context.Context, in io.Reader, pause chan<- struct{}) {
	sc := bufio.NewScanner(in)
	for sc.Scan() {
		select {
		case pause <- struct{}{}:
		case <-ctx.Done():
			return
		}
	}
}

// openAccessLog starts the access log of a workload run (--access-log), or
// returns nil when path is empty.
func openAccessLog(path string, workers int) (*accesslog.Writer, error) {
	if path == "" {
		return nil, nil
	}
	w, err := accesslog.Create(path, workers)
	if err != nil {
		return nil, Usagef("--access-log: %v", err)
	}
	return w, nil
}

// closeAccessLog writes out what the access log holds. A failure to write
// it is a warning: the benchmark's own results stand.
func closeAccessLog(app *App, w *accesslog.Writer, res *report.Result) {
	if w == nil {
		return
	}
	if err := w.Close(); err != nil {
		app.Warnf("%v", err)
		res.Warnings = append(res.Warnings, err.Error())
	}
}
