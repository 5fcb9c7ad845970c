package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/bench"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/live"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// JobFlags are the flags of bench that run a workload instead of the
// default benchmark: a workload file (-f) or one ad-hoc phase described by
// flags, fio- and vdbench-like.
type JobFlags struct {
	File string
	// Job is the workload to run, filled by resolveJob.
	Job *jobfile.Job

	rw, fileSelect, xferSize, fileSize, duration, warmup, interval string
	treeDir, treeFormat                                            string
	files, readPct, depth, width                                   int
	ops                                                            int64
	rate                                                           float64
}

// jobFlagNames are the flags that switch bench to a workload.
var jobFlagNames = []string{"workload", "rw", "file-select", "xfer-size", "file-size", "files", "read-pct", "ops",
	"duration", "warmup", "interval", "rate", "depth", "width", "tree-dir", "tree-format"}

// defaultOnlyFlags are the default benchmark's own flags.
var defaultOnlyFlags = []string{"block-size", "big-file-size", "small-file-size", "small-file-count"}

func addJobFlags(cmd *cobra.Command, o *JobFlags) {
	f := cmd.Flags()
	f.StringVarP(&o.File, "workload", "f", "", "run the phases of the workload `FILE` (YAML) instead of the default benchmark")
	f.StringVar(&o.rw, "rw", "", "run one phase of this `OP`: read, write, rw (mixed), randread, randwrite, randrw (as fio), or "+
		"create, stat, open, rename, chmod, utime, readdir, unlink, mkdir, rmdir, format (default read)")
	f.StringVar(&o.fileSelect, "file-select", "seq", "`ORDER` in which each thread takes its files: seq or random (vdbench's fileselect)")
	f.StringVar(&o.xferSize, "xfer-size", "", "`SIZE` of each read or write, independent of the file size (default 1M)")
	f.StringVar(&o.fileSize, "file-size", "", "`SIZE` of each file (default 1G for reads and writes, empty files for metadata operations; 128K in a tree)")
	f.IntVar(&o.files, "files", 0, "`N` files per thread (default 1); with --depth/--width, files per leaf directory")
	f.IntVar(&o.readPct, "read-pct", 0, "`PERCENT` of reads in a mixed phase (--rw rw or randrw; default 50)")
	f.Int64Var(&o.ops, "ops", 0, "stop after `N` operations in all (default: every file, or every block, once)")
	f.StringVar(&o.duration, "duration", "", "run each phase for `DURATION`, e.g. 60s (default: by count)")
	f.StringVar(&o.warmup, "warmup", "", "run `DURATION` before measuring (with --duration), e.g. 5s")
	f.StringVar(&o.interval, "interval", "", "print one line per `DURATION` (ops/s, MiB/s, p50, p99) and record the series, e.g. 2s")
	f.Float64Var(&o.rate, "rate", 0, "open loop: `OPS` operations per second across the threads; latency counts from each operation's scheduled start")
	f.IntVar(&o.depth, "depth", 0, "file tree: `N` levels of directories below the tree's root (vdbench's depth)")
	f.IntVar(&o.width, "width", 0, "file tree: `N` directories in each directory (vdbench's width); width^depth leaf directories")
	f.StringVar(&o.treeDir, "tree-dir", "", "keep the tree in `DIR` under PATH and reuse it when its shape matches (vdbench's format=restart)")
	f.StringVar(&o.treeFormat, "tree-format", "", "`MODE`: restart (reuse a matching tree; default), yes (always rebuild) or no (it must exist)")
}

// active reports whether the command line asks for a workload.
func (o *JobFlags) active(cmd *cobra.Command) bool {
	for _, n := range jobFlagNames {
		if cmd.Flags().Changed(n) {
			return true
		}
	}
	return false
}

// jobQuick is what --quick does to a workload: the same phases, smaller.
var jobQuick = jobfile.Limits{FileSize: 64 * units.MiB, Duration: 10 * time.Second, Files: 2000, Ops: 100_000}

