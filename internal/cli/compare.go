package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/compare"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
)

// CompareOptions are the flags of `fsbench compare`.
type CompareOptions struct {
	Old, New  string
	Threshold *float64
	Kinds     []string
	JSON      bool

	threshold, metrics, format string
	json                       bool
	// History is --history: judge NEW against this history instead of OLD.
	History HistoryOptions
}

func newCompareCmd(app *App) *cobra.Command {
	return newCompareCmdWith(app, nil)
}

// newCompareCmdWith builds the command; runF replaces the run in tests of
// flag parsing.
func newCompareCmdWith(app *App, runF func(context.Context, *CompareOptions) error) *cobra.Command {
	o := &CompareOptions{}
	cmd := &cobra.Command{
		Use:   "compare OLD NEW",
		Short: "Compare two results: what changed beyond the noise of the runs, and regressions beyond a threshold",
		Long: `Compare two JSON results of the same command (saved with --json or
--result-file): for each phase, the throughput (VALUE) and the latency
percentiles p50, p90, p99, p99.9 and max, old and new, and the change in
percent. Error counts are compared when either run had errors.

OLD and NEW are each a result file, or a directory of result files of one
job measured at different times: its results are gathered into one side,
each of their runs a run of that side. Measuring the two setups in turn
(OLD, NEW, OLD, NEW, each into its directory) lets a drift of the machine
reach both sides alike, where two blocks of --repeat back to back meet it
in one side only.

A change is called better or worse only when it can be told from noise:
with several runs a side (--repeat N when measuring; 4 or more), when a
Mann-Whitney U test over the runs is significant at 5% after adjusting for
the number of figures tested (Benjamini-Hochberg; the verdict says how
many). Otherwise it is "~".
With one run a side nothing tells a change from noise, and only a change
beyond --threshold is called. A latency percentile is judged only with ten
samples beyond it (p99 needs 1,000 operations); the maximum never is.

With --threshold P%, a worse change told from noise whose 95% interval
lies wholly beyond P percent (not only its medians: runs of one job drift
together), or with one run a side any change of more than P percent the
wrong way, or errors that grew beyond it, is a regression, and fsbench
exits with code 3. Without --threshold, the
comparison is only shown (exit 0). The verdict comes first; parameters that
differ (threads, sizes), a machine markedly busier during one side and a
change called in a phase that took under a second a run (a moment of the
storage rather than its rate) are warned about before the table. Phases
found in only one result are listed as
missing or new. Results of different commands cannot be compared: exit 2.
With --history DIR|URL and one result, NEW is judged against the runs of
its series in that history instead (as fsbench history check); there
--threshold P% is the smallest change that counts.
See docs/statistics.md.`,
		Example: `  fsbench bench /mnt/jfs -p 4 --quick --repeat 5 --result-file before.json
  fsbench bench /mnt/jfs -p 4 --quick --repeat 5 --result-file after.json
  fsbench compare before.json after.json --threshold 10%
  fsbench compare baseline.json result.json --threshold 15% --metrics throughput,p99 -o json
  mkdir old new
  for i in 1 2 3 4 5; do
    fsbench bench /mnt/old --quick --result-file old/$i.json
    fsbench bench /mnt/new --quick --result-file new/$i.json
  done
  fsbench compare old new --threshold 10%`,
		Args: compareArgs(&o.History.Where),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.History.Where != "" {
				return runCompareHistory(cmd.Context(), app, o, args[0])
			}
			o.Old, o.New = args[0], args[1]
			if err := o.resolve(); err != nil {
				return err
			}
			if runF != nil {
				return runF(cmd.Context(), o)
			}
			return runCompare(app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.threshold, "threshold", "", "mark changes surely beyond `PERCENT` (e.g. 10%) the wrong way as regressions (their 95% interval wholly beyond it), and exit 3 if there are any")
	f.StringVar(&o.metrics, "metrics", "", "compare only these figures: a `LIST` of throughput,p50,p90,p99,p999,max (default all)")
	f.StringVarP(&o.format, "output", "o", "table", "output `FORMAT`: table or json")
	f.BoolVar(&o.json, "json", false, "shorthand for --output json")
	f.StringVar(&o.History.Where, "history", "", historyHelp)
	addCheckFlags(cmd, &o.History)
	return cmd
}

// compareArgs are OLD and NEW, or NEW alone with --history.
func compareArgs(history *string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if *history != "" {
			return exactArgs(1, "one result file, NEW.json, with --history")(cmd, args)
		}
		return exactArgs(2, "two results, OLD and NEW: result files or directories of them")(cmd, args)
	}
}

