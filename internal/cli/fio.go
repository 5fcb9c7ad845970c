package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsbench/fsbench/internal/bench"
	"github.com/fsbench/fsbench/internal/fiojob"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/units"
)

// fioLong is the help of fio.
const fioLong = `Run fio's command line or fio job files as they are, on fsbench's engine:
the same phases, result, table and checks as "fsbench bench --job".

fio's options are read with fio's defaults and units (bs=4k unless given,
sizes in bytes with k, m, g as powers of 1024, times in seconds), as
--key=value or --key value; each --name= starts a job, as in fio. Job files
take [global] and job sections, include, ; and # comments and $VAR or
${VAR} from the environment. Jobs separated by stonewall run one after
another; jobs that fio would run at the same time run as one phase when they
are the same job apart from their names (their numjobs add up), and are
refused otherwise.

Every option is honoured or refused by name before anything runs; none is
ignored. sync and psync run on fsbench's sync engine, io_uring on its
io_uring engine; libaio and posixaio run on one of the two, as a note on
stderr says. The run happens in a directory of its own under fio's
directory= (or the directory of an absolute filename=), else the current
directory, removed at the end.

fsbench's own flags (--json, --result-file, --expect, -v, ...) mix with fio's
options; -v adds fio's summary lines (IOPS, BW, clat percentiles) on stderr.
See docs/fio.md for the options taken, mapped and refused.`

// fioFlags are fsbench's own flags of the fio command; every other
// --option is fio's.
type fioFlags struct {
	bench *BenchOptions
	help  bool
}

func newFioCmd(app *App) *cobra.Command {
	o := &BenchOptions{Options: bench.Defaults()}
	ff := &fioFlags{bench: o}
	cmd := &cobra.Command{
		Use:   "fio [--OPTION=VALUE ...] [JOBFILE ...]",
		Short: "Run fio's command lines and job files on fsbench's engine",
		Long:  fioLong,
		Example: `  fsbench fio --name=jfs-test --directory=/mnt/jfs --ioengine=libaio --rw=randread --bs=1m --size=1g --numjobs=4 --direct=1 --group_reporting
  fsbench fio job.fio --json > result.json
  SIZE=64m fsbench fio job.fio -v`,
		DisableFlagParsing: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return ff.run(cmd, app, args)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&ff.help, "help", "h", false, "help for fio")
	f.BoolVar(&o.Output.json, "json", false, "write the result as JSON (as --output-format=json)")
	f.StringVar(&o.Output.ResultFile, "result-file", "", "also save the full result as JSON to this file")
	f.StringVar(&o.Output.HTML, "html", "", "also write the result as a self-contained HTML report to `FILE` (see fsbench report)")
	markFiles(f, fileOut, "result-file", "html")
	f.StringVar(&o.Output.History, "history", "", historyHelp)
	addCIFlags(cmd, &o.CI, nil)
	f.Lookup("quick").Usage = "a smaller run of the same phases, for a smoke test: files of at most 64 MiB, phases of at most 10s, at most 100,000 operations"
	f.BoolVar(&o.Keep, "keep", false, "keep the run's files instead of removing them")
	f.StringVar(&o.DropCaches, "drop-caches", runenv.DropAuto, "drop kernel caches before read phases: auto (all caches as root, else our files only), always, never; SKIP_DROP_CACHES=true disables")
	f.StringVar(&o.Job.interval, "interval", "", "print one line per `DURATION` (ops/s, MiB/s, p50, p99) and record the series, e.g. 2s")
	return cmd
}

// split parts the command line into fsbench's flags and fio's input.
func (ff *fioFlags) split(fs *pflag.FlagSet, args []string) (own, fio []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, _, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		var fl *pflag.Flag
		switch {
		case strings.HasPrefix(a, "--"):
			fl = fs.Lookup(name)
		case strings.HasPrefix(a, "-") && len(a) == 2:
			fl = fs.ShorthandLookup(name)
		}
		if fl == nil {
			fio = append(fio, a)
			continue
		}
		own = append(own, a)
		if !hasVal && fl.NoOptDefVal == "" && i+1 < len(args) {
			i++
			own = append(own, args[i])
		}
	}
	return own, fio
}

func (ff *fioFlags) run(cmd *cobra.Command, app *App, args []string) error {
	fs := pflag.NewFlagSet("fio", pflag.ContinueOnError)
	fs.SetOutput(devNull{})
	fs.AddFlagSet(cmd.LocalNonPersistentFlags())
	fs.AddFlagSet(cmd.InheritedFlags())
	own, fioArgs := ff.split(fs, args)
	if err := fs.Parse(own); err != nil {
		return &UsageError{Err: err}
	}
	if ff.help {
		return cmd.Help()
	}
	in, err := fiojob.ParseArgs(fioArgs, fiojob.OSEnv, fiojob.ReadJobFile)
	if err != nil {
		return &UsageError{Err: err}
	}
	res, err := fiojob.Convert(in, strings.Join(in.Files, " "))
	if err != nil {
		return &UsageError{Err: err}
	}
	o := ff.bench
	if in.OutputFormat == "json" {
		o.Output.json = true
	}
	o.Output.format = "table"
	o.Path = res.Dir
	if st, err := os.Stat(o.Path); err == nil && !st.IsDir() {
		return Usagef("%s is not a directory: fio's directory= names the directory to run in", o.Path)
	}
	if err := ff.interval(cmd); err != nil {
		return err
	}
	if err := o.checkJob(cmd, app, res.Job); err != nil {
		return err
	}
	if !app.Globals.Quiet {
		for _, n := range res.Notes {
			fmt.Fprintln(app.IO.Err, "Note: "+n)
		}
	}
	if app.Globals.Verbose && o.Output.Format != report.FormatTable { // the table writes them itself
		o.summary = func(r *report.Result) { fiojob.Summary(app.IO.Err, r, res.Groups) }
	}
	ctx, m, err := startMetrics(cmd.Context(), app, "")
	if err != nil {
		return err
	}
	defer m.Close()
	return runBench(ctx, app, o)
}

// interval reads --interval.
func (ff *fioFlags) interval(cmd *cobra.Command) error {
	o := ff.bench
	if !cmd.Flags().Changed("interval") {
		return nil
	}
	d, err := units.ParseDuration(o.Job.interval)
	if err != nil || d <= 0 {
		return Usagef("--interval %q: want a positive duration such as 2s", o.Job.interval)
	}
	o.Interval = d
	return nil
}

type devNull struct{}

func (devNull) Write(p []byte) (int, error) { return len(p), nil }