// resolveJob builds the workload from the file or the flags, applies the
// flags that override it, and checks everything before anything runs.
func (o *BenchOptions) resolveJob(cmd *cobra.Command, app *App) error {
	f := cmd.Flags()
	jf := &o.Job
	for _, n := range defaultOnlyFlags {
		if f.Changed(n) {
			return Usagef("--%s is a flag of the default benchmark; with a workload, use --xfer-size, --file-size and --files", n)
		}
	}
	var j *jobfile.Job
	if jf.File != "" {
		for _, n := range []string{"rw", "read-pct", "file-select"} {
			if f.Changed(n) {
				return Usagef("--%s describes an ad-hoc phase; it does not combine with -f (edit the workload file)", n)
			}
		}
		data, err := os.ReadFile(jf.File)
		if err != nil {
			var pe *os.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			return Usagef("-f %s: %v", jf.File, err)
		}
		if j, err = jobfile.Parse(data, jf.File); err != nil {
			return &UsageError{Err: err}
		}
	} else {
		var err error
		if !f.Changed("read-pct") {
			jf.readPct = -1
		}
		if j, err = jf.adHoc(f.Changed("tree-dir") || f.Changed("depth") || f.Changed("width")); err != nil {
			return err
		}
	}
	if err := jf.override(cmd, j); err != nil {
		return err
	}
	if f.Changed("threads") {
		j.Threads = 0 // -p wins over the file
	}
	if o.CI.Quick {
		j.Shrink(jobQuick)
		o.CI.Quick = false // the default benchmark's preset does not apply
	}
	if err := j.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	jf.Job = j
	cat := expect.Catalog{Command: "bench"}
	var names []string
	for _, p := range j.Phases {
		cat.Metrics = append(cat.Metrics, expect.Metric{Name: p.Name, Bytes: p.Data() || p.Kind() == workload.Create})
		names = append(names, p.Name)
	}
	if err := o.CI.resolve(cmd, cat); err != nil {
		return err
	}
	if err := o.CI.checkMeasured(names, map[string]string{}); err != nil {
		return err
	}
	if v := strings.ToLower(app.IO.Getenv("SKIP_DROP_CACHES")); v == "true" || v == "1" || v == "yes" {
		o.SkipDropCaches = true
	}
	return o.Output.resolve()
}

// adHoc builds a one-phase workload from the flags.
func (o *JobFlags) adHoc(tree bool) (*jobfile.Job, error) {
	rw := o.rw
	if rw == "" {
		rw = jobfile.OpRead
	}
	op, access, ok := jobfile.ResolveOp(rw)
	if !ok {
		return nil, Usagef("--rw %q: want one of %s", rw, strings.Join(jobfile.Ops(), ", "))
	}
	j := &jobfile.Job{Name: "ad hoc"}
	p := jobfile.Phase{Name: strings.ToLower(rw), Op: op, Access: access, Files: 1, ReadPct: o.readPct}
	if o.readPct != -1 && (o.readPct < 0 || o.readPct > 100) {
		return nil, Usagef("--read-pct %d is not in 0..100", o.readPct)
	}
	if tree {
		if o.depth < 0 || o.width < 1 {
			return nil, Usagef("a tree needs --width of at least 1 (and --depth, 0 or more)")
		}
		files := o.files
		if files == 0 {
			files = 1
		}
		j.Tree = &jobfile.Tree{Shape: workload.Shape{Depth: o.depth, Width: o.width, Files: files, FileSize: 128 * units.KiB}, Format: "restart"}
	}
	j.Phases = []jobfile.Phase{p}
	return j, nil
}

// override applies the flags given explicitly to every phase of j (and to
// its tree), so that a workload file can be run shorter or smaller.
func (o *JobFlags) override(cmd *cobra.Command, j *jobfile.Job) error {
	f := cmd.Flags()
	var err error
	size := func(name, v string) int64 {
		if err != nil || !f.Changed(name) {
			return 0
		}
		n, e := units.ParseSize(v)
		if e != nil {
			err = Usagef("--%s: %v", name, e)
		}
		return n
	}
	dur := func(name, v string) time.Duration {
		if err != nil || !f.Changed(name) {
			return 0
		}
		d, e := units.ParseDuration(v)
		if e != nil {
			err = Usagef("--%s: %v", name, e)
		}
		return d
	}
	xfer, fsize := size("xfer-size", o.xferSize), size("file-size", o.fileSize)
	d, w, iv := dur("duration", o.duration), dur("warmup", o.warmup), dur("interval", o.interval)
	if err != nil {
		return err
	}
	sel := workload.Sequential
	if f.Changed("file-select") {
		if sel, err = jobfile.ParseAccess(o.fileSelect); err != nil {
			return Usagef("--file-select: %v", err)
		}
	}
	if f.Changed("rate") && o.rate <= 0 {
		return Usagef("--rate must be more than 0 operations per second")
	}
	if f.Changed("ops") && o.ops < 1 {
		return Usagef("--ops must be at least 1")
	}
	if f.Changed("files") && o.files < 1 {
		return Usagef("--files must be at least 1")
	}
	if t := j.Tree; t != nil {
		if f.Changed("file-size") {
			t.FileSize = fsize
		}
		if f.Changed("files") {
			t.Files = o.files
		}
		if f.Changed("depth") {
			t.Depth = o.depth
		}
		if f.Changed("width") {
			t.Width = o.width
		}
		if f.Changed("tree-dir") {
			t.Dir = o.treeDir
		}
		if f.Changed("tree-format") {
			t.Format = o.treeFormat
		}
	} else if f.Changed("tree-format") {
		return Usagef("--tree-format applies to a tree (--depth, --width or a workload file with tree:)")
	}
	if t := j.Tree; t != nil && t.Format != "restart" && t.Format != "yes" && t.Format != "no" {
		return Usagef("--tree-format must be restart, yes or no (got %q)", t.Format)
	}
	for i := range j.Phases {
		p := &j.Phases[i]
		// In a file, phases that do each file once (create, unlink,
		// mkdir, rmdir, format) take no limit: leave them be. (An ad-hoc
		// phase gets every flag, and a usage error if it does not fit.)
		switch p.Kind() {
		case workload.Create, workload.Unlink, workload.Mkdir, workload.Rmdir:
			if o.File == "" {
				break
			}
			if f.Changed("xfer-size") {
				p.XferSize = xfer
			}
			continue
		}
		if f.Changed("xfer-size") {
			p.XferSize = xfer
		}
		if f.Changed("file-size") && j.Tree == nil {
			p.FileSize = fsize
		}
		if f.Changed("files") && j.Tree == nil {
			p.Files = o.files
		}
		if f.Changed("file-select") {
			p.Select = sel
		}
		if f.Changed("ops") {
			p.Ops = o.ops
		}
		if f.Changed("duration") {
			p.Duration = d
		}
		if f.Changed("warmup") {
			p.Warmup = w
		}
		if f.Changed("interval") {
			p.Interval = iv
		}
		if f.Changed("rate") {
			p.Rate = o.rate
		}
	}
	return nil
}