// runCompareHistory is compare --history: history check NEW.
func runCompareHistory(ctx context.Context, app *App, o *CompareOptions, path string) error {
	if o.metrics != "" {
		return Usagef("--history judges NEW's throughputs (or every figure, with --all-figures) against the history's spread: --metrics is for two results")
	}
	h := &o.History
	h.threshold = o.threshold
	h.format, h.JSON, h.Args = o.format, o.json, []string{path}
	if err := h.resolve(); err != nil {
		return err
	}
	return runHistory(ctx, app, "check", h)
}

func (o *CompareOptions) resolve() error {
	if o.threshold != "" {
		t, err := compare.ParseThreshold(o.threshold)
		if err != nil {
			return Usagef("--threshold: %v", err)
		}
		o.Threshold = &t
	}
	if o.metrics != "" {
		k, err := compare.ParseKinds(o.metrics)
		if err != nil {
			return Usagef("--metrics: %v", err)
		}
		o.Kinds = k
	}
	if o.json {
		if o.format != "table" && o.format != "json" {
			return Usagef("--json and --output %s contradict each other", o.format)
		}
		o.format = "json"
	}
	switch o.format {
	case "table":
	case "json":
		o.JSON = true
	default:
		return Usagef("--output %q: compare writes table or json", o.format)
	}
	return nil
}

func runCompare(app *App, o *CompareOptions) error {
	old, err := readSide(o.Old)
	if err != nil {
		return err
	}
	new, err := readSide(o.New)
	if err != nil {
		return err
	}
	rep, err := compare.Compare(old, new, o.Old, o.New, compare.Options{Threshold: o.Threshold, Kinds: o.Kinds})
	if err != nil {
		return &UsageError{Err: err}
	}
	if o.JSON {
		err = compare.WriteJSON(app.IO.Out, rep)
	} else {
		err = compare.WriteTable(app.IO.Out, rep, app.Color(app.IO.OutTTY))
	}
	if err != nil {
		return err
	}
	return regressionError(rep)
}

// regressionError is the error of a comparison with regressions: exit 3.
func regressionError(rep *compare.Report) error {
	if rep.Regressions == 0 {
		return nil
	}
	noun := "regressions"
	if rep.Regressions == 1 {
		noun = "regression"
	}
	return &expectationError{msg: fmt.Sprintf("%d %s beyond %g%%: %s", rep.Regressions, noun, *rep.ThresholdPct, strings.Join(rep.RegressionList(), ", "))}
}

// readSide reads one side of a comparison: a result file, or a directory
// whose result files (*.json) are runs of one job, gathered into one
// result (compare.Gather).
func readSide(path string) (*report.Result, error) {
	st, err := os.Stat(path)
	if err != nil || !st.IsDir() {
		return readResult(path)
	}
	entries, err := os.ReadDir(path) // not a glob: the path may hold [ or *
	if err != nil {
		return nil, Usagef("result directory %s: %v", path, sysio.PathCause(err))
	}
	var parts []*report.Result
	var names []string
	for _, e := range entries {
		if e.IsDir() || !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		res, err := readResult(filepath.Join(path, e.Name()))
		if err != nil {
			return nil, err
		}
		parts, names = append(parts, res), append(names, e.Name())
	}
	if len(parts) == 0 {
		return nil, Usagef("result directory %s: no result files (*.json) in it", path)
	}
	res, err := compare.Gather(parts, names)
	if err != nil {
		return nil, Usagef("result directory %s: %v", path, err)
	}
	return res, nil
}

// readResult reads a JSON result file. A file that is missing or is not an
// fsbench result is bad input: a usage error.
func readResult(path string) (*report.Result, error) {
	f, err := os.Open(path)
	if err != nil {
		err = sysio.PathCause(err)
		return nil, Usagef("result file %s: %v", path, err)
	}
	defer f.Close()
	res, err := report.ReadJSON(f)
	if err != nil {
		return nil, Usagef("result file %s: %v", path, err)
	}
	return res, nil
}
