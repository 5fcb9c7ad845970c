package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/bench"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/live"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// BenchOptions are the flags of `fsbench bench`.
type BenchOptions struct {
	bench.Options
	RunFlags
	// Job holds the workload flags (-f, --rw, --duration, ...); any of
	// them switches bench from the default benchmark to a workload.
	Job JobFlags
	// Cap holds --slo and --curve.
	Cap CapacityFlags
	// AccessLog is --access-log: a file to log every file operation to.
	AccessLog string
	// Journal is --journal: the verification journal to record the run in.
	Journal string
	// journalConfine, on an agent, must accept the journal's directory.
	journalConfine func(string) error
	// summary, when set, writes more lines about the result (fio's
	// summary for fsbench fio -v).
	summary func(*report.Result)

	blockSize, bigFileSize, smallFileSize, sample string
	data                                          dataFlags
	capPhase                                      int
}

func newBenchCmd(app *App) *cobra.Command {
	return newBenchCmdWith(app, nil)
}

// newBenchCmdWith builds the command; runF replaces the run in tests of
// flag parsing.
func newBenchCmdWith(app *App, runF func(context.Context, *BenchOptions) error) *cobra.Command {
	o := &BenchOptions{Options: bench.Defaults()}
	cmd := &cobra.Command{
		Use:   "bench PATH",
		Short: "Benchmark a mounted file system: big and small files, write, read and stat",
		Long:  benchLong,
		Example: `  fsbench bench /mnt/jfs -p 4
  fsbench bench /mnt/nfs --big-file-size 0 --small-file-count 1000 -p 16
  fsbench bench /data --direct --block-size 4M --verify --json > result.json
  fsbench bench /mnt/jfs -p 4 --quick --expect 'write-big>=200MiB/s' --expect 'stat.p99<5ms' -o junit > junit.xml
  fsbench bench /data --rw randread --xfer-size 4K --file-size 1G --duration 30s -p 4 --direct
  fsbench bench /data --depth 2 --width 3 --files 4 --rw stat --file-select random --duration 10s
  fsbench bench /mnt/jfs --job examples/fio-jobs.yaml --interval 2s`,
		Args: curveArgs(exactArgs(1, "one PATH, the directory to benchmark")),
		RunE: hostsCommand[*BenchOptions]{opts: o, flags: &o.RunFlags, runF: runF, cluster: benchCluster, run: runBench,
			resolve: func(cmd *cobra.Command, args []string) error {
				o.Path = args[0]
				return o.prepare(cmd, app)
			}}.runE(app),
	}
	f := cmd.Flags()
	f.StringVar(&o.blockSize, "block-size", "1M", "size of each read and write call; a bare number is MiB, as in juicefs bench (4 is 4 MiB; or 512K, 4M)")
	f.StringVar(&o.bigFileSize, "big-file-size", "1G", "size of the big file each thread writes; a bare number is MiB, as in juicefs bench; 0 turns the big-file phases off")
	f.StringVar(&o.smallFileSize, "small-file-size", "128K", "size of each small file; a bare number is KiB, as in juicefs bench (128 is 128 KiB)")
	f.IntVar(&o.SmallFileCount, "small-file-count", o.SmallFileCount, "small files per thread; 0 turns the small-file phases off")
	f.IntVarP(&o.Threads, "threads", "p", o.Threads, "parallel workers on each host: here concurrent threads")
	f.BoolVar(&o.Direct, "direct", false, "use O_DIRECT, bypassing the page cache (sizes must be multiples of the file system's alignment)")
	f.BoolVar(&o.Fsync, "fsync", false, "fsync each written file before closing it, to measure durable writes")
	f.BoolVar(&o.Verify, "verify", false, "check every byte read against what was written; mismatches are errors (off by default; objbench's is on)")
	f.BoolVar(&o.Keep, "keep", false, "keep the benchmark's files instead of removing them")
	f.StringVar(&o.DropCaches, "drop-caches", runenv.DropAuto, "drop kernel caches before read phases: auto (all caches as root, else our files only), always, never; SKIP_DROP_CACHES=true disables")
	f.BoolVar(&o.ReadExisting, "read-existing", false, "read the files already in PATH (every one, or --sample) instead of writing files of its own: nothing is created, changed or removed")
	f.StringVar(&o.sample, "sample", "", "with --read-existing: read only this many files (500), or this fraction of them (0.1 or 10%), picked at random")
	f.StringVar(&o.AccessLog, "access-log", "", "write one line per file operation to this file, in JuiceFS's access-log format, for fsbench profile")
	f.StringVar(&o.Journal, "journal", "", journalUsage)
	markFiles(f, fileOut, "access-log", "journal")
	markAgentPath(cmd, "journal") // with --hosts each agent writes its own, beneath its roots
	addRunFlags(cmd, &o.RunFlags, benchQuick)
	addJobFlags(cmd, &o.Job)
	addDataFlags(cmd, &o.data)
	addCapacityFlags(cmd, &o.Cap)
	addJuicefsOnlyFlags(cmd)
	return cmd
}