// runJob runs a workload and reports it as runBench does the default
// benchmark: progress or interval lines on stderr, the result on stdout.
func runJob(ctx context.Context, app *App, o *BenchOptions) error {
	res := newResult("bench")
	meter := startUsage()
	quiet := app.Globals.Quiet
	var prog *Progress
	var pub *live.Publisher
	o.Hooks = bench.Hooks{
		PhaseStart: func(e *workload.Engine, p *workload.Phase, total int64) {
			prog = nil
			if p.Interval > 0 {
				if !quiet {
					fmt.Fprintf(app.IO.Err, "%-14s %8s %16s %15s  %s\n", p.Name, "time", "rate", "bandwidth", "latency")
				}
				return
			}
			prog = app.StartProgress(p.Title, total, "ops", func() int64 { return e.Live.Ops.Load() })
		},
		PhaseEnd: func(e *workload.Engine, p *workload.Phase) {
			pub.EndPhase(p)
			if prog != nil {
				prog.Done()
			}
		},
		Interval: func(p *workload.Phase, s report.Sample) {
			if !quiet {
				fmt.Fprintln(app.IO.Err, bench.IntervalLine(p.Name, s))
			}
		},
		Warn: func(msg string) { app.Warnf("%s", msg) },
		Started: func(e *workload.Engine, dir string) {
			var err error
			if pub, err = live.StartEngine("bench", o.Path, e); err != nil {
				app.Warnf("fsbench stats will not see this run: %v", err)
			}
		},
		Finished: func(*workload.Engine) { pub.Stop() },
		Created:  app.Left.Set,
		Removed:  app.Left.Clear,
	}
	defer func() { pub.Stop() }()
	j := o.Job.Job
	threads := o.Threads
	if j.Threads > 0 {
		threads = j.Threads
	}
	if !quiet {
		what := "an ad-hoc workload"
		if j.File != "" {
			what = "workload " + j.File
		}
		fmt.Fprintf(app.IO.Err, "Benchmarking %s with %s (%d phases, %d threads)\n", o.Path, what, len(j.Phases), threads)
	}
	alog, err := openAccessLog(o.AccessLog, threads)
	if err != nil {
		return err
	}
	if alog != nil {
		o.Tracer = alog
	}
	err = bench.RunJob(ctx, o.Options, j, res)
	closeAccessLog(app, alog, res)
	res.Usage = meter.stop()
	if err != nil && !res.Interrupted {
		var je *jobfile.Error
		if errors.As(err, &je) || errors.Is(err, bench.ErrBadInput) {
			return &UsageError{Err: err}
		}
		return app.writeFailed(res, &o.Output, err)
	}
	if !quiet {
		for i := range res.Phases {
			fmt.Fprintln(app.IO.Err, bench.SummaryLine(&res.Phases[i]))
		}
	}
	ciErr := app.finishCI(res, &o.CI)
	if werr := app.writeResult(res, &o.Output); werr != nil {
		return werr
	}
	if res.Interrupted {
		return ErrInterrupted
	}
	return ciErr
}
