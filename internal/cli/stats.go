package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/stats"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/pkg/object"
)

// StatsOptions are the flags of `fsbench stats`.
type StatsOptions struct {
	Path       string // "" for the system-wide view
	Schema     string
	Verbosity  int
	Interval   time.Duration
	Count      int
	MetricsURL string
	Metrics    []stats.MetricSpec
	Format     stats.Format

	interval string
	metrics  []string
	format   string
	json     bool
}

func newStatsCmd(app *App) *cobra.Command {
	return newStatsCmdWith(app, func(ctx context.Context, o *StatsOptions) error { return runStats(ctx, app, o) })
}

func statsLong() string {
	var b strings.Builder
	b.WriteString(`Show what a storage client is doing, one row per interval, as "juicefs stats"
does, on any mount: the JuiceFS client's own counters (.stats), the kernel's
view (block device, NFS client, CPU, memory, dirty and writeback pages, the
FUSE daemon), a Prometheus endpoint (--metrics-url), and the live counters of
fsbench benchmarks running on the same mount.

Without MOUNTPOINT the view is system-wide. A path that is not a mount point
shows the mount that contains it. Without --schema every section that has a
source is shown. Schema letters:
`)
	for _, l := range stats.Letters {
		fmt.Fprintf(&b, "  %c  %-11s %s\n", l.Letter, l.Name, l.Help)
	}
	b.WriteString(`
Rates are per second over the interval; latencies (lat, rtt, exe, await) are
means in milliseconds; "-" is a value that cannot be known (no data yet, or a
counter that went backwards because its process restarted). Ctrl-C ends the
view with exit status 0.`)
	return b.String()
}

func newStatsCmdWith(app *App, runF func(context.Context, *StatsOptions) error) *cobra.Command {
	o := &StatsOptions{}
	cmd := &cobra.Command{
		Use:   "stats [MOUNTPOINT]",
		Short: "Show live metrics of a mount: JuiceFS, kernel, Prometheus, running benchmarks",
		Long:  statsLong(),
		Example: `  fsbench stats /mnt/jfs
  fsbench stats /mnt/jfs --schema ufmcob -l 1 --interval 5s
  fsbench stats /mnt/nfs --count 10 -o csv > nfs.csv
  fsbench stats --metrics-url http://localhost:9567/metrics
  fsbench stats /data --metrics-url http://minio:9000/minio/v2/metrics/cluster --metric 'req=minio_s3_requests_total'`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return Usagef("%s expects at most one MOUNTPOINT (got %d arguments)", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 1 {
				o.Path = args[0]
			}
			if err := o.resolve(); err != nil {
				return err
			}
			return runF(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Schema, "schema", "", "sections to show, as letters (listed below); default: every section that has a source")
	f.IntVarP(&o.Verbosity, "verbosity", "l", 0, "1 adds the detail columns ([bracketed] below)")
	f.StringVar(&o.interval, "interval", "1s", "the `DURATION` between rows, such as 1s, 500ms or 1m")
	f.IntVar(&o.Count, "count", 0, "stop after this many rows (0: until Ctrl-C)")
	f.StringVar(&o.MetricsURL, "metrics-url", "", "also read this Prometheus endpoint (JuiceFS :9567/metrics, MinIO, node_exporter)")
	f.StringVar(&o.MetricsURL, oldMetricsURL, "", "former spelling of --metrics-url")
	_ = f.MarkHidden(oldMetricsURL)
	f.StringArrayVar(&o.metrics, "metric", nil, "show a metric of --metrics-url: [NICK=]NAME[{label=\"value\"}]; repeatable")
	f.StringVarP(&o.format, "output", "o", "table", "output: table (live view; plain lines when not a terminal), json (NDJSON), csv")
	f.BoolVar(&o.json, "json", false, "shorthand for --output json")
	return cmd
}

// parseInterval accepts seconds ("1", "0.5") or a Go duration ("500ms").
func parseInterval(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	var d time.Duration
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		d = time.Duration(v * float64(time.Second))
	} else if d, err = time.ParseDuration(s); err != nil {
		return 0, fmt.Errorf("--interval %q: want seconds (1, 0.5) or a duration (500ms, 1m)", s)
	}
	if d < 100*time.Millisecond || d > 24*time.Hour {
		return 0, fmt.Errorf("--interval %q: want between 0.1 s and 24 h", s)
	}
	return d, nil
}

func (o *StatsOptions) resolve() error {
	d, err := parseInterval(o.interval)
	if err != nil {
		return &UsageError{Err: err}
	}
	o.Interval = d
	if o.Count < 0 {
		return Usagef("--count %d: want 0 (no limit) or more", o.Count)
	}
	if o.Verbosity < 0 {
		return Usagef("--verbosity %d: want 0 or more", o.Verbosity)
	}
	if o.json {
		if o.format != "table" && o.format != "json" {
			return Usagef("--json and --output %s contradict each other", o.format)
		}
		o.format = "json"
	}
	if o.Format, err = stats.ParseFormat(o.format); err != nil {
		return &UsageError{Err: err}
	}
	if o.Schema != "" {
		if _, err := stats.ParseSchema(o.Schema, o.Verbosity, []stats.Column{{Nick: "x"}}); err != nil {
			return Usagef("--schema: %v", err)
		}
		if strings.Contains(o.Schema, "x") && len(o.metrics) == 0 {
			return Usagef("--schema %s: letter x needs at least one --metric", o.Schema)
		}
	}
	if o.MetricsURL != "" {
		u, err := url.Parse(o.MetricsURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return Usagef("--metrics-url %q: want an http:// or https:// URL", object.RedactURL(o.MetricsURL))
		}
	}
	if len(o.metrics) > 0 && o.MetricsURL == "" {
		return Usagef("--metric needs --metrics-url URL")
	}
	o.Metrics = o.Metrics[:0]
	for _, m := range o.metrics {
		ms, err := stats.ParseMetricSpec(m)
		if err != nil {
			return &UsageError{Err: err}
		}
		o.Metrics = append(o.Metrics, ms)
	}
	return nil
}

func runStats(ctx context.Context, app *App, o *StatsOptions) error {
	opts := stats.Options{
		Schema: o.Schema, Verbosity: o.Verbosity, Interval: o.Interval, Count: o.Count,
		MetricsURL: o.MetricsURL, Metrics: o.Metrics,
		Warn: func(format string, args ...any) { app.Warnf(format, args...) },
	}
	if o.Path != "" {
		abs, err := filepath.Abs(o.Path)
		if err != nil {
			return Usagef("stats %s: %v", o.Path, err)
		}
		if _, err := os.Stat(abs); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return Usagef("stats %s: no such file or directory", o.Path)
			}
			return fmt.Errorf("stats %s: %w", o.Path, errors.Unwrap(err))
		}
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			abs = r
		}
		m, err := sysio.FindMount(abs)
		if err != nil {
			return fmt.Errorf("stats %s: %w", o.Path, err)
		}
		opts.Mount, opts.Path = &m, abs
		if m.MountPoint != abs && !app.Globals.Quiet && o.Format == stats.FormatTable {
			app.Infof("%s is not a mount point: showing %s (%s)", o.Path, m.MountPoint, m.FSType)
		}
	}
	plan, err := stats.Prepare(ctx, opts)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("stats: %w", err)
	}
	for _, w := range plan.Warnings {
		app.Warnf("%s", w)
	}
	plan.Runner.Render = stats.NewRenderer(app.IO.Out, o.Format, app.IO.OutTTY, app.Color(app.IO.OutTTY))
	// Ctrl-C is how the view normally ends: Run returns nil then.
	return plan.Runner.Run(ctx)
}
