package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/compare"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/history"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/pkg/object"
)

// HistoryOptions are the flags of `fsbench history` and its commands.
type HistoryOptions struct {
	// Where is --history: a directory or an object store URL.
	Where string
	Label string
	Last  int
	// HTML is --html: a file to write the trend page to.
	HTML string
	// MinSegment is --min-segment: the fewest runs between change points.
	MinSegment int
	JSON       bool
	All        bool
	// FalseAlarm is --false-alarm, a fraction.
	FalseAlarm float64
	// MinChange is --threshold (a fraction): a figure beyond its bound is
	// outside only when also worse than its median by more.
	MinChange float64
	Args      []string

	falseAlarm, threshold, format string
}

// historyHelp is the help of --history, the same on every command.
const historyHelp = "the history that keeps results: a `DIR`ectory or a URL (s3://BUCKET/PREFIX, http(s)://HOST/BUCKET/PREFIX, nfs://...); see fsbench history"

func newHistoryCmd(app *App) *cobra.Command {
	return newHistoryCmdWith(app, nil)
}

// newHistoryCmdWith builds `fsbench history` and its commands; runF
// replaces each command's run in tests of flag parsing.
func newHistoryCmdWith(app *App, runF func(context.Context, string, *HistoryOptions) error) *cobra.Command {
	o := &HistoryOptions{}
	cmd := &cobra.Command{
		Use:   "history",
		Short: "Keep results over time; show each figure's trend and change points, judge a new result against them",
		Long: `A history keeps results of one job over time in a directory or under a
bucket prefix (--history DIR or URL; an object store's credentials come
from ACCESS_KEY and SECRET_KEY). Runs of the same command, parameters,
target and number of hosts form a series; a result whose parameters differ
starts a series of its own, and add says so.

  history add RESULT...   keep results (or --history on a benchmark command)
  history show            each series: figures, median, spread, change points, trend
  history check NEW       is NEW outside what its series' latest segment allows?

See docs/history.md.`,
		Args: exactArgs(0, "a command: add, show or check"),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	cmd.PersistentFlags().StringVar(&o.Where, "history", "", historyHelp)
	run := func(name string) func(*cobra.Command, []string) error {
		return func(c *cobra.Command, args []string) error {
			o.Args = args
			if err := o.resolve(); err != nil {
				return err
			}
			if runF != nil {
				return runF(c.Context(), name, o)
			}
			return runHistory(c.Context(), app, name, o)
		}
	}
	add := &cobra.Command{Use: "add RESULT.json...", Short: "Keep results in the history", Args: minArgs(1, "one or more result files"), RunE: run("add"),
		Example: "  fsbench history add --history ci-history run.json --label $GIT_COMMIT"}
	add.Flags().StringVar(&o.Label, "label", "", "name the runs by this `TEXT`, e.g. a commit (default: $GITHUB_SHA, $CI_COMMIT_SHA or $GIT_COMMIT)")
	show := &cobra.Command{Use: "show", Short: "Each series of the history: figures, median, spread, change points and trend", Args: exactArgs(0, "no arguments"), RunE: run("show"),
		Example: "  fsbench history show --history ci-history --last 30"}
	show.Flags().IntVar(&o.Last, "last", 0, "figures, spread and trend over the last `N` runs of each series (default 0: all)")
	show.Flags().IntVar(&o.MinSegment, "min-segment", 5, "the fewest `RUNS` between two change points")
	show.Flags().StringVar(&o.HTML, "html", "", "also write the trends as a self-contained HTML page to `FILE`: every run a point linked to its result, change points marked")
	markFiles(show.Flags(), fileOut, "html")
	check := &cobra.Command{Use: "check NEW.json", Short: "Judge a result against its series: exit 3 when it lies outside what the latest segment allows",
		Args: exactArgs(1, "one result file, NEW.json"), RunE: run("check"),
		Example: "  fsbench history check --history ci-history result.json --false-alarm 1%"}
	addCheckFlags(check, o)
	check.Flags().StringVar(&o.threshold, "threshold", "", "a figure beyond its bound is outside only when also worse than its median by more than this `PERCENT` (e.g. 5%): the smallest change that counts, for series steadier than that")
	for _, c := range []*cobra.Command{show, check} {
		c.Flags().StringVarP(&o.format, "output", "o", "table", "output `FORMAT`: table or json")
		c.Flags().BoolVar(&o.JSON, "json", false, "shorthand for --output json")
	}
	cmd.AddCommand(add, show, check)
	return cmd
}

// addCheckFlags declares the flags of a check against a history.
func addCheckFlags(c *cobra.Command, o *HistoryOptions) {
	c.Flags().StringVar(&o.falseAlarm, "false-alarm", "1%", "the chance of calling a run like the history's outside it, over all figures judged (`PERCENT`)")
	c.Flags().BoolVar(&o.All, "all-figures", false, "judge latency percentiles too, not only throughputs")
}

func (o *HistoryOptions) resolve() error {
	if o.Where == "" {
		return Usagef("--history: name the history's directory or URL")
	}
	if o.Last < 0 {
		return Usagef("--last must not be negative")
	}
	if o.HTML != "" {
		if err := checkDir("--html", o.HTML); err != nil {
			return err
		}
	}
	if o.MinSegment < 0 {
		return Usagef("--min-segment must not be negative")
	}
	if o.threshold != "" {
		v, err := compare.ParseThreshold(o.threshold)
		if err != nil {
			return Usagef("--threshold: %v", err)
		}
		o.MinChange = v / 100
	}
	if o.falseAlarm != "" {
		t := strings.TrimSuffix(strings.TrimSpace(o.falseAlarm), "%")
		var v float64
		if _, err := fmt.Sscan(t, &v); err != nil || v <= 0 || v >= 50 {
			return Usagef("--false-alarm %q: want a percentage above 0 and below 50, such as 1%%", o.falseAlarm)
		}
		o.FalseAlarm = v / 100
	}
	switch o.format {
	case "", "table":
	case "json":
		o.JSON = true
	default:
		return Usagef("--output %q: history writes table or json", o.format)
	}
	return nil
}

// openHistory opens the history named by where, as a usage error when it
// cannot be named or opened as given.
func openHistory(ctx context.Context, app *App, where string) (*history.Store, error) {
	st, err := history.Open(ctx, where, object.Config{Getenv: app.IO.Getenv})
	if errors.Is(err, history.ErrBadInput) {
		return nil, &UsageError{Err: err}
	}
	return st, err
}

func runHistory(ctx context.Context, app *App, name string, o *HistoryOptions) error {
	st, err := openHistory(ctx, app, o.Where)
	if err != nil {
		return err
	}
	defer st.Close()
	switch name {
	case "add":
		return historyAdd(ctx, app, st, o)
	case "show":
		all, err := st.Load(ctx)
		if err != nil {
			return err
		}
		so := history.ShowOptions{Last: o.Last, Options: history.Options{Change: history.ChangeOptions{MinSegment: o.MinSegment}}}
		if o.HTML != "" {
			if err := writeTrendPage(st, all, so, o.HTML); err != nil {
				return err
			}
		}
		if o.JSON {
			return writeJSONOut(app, history.Analyses(all, so.Change))
		}
		return history.Show(app.IO.Out, all, so)
	}
	return historyCheck(ctx, app, st, o, o.Args[0])
}

func historyAdd(ctx context.Context, app *App, st *history.Store, o *HistoryOptions) error {
	label := o.Label
	if label == "" {
		label = ciLabel(app)
	}
	var results []*report.Result
	for _, path := range o.Args {
		res, err := readResult(path)
		if err != nil {
			return err
		}
		results = append(results, res)
	}
	for i, res := range results {
		if err := addOne(ctx, app, st, res, o.Args[i], label); err != nil {
			return err
		}
	}
	return nil
}

// addOne keeps res in st and says where it went.
func addOne(ctx context.Context, app *App, st *history.Store, res *report.Result, name, label string) error {
	if res.Interrupted || res.Error != "" {
		fmt.Fprintf(app.IO.Err, "%s: not kept in %s: the run %s, its figures are partial\n", name, st.Name,
			map[bool]string{true: "was interrupted", false: "failed"}[res.Interrupted])
		return nil
	}
	a, err := st.Add(ctx, res, label)
	if err != nil {
		return err
	}
	switch {
	case a.Duplicate:
		fmt.Fprintf(app.IO.Err, "%s: already in series %s of %s\n", name, a.Entry.Series, st.Name)
	case a.New:
		fmt.Fprintf(app.IO.Err, "%s: starts series %s of %s: %s\n", name, a.Entry.Series, st.Name, a.Entry.Key)
	default:
		fmt.Fprintf(app.IO.Err, "%s: added to series %s of %s\n", name, a.Entry.Series, st.Name)
	}
	for id, d := range a.Differs {
		fmt.Fprintf(app.IO.Err, "  not series %s, whose parameters differ: %s\n", id, strings.Join(d, ", "))
	}
	return nil
}

// ciLabel is the commit a CI system names in its environment, or "".
func ciLabel(app *App) string {
	for _, v := range []string{"GITHUB_SHA", "CI_COMMIT_SHA", "GIT_COMMIT"} {
		if s := app.IO.Getenv(v); s != "" {
			return s
		}
	}
	return ""
}

// historyCheck judges the result in path against st: exit 3 when it is
// outside its series.
func historyCheck(ctx context.Context, app *App, st *history.Store, o *HistoryOptions, path string) error {
	res, err := readResult(path)
	if err != nil {
		return err
	}
	all, err := st.Load(ctx)
	if err != nil {
		return err
	}
	c := history.CheckResult(all, res, history.Options{FalseAlarm: o.FalseAlarm, All: o.All, MinChange: o.MinChange})
	if o.JSON {
		err = writeJSONOut(app, c)
	} else {
		err = history.WriteCheck(app.IO.Out, c)
	}
	if err != nil || c.Outside == 0 {
		return err
	}
	return &expectationError{msg: "outside its history: " + c.Verdict()}
}

func writeJSONOut(app *App, v any) error {
	enc := json.NewEncoder(app.IO.Out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// keepInHistory adds res to the history at where, after a run.
func (a *App) keepInHistory(res *report.Result, where string) error {
	ctx := context.Background()
	st, err := openHistory(ctx, a, where)
	if err != nil {
		return fmt.Errorf("--history: %w", err)
	}
	defer st.Close()
	if err := addOne(ctx, a, st, res, "the result", ciLabel(a)); err != nil {
		return fmt.Errorf("--history: %w", err)
	}
	return nil
}

// writeTrendPage writes the HTML trend page of all to path; in a history
// kept in a directory, each run links to its result there.
func writeTrendPage(st *history.Store, all []*history.Series, so history.ShowOptions, path string) error {
	var b bytes.Buffer
	if err := history.WriteHTML(&b, all, trendOptions(st, so, path)); err != nil {
		return fmt.Errorf("--html %s: %w", path, err)
	}
	return writeFileAtomic(path, b.Bytes())
}

// trendOptions are the options of trend charts on a page written to path
// ("-": stdout, read from here): in a history kept in a directory, each
// run links to its result there.
func trendOptions(st *history.Store, so history.ShowOptions, path string) history.HTMLOptions {
	ho := history.HTMLOptions{ShowOptions: so}
	if st.Dir != "" {
		if path == "-" {
			path = "report.html"
		}
		base, _ := filepath.Abs(filepath.Dir(path))
		dir, _ := filepath.Abs(st.Dir)
		ho.ResultLink = func(key string) string {
			rel, err := filepath.Rel(base, filepath.Join(dir, filepath.FromSlash(key)))
			if err != nil {
				return ""
			}
			return filepath.ToSlash(rel)
		}
	}
	return ho
}

// reportTrend is the trend section of a report written to path: the
// series of results in the history at where.
func reportTrend(ctx context.Context, app *App, where, path string, results []*report.Result) (template.HTML, error) {
	st, err := openHistory(ctx, app, where)
	if err != nil {
		return "", fmt.Errorf("--history: %w", err)
	}
	defer st.Close()
	all, err := st.Load(ctx)
	if err != nil {
		return "", fmt.Errorf("--history: %w", err)
	}
	var mine []*history.Series
	for _, r := range results {
		if s := history.Find(all, history.KeyOf(r).ID()); s != nil && !slices.Contains(mine, s) {
			mine = append(mine, s)
		}
	}
	if len(mine) == 0 {
		return "", fmt.Errorf("--history %s holds no series of these results: keep them with --history or fsbench history add", st.Name)
	}
	var b bytes.Buffer
	so := history.ShowOptions{Options: history.Options{Change: history.ChangeOptions{MinSegment: 5}}}
	if err := history.WriteTrend(&b, mine, trendOptions(st, so, path)); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil // #nosec G203 -- made by html/template
}

// historyExpectations evaluates the NAME.vs_history expectations of o
// against the history of --history, before res joins it.
func (a *App) historyExpectations(res *report.Result, o *CIOptions) ([]report.Expectation, error) {
	var exprs []expect.Expr
	for _, e := range o.Exprs {
		if e.Stat == expect.VsHistory {
			exprs = append(exprs, e)
		}
	}
	if len(exprs) == 0 {
		return nil, nil
	}
	ctx := context.Background()
	st, err := openHistory(ctx, a, o.history)
	if err != nil {
		return nil, fmt.Errorf("--history: %w", err)
	}
	defer st.Close()
	all, err := st.Load(ctx)
	if err != nil {
		return nil, fmt.Errorf("--history: %w", err)
	}
	var out []report.Expectation
	for _, e := range exprs {
		out = append(out, vsHistory(all, res, e))
	}
	return out, nil
}

// vsHistory is expectation e (NAME.vs_history) judged against all.
func vsHistory(all []*history.Series, res *report.Result, e expect.Expr) report.Expectation {
	x := report.Expectation{Expr: e.Text, Metric: e.Metric, Op: string(expect.EQ), Want: 1, Unit: "within history"}
	j, ok := history.JudgeFigure(all, res, e.Name, history.Options{})
	switch {
	case !ok:
		x.Verdict, x.Reason = report.VerdictFail, e.Name+" was not measured in this run"
	case j.Needs > 0:
		x.Pass, x.Verdict = true, report.VerdictTooShort
		x.Reason = fmt.Sprintf("its series has %d runs since its last change point; %d more are needed", j.Runs, j.Needs)
	case j.Outside:
		x.Verdict = report.VerdictFail
		x.Reason = fmt.Sprintf("%s is beyond the bound %s of the %d runs since the last change point (median %s, false-alarm rate %g%%)",
			history.FormatValue(j.New, j.Unit), history.FormatValue(j.Bound, j.Unit), j.Runs, history.FormatValue(j.Median, j.Unit), history.FalseAlarm*100)
	default:
		x.Pass, x.Verdict, x.Measured = true, report.VerdictPass, 1
	}
	return x
}