// skipDropCaches reports whether SKIP_DROP_CACHES (true, 1 or yes) turns
// the dropping of caches off.
func skipDropCaches(app *App) bool {
	v := strings.ToLower(app.IO.Getenv("SKIP_DROP_CACHES"))
	return v == "true" || v == "1" || v == "yes"
}

// benchLong is the help of bench.
const benchLong = `Benchmark the file system that holds PATH, as "juicefs bench" does, on any
mount: JuiceFS, NFS, CephFS, any FUSE file system or a local disk.

N threads (-p) start together on each phase: write one big file each in
--block-size writes, read it back, write --small-file-count small files each,
read them, stat them. Before each read and stat phase, dirty data is flushed
and the kernel's caches are dropped so reads reach the storage (as root:
/proc/sys/vm/drop_caches; otherwise fdatasync and fadvise on fsbench's own
files). Every file lives in a new directory under PATH that is removed at the
end; nothing else in PATH is opened for writing, renamed or deleted.

The table shows throughput (VALUE), time per file per thread (COST) and
latency percentiles, coloured by JuiceFS's thresholds on a terminal. On a
JuiceFS mount, the client's own counters from .stats are added.

--interval prints a line per interval of every phase and records the series,
for the default benchmark and for workloads alike.

With -f FILE, or any of --rw, --xfer-size, --file-size, --files, --duration,
--ops, --rate, --depth, --width, bench runs a workload instead:
fio- and vdbench-like phases (sequential or random offsets, mixed reads and
writes, limits by count or time, file trees, metadata operations, an open
loop at a fixed rate). Flags given with -f override every phase of the file.
See docs/workloads.md.

With --read-existing, bench reads the files already in PATH instead (every
regular file, or --sample of them; symbolic links are not followed) and
creates, changes and removes nothing: no directory of its own, opens with
O_NOATIME where the kernel allows it (the files' owner, or CAP_FOWNER; the
result's "open" parameter says noatime or plain). Files of at most
--block-size are timed from open to close (read-existing-small), larger ones
per block (read-existing-big).`

