package cli

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/bench"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/objbench"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// ObjbenchOptions are the flags of `fsbench objbench`.
type ObjbenchOptions struct {
	objbench.Options
	// RunFlags' Cluster runs the performance items on many hosts.
	RunFlags

	store                                     storeFlags
	data                                      dataFlags
	blockSize, bigObjectSize, smallObjectSize string
	duration, warmup, interval                string
	workload                                  objWorkloadFlags
	more                                      objMoreFlags
	shards                                    int // juicefs's --shards: refused above 1
	// Cap holds --slo and --curve (with --workload).
	Cap CapacityFlags
	// JournalPath is --journal: the verification journal of the
	// workload's puts and deletes.
	JournalPath string
	// journalConfine, on an agent, must accept the journal's directory.
	journalConfine func(string) error
}

func newObjbenchCmd(app *App) *cobra.Command {
	return newObjbenchCmdWith(app, nil)
}

// newObjbenchCmdWith builds the command; runF replaces the run in tests of
// flag parsing.
func newObjbenchCmdWith(app *App, runF func(context.Context, *ObjbenchOptions) error) *cobra.Command {
	o := &ObjbenchOptions{Options: objbench.Defaults()}
	cmd := &cobra.Command{
		Use:   "objbench [--storage TYPE] URL",
		Short: "Check and benchmark an object store: S3, COS, MinIO, NFS servers, directories",
		Long: `Check that an object store behaves as a storage backend must, then measure it,
as "juicefs objbench" does.

The functional checks (put, get, ranges, head, delete, list, special keys, a
256 MiB object, empty objects, multipart upload, and on file systems owner,
permission and mtime changes) are graded pass, failed, warning (a known
difference between providers) or not support. The performance items follow:
upload and download of --big-object-size in --block-size objects, put and get
of --small-objects small objects, list, head, delete, and on file systems
chmod, chown and chtimes; every download is checked byte for byte.

Every key lives under a new prefix (fsbench-objbench-HOST-TIME-RANDOM/) that is
removed at the end; objects already in the bucket are never read-modified,
overwritten or deleted. A bucket that does not exist is created.

With --list-existing, objbench instead lists the objects already under
--prefix and downloads each one (get-existing; sizes from the listing), as
warp's --list-existing does: no bucket is created, nothing is put or
deleted, and the functional checks do not run.

Storage types and URLs:
` + storageHelp() + `
Credentials, first found wins: --access-key/--secret-key/--session-token
(or --secret-key-file/--session-token-file); user:password in the URL;
ACCESS_KEY, SECRET_KEY, SESSION_TOKEN; the
provider's variables (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY/AWS_SESSION_TOKEN,
MINIO_ACCESS_KEY/MINIO_SECRET_KEY or MINIO_ROOT_USER/MINIO_ROOT_PASSWORD,
COS_SECRETID/COS_SECRETKEY); for s3, the AWS shared configuration and default
credential chain. Secrets never appear in output, errors or result files;
but a secret given in a flag or in the URL is visible to every user of the
host in ps: prefer the variables or the -file flags.`,
		Example: objbenchExample,
		Args:    curveArgs(exactArgs(1, "one URL, the store to check (a directory for --storage file)")),
		RunE: hostsCommand[*ObjbenchOptions]{opts: o, flags: &o.RunFlags, runF: runF, cluster: objbenchCluster, run: runObjbench,
			resolve: func(cmd *cobra.Command, args []string) error {
				o.URL = args[0]
				return o.resolveAll(app, cmd)
			}}.runE(app),
	}
	o.store.add(cmd, &o.Storage, &o.Object)
	addDataFlags(cmd, &o.data)
	f := cmd.Flags()
	f.StringVar(&o.blockSize, "block-size", "4M", "size of each object of the big object; a bare number is KiB, as in juicefs objbench (4096 is 4 MiB; or 4M), where bench's is MiB")
	f.StringVar(&o.bigObjectSize, "big-object-size", "1G", "size of the big object, uploaded and downloaded in --block-size objects; a bare number is MiB, as in juicefs objbench")
	f.StringVar(&o.smallObjectSize, "small-object-size", "128K", "size of each small object; a bare number is KiB, as in juicefs objbench (128 is 128 KiB)")
	f.IntVar(&o.SmallObjects, "small-objects", o.SmallObjects, "number of small objects, at least 1 as in juicefs objbench (bench's --small-file-count 0 turns its phases off)")
	f.IntVarP(&o.Threads, "threads", "p", o.Threads, "parallel workers on each host: here concurrent threads")
	f.StringVar(&o.Object.StorageClass, "storage-class", "", "storage class of the objects written, e.g. STANDARD_IA")
	f.StringVar(&o.Object.StorageClass, "sc", "", "juicefs objbench's short name of --storage-class")
	_ = f.MarkHidden("sc")
	f.IntVar(&o.shards, "shards", 0, "juicefs objbench's N buckets by hash of key: not done here")
	_ = f.MarkHidden("shards")
	f.BoolVar(&o.SkipFunctional, "skip-functional-tests", false, "skip the functional checks (the bucket is still created if missing)")
	f.BoolVar(&o.Keep, "keep", false, "keep the benchmark's objects instead of deleting them")
	f.StringVar(&o.duration, "duration", "", "run each performance item for `DURATION`, repeating its objects (uploads make new ones), e.g. 30s; delete still does each object once")
	f.StringVar(&o.warmup, "warmup", "", "run each item `DURATION` before measuring (with --duration)")
	f.Int64Var(&o.Ops, "ops", 0, "stop each item after `N` operations in all")
	f.StringVar(&o.interval, "interval", "", "print one line per `DURATION` of each item (ops/s, MiB/s, p50, p99) and record the series, e.g. 1s")
	f.Float64Var(&o.Rate, "rate", 0, "open loop: `OPS` operations per second across the threads, and across the hosts on a many-host run; latency counts from each operation's scheduled start")
	f.BoolVar(&o.ListExisting, "list-existing", false, "list the objects already in the store (under --prefix) and download each, writing nothing: no bucket, no put, no delete; the functional checks are off")
	f.StringVar(&o.ExistingPrefix, "prefix", "", "with --list-existing: only the objects whose keys begin with `PREFIX`")
	f.BoolVar(&o.Verify, "verify", true, "check every downloaded byte against what was uploaded: on by default here, unlike bench's and io500's (--verify=false to skip the check)")
	f.StringVar(&o.DropCaches, "drop-caches", runenv.DropAuto, "drop kernel caches before reading: with --storage file, before the items that get its objects (files the puts just cached): auto (all caches as root, else the objects' pages), always, never; SKIP_DROP_CACHES=true disables")
	f.StringVar(&o.JournalPath, "journal", "", objJournalUsage)
	markFiles(f, fileOut, "journal")
	markAgentPath(cmd, "journal") // with --hosts each agent writes its own, beneath its roots
	addObjWorkloadFlags(cmd, o)
	addObjMoreFlags(cmd, o)
	addRunFlags(cmd, &o.RunFlags, objbenchQuick)
	addCapacityFlags(cmd, &o.Cap)
	addJuicefsOnlyFlags(cmd)
	return cmd
}

