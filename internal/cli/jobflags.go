package cli

import (
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/sysio"
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
	treeDir, treeFormat, ioengine, distribution                    string
	files, readPct, depth, width, iodepth                          int
	ops                                                            int64
	rate                                                           float64

	// names are the flags declared by addJobFlags: any of them switches
	// bench to a workload.
	names []string
}

// defaultOnlyFlags are the default benchmark's own flags.
var defaultOnlyFlags = []string{"block-size", "big-file-size", "small-file-size", "small-file-count"}

// addJobFlags declares the workload flags on cmd and keeps their names.
func addJobFlags(cmd *cobra.Command, o *JobFlags) {
	f := o.flagSet()
	f.VisitAll(func(fl *pflag.Flag) { o.names = append(o.names, fl.Name) })
	cmd.Flags().AddFlagSet(f)
}

func (o *JobFlags) flagSet() *pflag.FlagSet {
	f := pflag.NewFlagSet("workload", pflag.ContinueOnError)
	f.StringVarP(&o.File, "job", "f", "", "run the phases of the job `FILE` (YAML: a workload of phases, as fio's and vdbench's job files) instead of the default benchmark")
	f.StringVar(&o.File, oldJobFlag, "", "former name of --job")
	_ = f.MarkHidden(oldJobFlag)
	markFiles(f, fileIn, "job", oldJobFlag)
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
	f.StringVar(&o.interval, "interval", "", "print one line per `DURATION` (ops/s, MiB/s, p50, p99) and record the series, e.g. 2s; the default benchmark takes it too")
	f.Float64Var(&o.rate, "rate", 0, "open loop: `OPS` operations per second across the threads, and across the hosts on a many-host run; latency counts from each operation's scheduled start")
	f.StringVar(&o.ioengine, "ioengine", "sync", "`ENGINE` of the block reads and writes (read, write and rw phases): sync, one system call at a time per thread, "+
		"or io_uring, --iodepth operations in flight per thread (as fio)")
	f.IntVar(&o.iodepth, "iodepth", 1, "`N` operations in flight per thread with --ioengine io_uring (fio's iodepth)")
	f.StringVar(&o.distribution, "distribution", "uniform", "`DIST` of the random picks of blocks and files (random access, --file-select random): "+
		"uniform, zipf:S, pareto:H, normal:SIGMA% or zoned:A/B:... (fio's random_distribution); the result gives the share of picks to the hottest 1% and 10%")
	f.IntVar(&o.depth, "depth", 0, "file tree: `N` levels of directories below the tree's root (vdbench's depth)")
	f.IntVar(&o.width, "width", 0, "file tree: `N` directories in each directory (vdbench's width); width^depth leaf directories")
	f.StringVar(&o.treeDir, "tree-dir", "", "keep the tree in `DIR` under PATH and reuse it when its shape matches (vdbench's format=restart)")
	f.StringVar(&o.treeFormat, "tree-format", "", "`MODE`: restart (reuse a matching tree; default), yes (always rebuild) or no (it must exist)")
	return f
}

// bothFlags are workload flags that the default benchmark takes too:
// alone they do not turn bench into a workload.
var bothFlags = map[string]bool{"interval": true}

// active reports whether the command line asks for a workload.
func (o *JobFlags) active(cmd *cobra.Command) bool { return len(o.given(cmd)) > 0 }

// given lists the workload flags given that make bench run a workload.
func (o *JobFlags) given(cmd *cobra.Command) []string {
	var out []string
	for _, n := range o.names {
		if cmd.Flags().Changed(n) && !bothFlags[n] {
			out = append(out, "--"+n)
		}
	}
	return out
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
			return Usagef("--%s is a flag of the default benchmark, and %s makes this run a workload; with a workload, use --xfer-size, --file-size and --files",
				n, strings.Join(jf.given(cmd), " "))
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
			err = sysio.PathCause(err)
			return Usagef("-f %s: %v", jf.File, err)
		}
		if err := peerFileHint(jf.File, data); err != nil {
			return err
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
	return o.checkJob(cmd, app, j)
}

// checkJob checks the workload j (from a workload file, fio's input or
// the flags) and the flags that judge its result, and makes it the run's.
func (o *BenchOptions) checkJob(cmd *cobra.Command, app *App, j *jobfile.Job) error {
	if o.CI.Quick {
		j.Shrink(jobQuick)
		o.CI.Quick = false // the default benchmark's preset does not apply
	}
	return o.useJob(cmd, app, j)
}

// useJob checks the workload j and makes it the one bench runs, with the
// expectations and outputs of the command line.
func (o *BenchOptions) useJob(cmd *cobra.Command, app *App, j *jobfile.Job) error {
	if err := j.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	o.Job.Job = j
	if o.Data.Plain() {
		o.Data = j.Data // fio's and vdbench's options, unless the flags say otherwise
	}
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
	o.SkipDropCaches = o.SkipDropCaches || skipDropCaches(app)
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
	p := jobfile.PhaseSpec{Name: strings.ToLower(rw), Op: op, Access: access, Files: 1, ReadPct: o.readPct}
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
	j.Phases = []jobfile.PhaseSpec{p}
	return j, nil
}