// prepare checks the command line and fills o: for a workload when any of
// its flags is given, for the default benchmark otherwise.
func (o *BenchOptions) prepare(cmd *cobra.Command, app *App) error {
	if err := o.Cluster.resolve(cmd); err != nil {
		return err
	}
	if !o.Cluster.active() {
		st, err := statPath(o.Path) // the first look at PATH, bounded
		switch {
		case errors.Is(err, sysio.ErrStalled):
			return err
		case err == nil && !st.IsDir():
			return Usagef("PATH %s is not a directory: give the directory to benchmark in", o.Path)
		}
	}
	if o.Cap.active() && (o.ReadExisting || !o.Job.active(cmd)) {
		return Usagef("--slo and --curve set the rate of a workload's phase: give one, e.g. --rw randread --duration 10s")
	}
	var err error
	if o.Data, err = o.data.resolve(cmd); err != nil {
		return err
	}
	if o.ReadExisting {
		if !o.Data.Plain() {
			return Usagef("--read-existing writes nothing: --compress-ratio and --dedupe-ratio do not apply")
		}
		return o.resolveExisting(cmd, app)
	}
	if err := checkJournal(cmd, o.Journal, o.Keep); err != nil {
		return err
	}
	if cmd.Flags().Changed("sample") {
		return Usagef("--sample chooses the files of --read-existing; give --read-existing too")
	}
	if o.Job.active(cmd) {
		if err := o.resolveJob(cmd, app); err != nil {
			return err
		}
		return o.resolveCapacity(cmd)
	}
	if err := o.CI.resolve(cmd, expect.Bench); err != nil {
		return err
	}
	if err := o.resolve(app); err != nil {
		return err
	}
	if cmd.Flags().Changed("interval") {
		d, err := units.ParseDuration(o.Job.interval)
		if err != nil || d <= 0 {
			return Usagef("--interval %q: want a positive duration such as 2s", o.Job.interval)
		}
		o.Interval = d
	}
	return o.CI.checkMeasured(benchMeasured(o.Options))
}

// existingRefused are the flags of bench that write, or check what was
// written: none applies to --read-existing.
var existingRefused = []string{"big-file-size", "small-file-size", "small-file-count", "fsync", "keep", "verify", "quick", "journal"}

// resolveExisting checks the command line of --read-existing: no flag that
// would write or that checks data of fsbench's own, no workload, one host,
// and no output file inside the tree it reads.
func (o *BenchOptions) resolveExisting(cmd *cobra.Command, app *App) error {
	f := cmd.Flags()
	for _, n := range existingRefused {
		if f.Changed(n) {
			if n == "verify" {
				return Usagef("--verify checks data fsbench wrote; the files --read-existing reads are not its own, so there is nothing to check them against")
			}
			return Usagef("--%s does not apply to --read-existing, which writes nothing", n)
		}
	}
	if o.Job.active(cmd) {
		return Usagef("--read-existing reads the files in PATH; it does not combine with a workload (-f, --rw, ...)")
	}
	if o.Cluster.active() {
		return Usagef("--read-existing runs on one host; it does not combine with --hosts")
	}
	if err := o.insideTree(cmd); err != nil {
		return err
	}
	if o.sample != "" {
		s, err := bench.ParseSample(o.sample)
		if err != nil {
			return &UsageError{Err: err}
		}
		o.Sample = s
	}
	if err := o.CI.resolve(cmd, expect.Bench); err != nil {
		return err
	}
	if err := parseSizes(o.sizeArg("block-size", o.blockSize, &o.BlockSize)); err != nil {
		return err
	}
	o.SkipDropCaches = o.SkipDropCaches || skipDropCaches(app)
	why := map[string]string{}
	for _, n := range expect.Bench.Names() {
		why[n] = "--read-existing measures read-existing-small and read-existing-big"
	}
	if err := o.CI.checkMeasured([]string{bench.ExistingSmall, bench.ExistingBig}, why); err != nil {
		return err
	}
	return o.Output.resolve()
}

// insideTree refuses an output file inside PATH: it would be a new entry
// in the tree that --read-existing leaves as it is.
func (o *BenchOptions) insideTree(cmd *cobra.Command) error {
	root, err := filepath.Abs(o.Path)
	if err != nil {
		return Usagef("PATH %s: %v", o.Path, err)
	}
	_, outs := flagFiles(cmd)
	for _, out := range outs {
		p, err := filepath.Abs(out.path)
		if err == nil && strings.HasPrefix(p, root+string(filepath.Separator)) {
			return Usagef("%s is inside %s, which --read-existing leaves unchanged: write it elsewhere", out, o.Path)
		}
	}
	return nil
}

// benchQuick is the --quick preset of bench.
var benchQuick = []Preset{{"big-file-size", "64M"}, {"small-file-count", "1000"}, {"small-file-size", "4K"}}