// objbenchExample is the examples of objbench's help.
const objbenchExample = `  fsbench objbench /mnt/data
  ACCESS_KEY=AK SECRET_KEY=SK fsbench objbench --storage s3 https://mybucket.s3.us-east-2.amazonaws.com -p 8
  fsbench objbench --storage minio http://127.0.0.1:9000/bench --access-key minioadmin --secret-key minioadmin
  fsbench objbench --storage cos https://bench-1250000000.cos.ap-guangzhou.myqcloud.com --skip-functional-tests
  fsbench objbench --storage nfs 10.0.0.5:/exports/bench --big-object-size 256M --json > result.json
  fsbench objbench --storage minio http://127.0.0.1:9000/bench --workload mixed --obj-size-dist log2:4KiB-16MiB --duration 1m`

// objbenchQuick is the --quick preset of objbench.
var objbenchQuick = []Preset{{"big-object-size", "32M"}, {"block-size", "1M"}, {"small-objects", "1000"}, {"small-object-size", "4K"}}

// storageHelp lists the drivers and their URL forms.
func storageHelp() string {
	var b strings.Builder
	for _, d := range object.Drivers() {
		fmt.Fprintf(&b, "  %-6s %s\n", d.Name, d.Description)
		for _, u := range d.URLForms {
			fmt.Fprintf(&b, "           %s\n", u)
		}
	}
	return b.String()
}