// override applies the flags given explicitly to every phase of j (and to
// its tree), so that a workload file can be run shorter or smaller; the
// rules of what applies where are jobfile.Overrides'.
func (o *JobFlags) override(cmd *cobra.Command, j *jobfile.Job) error {
	ov, err := o.overrides(cmd)
	if err != nil {
		return err
	}
	if ov.TreeFormat != nil {
		if j.Tree == nil {
			return Usagef("--tree-format applies to a tree (--depth, --width or a workload file with tree:)")
		}
		if f := *ov.TreeFormat; f != "restart" && f != "yes" && f != "no" {
			return Usagef("--tree-format must be restart, yes or no (got %q)", f)
		}
	}
	if ov.FileSize != nil && *ov.FileSize == 0 && j.Tree == nil {
		for _, p := range j.Phases {
			if p.Data() {
				return Usagef("--file-size 0: phase %s reads or writes, and needs files of more than 0 bytes", p.Name)
			}
		}
	}
	ov.Apply(j)
	if ov.Distribution != nil && !ov.Distribution.IsUniform() && !slices.ContainsFunc(j.Phases, func(p jobfile.PhaseSpec) bool { return p.Random() }) {
		return Usagef("--distribution draws random picks: it needs random access (--rw randread, randwrite, randrw) or --file-select random")
	}
	return nil
}

// overrides reads the flags given explicitly into jobfile.Overrides.
func (o *JobFlags) overrides(cmd *cobra.Command) (*jobfile.Overrides, error) {
	f := cmd.Flags()
	ov := &jobfile.Overrides{}
	var err error
	given := func(name string) bool { return err == nil && f.Changed(name) }
	size := func(name, v string) *int64 {
		if !given(name) {
			return nil
		}
		n, e := sizeArg{flag: name, text: v}.parse()
		if e != nil {
			err = e
		}
		return &n
	}
	dur := func(name, v string) *time.Duration {
		if !given(name) {
			return nil
		}
		d, e := units.ParseDuration(v)
		if e != nil {
			err = Usagef("--%s: %v", name, e)
		}
		return &d
	}
	ov.XferSize, ov.FileSize = size("xfer-size", o.xferSize), size("file-size", o.fileSize)
	if err == nil && ov.XferSize != nil && *ov.XferSize == 0 {
		err = Usagef("--xfer-size must be greater than 0")
	}
	ov.Duration, ov.Warmup, ov.Interval = dur("duration", o.duration), dur("warmup", o.warmup), dur("interval", o.interval)
	if err != nil {
		return nil, err
	}
	if f.Changed("file-select") {
		sel, err := jobfile.ParseAccess(o.fileSelect)
		if err != nil {
			return nil, Usagef("--file-select: %v", err)
		}
		ov.Select = &sel
	}
	if f.Changed("distribution") {
		d, err := skew.Parse(o.distribution)
		if err != nil {
			return nil, Usagef("--distribution: %v", err)
		}
		ov.Distribution = &d
	}
	if err := o.checkCounts(cmd); err != nil {
		return nil, err
	}
	if f.Changed("ioengine") {
		if err := ioengineHint(o.ioengine); err != nil {
			return nil, err
		}
		g, err := workload.ParseIOEngine(o.ioengine)
		if err != nil {
			return nil, Usagef("--ioengine: %v", err)
		}
		ov.IOEngine = &g
	}
	ov.IODepth = ifSet(f.Changed("iodepth"), &o.iodepth)
	ov.Rate = ifSet(f.Changed("rate"), &o.rate)
	ov.Ops = ifSet(f.Changed("ops"), &o.ops)
	ov.Files = ifSet(f.Changed("files"), &o.files)
	ov.Depth = ifSet(f.Changed("depth"), &o.depth)
	ov.Width = ifSet(f.Changed("width"), &o.width)
	ov.TreeDir = ifSet(f.Changed("tree-dir"), &o.treeDir)
	ov.TreeFormat = ifSet(f.Changed("tree-format"), &o.treeFormat)
	return ov, nil
}

// checkCounts checks the numbers of the flags given explicitly.
func (o *JobFlags) checkCounts(cmd *cobra.Command) error {
	f := cmd.Flags()
	if f.Changed("rate") && o.rate <= 0 {
		return Usagef("--rate must be more than 0 operations per second")
	}
	if f.Changed("ops") && o.ops < 1 {
		return Usagef("--ops must be at least 1")
	}
	if f.Changed("iodepth") && (o.iodepth < 1 || o.iodepth > workload.MaxIODepth) {
		return Usagef("--iodepth must be in 1..%d", workload.MaxIODepth)
	}
	if f.Changed("files") && o.files < 1 {
		return Usagef("--files must be at least 1")
	}
	return nil
}

// ifSet is v when its flag was given, else nil.
func ifSet[T any](changed bool, v *T) *T {
	if changed {
		return v
	}
	return nil
}