// benchMeasured lists the phases o will run, and why the others will not.
func benchMeasured(o bench.Options) ([]string, map[string]string) {
	var names []string
	if o.BigFileSize > 0 {
		names = append(names, "write-big", "read-big")
	}
	if o.SmallFileCount > 0 {
		names = append(names, "write-small", "read-small", "stat")
	}
	why := map[string]string{"write-big": "--big-file-size 0", "read-big": "--big-file-size 0",
		"write-small": "--small-file-count 0", "read-small": "--small-file-count 0", "stat": "--small-file-count 0"}
	return names, why
}

// sizeArg is bench's size flag name, in juicefs bench's unit when bare.
func (*BenchOptions) sizeArg(name, text string, dst *int64) sizeArg {
	return sizeArg{name, text, dst, bareUnit("bench", name)}
}

func (o *BenchOptions) resolve(app *App) error {
	if err := parseSizes(
		o.sizeArg("block-size", o.blockSize, &o.BlockSize),
		o.sizeArg("big-file-size", o.bigFileSize, &o.BigFileSize),
		o.sizeArg("small-file-size", o.smallFileSize, &o.SmallFileSize),
	); err != nil {
		return err
	}
	o.SkipDropCaches = o.SkipDropCaches || skipDropCaches(app)
	if err := o.Options.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	return o.Output.resolve()
}

// runBench runs the default benchmark, or the workload o.Job holds, and
// reports it: progress bars (or interval lines) on stderr while it runs,
// the result on stdout.
func runBench(ctx context.Context, app *App, o *BenchOptions) error {
	if err := missingPath(o.Path, o.Cluster.active()); err != nil {
		return err
	}
	pub := o.setHooks(app)
	defer func() { pub.p.Stop() }()
	j := o.Job.Job
	threads := o.Threads
	if j != nil && j.Threads > 0 {
		threads = j.Threads
	}
	if !o.Cluster.active() {
		if err := bench.CheckSpace(o.Options, j); err != nil {
			return &UsageError{Err: err}
		}
	}
	alog, err := openAccessLog(o.AccessLog, threads) // a refusal comes alone
	if err != nil {
		return err
	}
	jw, err := openJournal(o.Journal, o.Path, threads, o.Seed, nil)
	if err != nil {
		closeAccessLog(app, alog, &report.Result{})
		return err
	}
	o.announce(app, threads)
	if alog != nil {
		o.Tracer = alog
	}
	if jw != nil {
		o.Tracer = joinTracers(o.Tracer, jw)
	}
	repeat, capRun := o.Repeat, o.capacityRun()
	if capRun != nil {
		repeat = 1 // each rate runs o.Repeat times instead
	}
	res, err := app.measure(ctx, "bench", repeat, func(ctx context.Context, res *report.Result) error {
		if capRun != nil {
			return capRun.run(ctx, app, benchProbe(capRun, o, j, o.capPhase), res)
		}
		if o.ReadExisting {
			return bench.RunExisting(ctx, o.Options, res)
		}
		if j != nil {
			return bench.RunJob(ctx, o.Options, j, res)
		}
		return bench.Run(ctx, o.Options, res)
	})
	closeAccessLog(app, alog, res)
	closeJournal(app, jw, o.Journal, o.Path, func(w string) { res.Warnings = append(res.Warnings, w) })
	if err != nil && !res.Interrupted {
		var je *jobfile.Error
		if errors.As(err, &je) || errors.Is(err, bench.ErrBadInput) {
			return &UsageError{Err: err}
		}
		return app.writeFailed(res, &o.Output, err)
	}
	if j != nil && !app.Globals.Quiet {
		for i := range res.Phases {
			fmt.Fprintln(app.IO.Err, bench.SummaryLine(&res.Phases[i]))
		}
	}
	if o.summary != nil {
		o.summary(res)
	}
	return app.finishRun(res, &o.Output, &o.CI)
}