func (o *ObjbenchOptions) resolve(app *App, cmd *cobra.Command) error {
	var err error
	if o.Data, err = o.data.resolve(cmd); err != nil {
		return err
	}
	if err := parseSizes(
		sizeArg{"block-size", o.blockSize, &o.BlockSize, bareUnit("objbench", "block-size")},
		sizeArg{"big-object-size", o.bigObjectSize, &o.BigObjectSize, bareUnit("objbench", "big-object-size")},
		sizeArg{"small-object-size", o.smallObjectSize, &o.SmallObjectSize, bareUnit("objbench", "small-object-size")},
	); err != nil {
		return err
	}
	for _, a := range []struct {
		name, v string
		d       *time.Duration
	}{{"duration", o.duration, &o.Duration}, {"warmup", o.warmup, &o.Warmup}, {"interval", o.interval, &o.Interval}} {
		if a.v == "" {
			continue
		}
		v, err := units.ParseDuration(a.v)
		if err != nil || v <= 0 {
			return Usagef("--%s %q: want a positive duration such as 10s", a.name, a.v)
		}
		*a.d = v
	}
	if err := o.store.resolve(app, cmd, o.URL); err != nil {
		return err
	}
	if err := o.resolveDrop(app, cmd); err != nil {
		return err
	}
	if err := o.resolveWorkload(cmd); err != nil {
		return err
	}
	if err := o.resolveMore(cmd); err != nil {
		return err
	}
	if err := o.Options.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	if o.SkipFunctional {
		for _, e := range o.CI.Exprs {
			if e.Name == expect.Functional {
				return Usagef("--expect %q: the functional checks are skipped (--skip-functional-tests)", e.Text)
			}
		}
	}
	if err := o.resolveJournal(cmd); err != nil {
		return err
	}
	return o.Output.resolve()
}

// resolveAll resolves the flags: the hosts first; the expectations are checked against the
// rows the run will have, which with --workload depend on the other flags.
func (o *ObjbenchOptions) resolveAll(app *App, cmd *cobra.Command) error {
	if o.shards > 1 {
		return Usagef("--shards %d: juicefs objbench's spreading of objects over %d buckets is not done here; run objbench on each bucket", o.shards, o.shards)
	}
	if err := o.Cluster.resolve(cmd); err != nil {
		return err
	}
	if o.Cap.active() && (o.Workload == "" || o.ListExisting) {
		return Usagef("--slo and --curve set the rate of a workload: give one, e.g. --workload get --duration 10s")
	}
	if o.ListExisting || cmd.Flags().Changed("prefix") {
		return o.resolveExisting(app, cmd)
	}
	if o.Workload == "" {
		if err := o.CI.resolve(cmd, expect.Objbench); err != nil {
			return err
		}
		return o.resolve(app, cmd)
	}
	if err := o.resolve(app, cmd); err != nil {
		return err
	}
	cat := expect.Catalog{Command: "objbench"}
	for _, m := range objbench.WorkloadMetrics(o.Options) {
		cat.Metrics = append(cat.Metrics, expect.Metric{Name: m.Name, Bytes: m.Bytes})
	}
	if err := o.CI.resolve(cmd, cat); err != nil {
		return err
	}
	if err := o.Cap.resolve(cmd, o.CI.Exprs); err != nil || !o.Cap.active() {
		return err
	}
	if o.Duration == 0 && o.Ops == 0 {
		return &UsageError{Err: errNoPacedPhase}
	}
	return nil
}

// resolveDrop checks --drop-caches, which only a file store's gets use:
// the other stores' objects are in no cache of this host's kernel.
func (o *ObjbenchOptions) resolveDrop(app *App, cmd *cobra.Command) error {
	if !runenv.ValidDropCaches(o.DropCaches) {
		return Usagef("--drop-caches must be auto, always or never (got %q)", o.DropCaches)
	}
	if cmd.Flags().Changed("drop-caches") && o.Storage != "file" {
		return Usagef("--drop-caches applies to --storage file only: a %s store's objects are not in this host's page cache", o.Storage)
	}
	o.SkipDropCaches = skipDropCaches(app)
	return nil
}

// existingRefused are the flags of objbench that write objects or check
// objects of its own: none applies to --list-existing.
var objExistingRefused = []string{"big-object-size", "small-object-size", "small-objects", "block-size", "keep",
	"skip-functional-tests", "storage-class", "workload", "quick", "journal"}

// resolveExisting checks the command line of --list-existing.
func (o *ObjbenchOptions) resolveExisting(app *App, cmd *cobra.Command) error {
	f := cmd.Flags()
	if !o.ListExisting {
		return Usagef("--prefix chooses the objects of --list-existing; give --list-existing too")
	}
	for _, n := range objExistingRefused {
		if f.Changed(n) {
			return Usagef("--%s does not apply to --list-existing, which writes nothing", n)
		}
	}
	if f.Changed("verify") && o.Verify {
		return Usagef("--verify checks objects objbench uploaded; the objects --list-existing reads are not its own, so there is nothing to check them against")
	}
	if o.Cluster.active() {
		return Usagef("--list-existing runs on one host; it does not combine with --hosts")
	}
	o.Verify = false
	if err := o.CI.resolve(cmd, expect.Catalog{Command: "objbench", Metrics: []expect.Metric{{Name: objbench.GetExisting, Bytes: true}}}); err != nil {
		return err
	}
	return o.resolve(app, cmd)
}