// resolveCapacity checks --slo and --curve against the workload.
func (o *BenchOptions) resolveCapacity(cmd *cobra.Command) error {
	if err := o.Cap.resolve(cmd, o.CI.Exprs); err != nil || !o.Cap.active() {
		return err
	}
	i, err := pacedPhase(o.Job.Job)
	o.capPhase = i
	return err
}

// capacityRun is the search or curve of --slo or --curve; nil without.
func (o *BenchOptions) capacityRun() *capacityRun {
	if !o.Cap.active() || o.Job.Job == nil {
		return nil
	}
	p := o.Job.Job.Phases[o.capPhase]
	return &capacityRun{flags: &o.Cap, phase: p.Name, repeat: o.Repeat, duration: p.Duration}
}

// announce says on stderr what is about to be benchmarked.
func (o *BenchOptions) announce(app *App, threads int) {
	if app.Globals.Quiet || notADir(o.Path) {
		return
	}
	j := o.Job.Job
	if o.ReadExisting {
		fmt.Fprintf(app.IO.Err, "Reading the files in %s with %s (read-only)\n", o.Path, units.Count(o.Threads, "thread"))
		return
	}
	if j == nil {
		fmt.Fprintf(app.IO.Err, "Benchmarking %s with %s\n", o.Path, units.Count(o.Threads, "thread"))
		return
	}
	what := "an ad-hoc workload"
	if j.File != "" {
		what = "workload " + j.File
	}
	fmt.Fprintf(app.IO.Err, "Benchmarking %s with %s (%s, %s)\n", o.Path, what, units.Count(len(j.Phases), "phase"), units.Count(threads, "thread"))
}

// notADir reports a path that cannot be run in (missing, or not a
// directory): the run fails with its own error, and a "Benchmarking PATH"
// line before it would only mislead.
func notADir(path string) bool {
	fi, err := os.Stat(path)
	return err != nil && errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir()
}

// publisher holds the live counters' publisher once the run has started.
type publisher struct{ p *live.Publisher }

// setHooks shows the run's progress: a bar per phase (of blocks or files
// in the default benchmark, of operations in a workload), or a line per
// interval in a phase with an interval; and publishes the live counters
// for fsbench stats while the run lasts.
func (o *BenchOptions) setHooks(app *App) *publisher {
	quiet := app.Globals.Quiet
	job := o.Job.Job != nil
	pub := &publisher{}
	var prog *Progress
	o.Hooks = runenv.Hooks{
		PhaseStart: func(e *workload.Runner, p *workload.FilePhase, total int64) {
			prog = nil
			if p.Interval > 0 {
				if !quiet {
					app.progressWrite(fmt.Sprintf("%-14s %8s %16s %15s  %s\n", p.Name, "time", "rate", "bandwidth", "latency"))
				}
				return
			}
			prog = app.phaseProgress(p, total, progressUnit(job, p), func() int64 { return e.Live.Ops.Load() }).from(e.Live, 1)
		},
		PhaseEnd: func(e *workload.Runner, p *workload.FilePhase) {
			pub.p.EndPhase(p) // exact totals, however short the phase
			if prog != nil {
				prog.Done()
			}
		},
		Interval: func(p *workload.FilePhase, s report.Sample) {
			if !quiet {
				app.progressWrite(bench.IntervalLine(p.Name, s) + "\n")
			}
		},
		Warn: func(msg string) { app.Warnf("%s", msg) },
		Wait: app.Wait,
		Started: func(e *workload.Runner, dir string) {
			var err error
			if pub.p, err = live.StartRunner("bench", o.Path, e); err != nil {
				app.Warnf("fsbench stats will not see this run: %v", err)
			}
		},
		Finished: func(*workload.Runner) { pub.p.Stop() },
		Created:  app.Left.Set,
		Removed:  app.Left.Clear,
	}
	return pub
}

// progressUnit is what a phase's progress bar counts.
func progressUnit(job bool, p *workload.FilePhase) string {
	switch {
	case job:
		return "ops"
	case p.PerFile || p.Kind == workload.Stat:
		return "files"
	}
	return "blocks"
}