func runObjbench(ctx context.Context, app *App, o *ObjbenchOptions) error {
	// The GC target that suits the run (objbench.Options.GCPercent);
	// GOGC or GOMEMLIMIT in the environment win.
	if app.IO.Getenv("GOGC") == "" && app.IO.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetGCPercent(debug.SetGCPercent(o.GCPercent()))
	}
	o.Hooks = objbenchHooks(app, o)
	runs, repeat := 0, o.Repeat
	capRun := o.capacityRun()
	if capRun != nil {
		repeat = 1 // each rate runs o.Repeat times instead
	}
	jw, err := o.openJournal()
	if err != nil {
		return err
	}
	res, err := app.measure(ctx, "objbench", repeat, func(ctx context.Context, res *report.Result) error {
		if capRun != nil {
			return capRun.run(ctx, app, objbenchProbe(capRun, o.Options), res)
		}
		opts := o.Options
		// The functional checks are about the store, not its speed: the
		// first run makes them, the others only measure.
		opts.SkipFunctional = opts.SkipFunctional || runs > 0
		runs++
		return objbench.Run(ctx, opts, res)
	})
	closeObjJournal(app, jw, o, res)
	if err != nil && !res.Interrupted {
		if errors.Is(err, objbench.ErrBadInput) {
			return &UsageError{Err: err}
		}
		return app.writeFailed(res, &o.Output, err)
	}
	// Functional checks that failed and unmet expectations give exit code
	// 3, after the result is written.
	ciErr := app.finishCI(res, &o.CI)
	if werr := app.writeResult(res, &o.Output); werr != nil {
		return werr
	}
	if res.Interrupted {
		return ErrInterrupted
	}
	// Operations that failed during the performance items (their first
	// messages are in the warnings): the storage failed, exit code 1.
	if n := res.TotalErrors(); n > 0 {
		return fmt.Errorf("%d operations failed during the performance tests%s", n, firstSample(res))
	}
	return ciErr
}

// objbenchHooks show the run's progress and intervals.
func objbenchHooks(app *App, o *ObjbenchOptions) objbench.Hooks {
	var prog *Progress
	// header is the item whose interval lines are still to be headed: the
	// header comes with its first line, so that an item without intervals
	// (a workload's untimed prepare) leaves no header with nothing under it.
	var header string
	return objbench.Hooks{
		Info: func(msg string) { app.Infof("%s", msg) },
		Warn: func(msg string) { app.Warnf("%s", msg) },
		ItemStart: func(title, unit string, total int64, poll func() int64) {
			prog = nil
			if o.Interval > 0 {
				header = title
				return
			}
			if total < 0 && o.Duration > 0 && o.Ops == 0 {
				prog = app.StartTimedProgress(title, o.Warmup+o.Duration, unit, poll)
				return
			}
			prog = app.StartProgress(title, total, unit, poll)
		},
		ItemMeasured: func(_ string, done int64, d time.Duration) { prog.measured(done, d) },
		ItemEnd: func(string) {
			if prog != nil {
				prog.Done()
			}
		},
		Interval: func(title string, s report.Sample) {
			if app.Globals.Quiet {
				return
			}
			if header != "" {
				app.progressWrite(fmt.Sprintf("%-14s %8s %16s %15s  %s\n", header, "time", "rate", "bandwidth", "latency"))
				header = ""
			}
			app.progressWrite(bench.IntervalLine(title, s) + "\n")
		},
		Created: app.Left.Set,
		Removed: app.Left.Clear,
	}
}

// firstSample is ", e.g. " and the first error message a phase of res
// kept, or "".
func firstSample(res *report.Result) string {
	for _, p := range res.Phases {
		if len(p.ErrorSamples) > 0 {
			return ", e.g. " + p.ErrorSamples[0]
		}
	}
	return ""
}

// capacityRun is the search or curve of --slo or --curve; nil without.
func (o *ObjbenchOptions) capacityRun() *capacityRun {
	if !o.Cap.active() {
		return nil
	}
	return &capacityRun{flags: &o.Cap, phase: o.Workload, repeat: o.Repeat, duration: o.Duration}
}
