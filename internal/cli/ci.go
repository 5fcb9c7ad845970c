package cli

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/compare"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/verdict"
)

// CIOptions are the CI smoke-mode flags every benchmark command shares:
// --expect, --expect-file, --baseline, --threshold, --baseline-metrics and
// --quick. A command declares them with addCIFlags, checks them with
// resolve before it runs, and calls finishCI on its result before writing
// it:
//
//	if err := o.CI.resolve(cmd, expect.Bench); err != nil { return err }
//	...
//	ciErr := app.finishCI(res, &o.CI)
//	if err := app.writeResult(res, &o.Output); err != nil { return err }
//	return ciErr
type CIOptions struct {
	Expect     []string
	ExpectFile []string
	Baseline   string
	Quick      bool
	// Strict makes a figure too short to judge fail (exit 3).
	Strict bool

	// Filled by resolve.
	Exprs     []expect.Expr
	Threshold *float64
	Kinds     []string
	base      *report.Result
	// history is the command's --history, for NAME.vs_history.
	history string

	preset             []Preset
	threshold, metrics string
}

// Preset is one flag value of --quick: it applies unless the flag was given.
type Preset struct{ Flag, Value string }

// addCIFlags declares the CI flags on cmd; quick is the command's --quick
// preset.
func addCIFlags(cmd *cobra.Command, o *CIOptions, quick []Preset) {
	o.preset = quick
	f := cmd.Flags()
	f.StringArrayVar(&o.Expect, "expect", nil, "fail (exit 3) unless `EXPR` (NAME OP VALUE) holds, e.g. 'write-big>=200MiB/s', 'stat.p99<5ms', 'read-big.from_storage>=95%', 'errors==0'; one the run is too short to judge warns; repeatable")
	f.StringArrayVar(&o.ExpectFile, "expect-file", nil, "read expectations from `FILE`, one per line, # starts a comment; repeatable")
	f.StringVar(&o.Baseline, "baseline", "", "compare with an earlier JSON result `FILE`; with --threshold, regressions fail (exit 3)")
	f.StringVar(&o.threshold, "threshold", "", "with --baseline: a throughput drop or latency rise beyond this `PERCENT` (e.g. 10%) is a regression")
	f.StringVar(&o.metrics, "baseline-metrics", "", "with --baseline: compare only these figures, a `LIST` of throughput,p50,p90,p99,p999,max (default all)")
	f.BoolVar(&o.Strict, "strict", false, "a figure the run is too short to judge (too few samples, steps or runs) fails (exit 3) instead of warning: for a CI job that must decide")
	markFiles(f, fileIn, "expect-file", "baseline")
	var parts []string
	for _, p := range quick {
		parts = append(parts, "--"+p.Flag+" "+p.Value)
	}
	f.BoolVar(&o.Quick, "quick", false, "a preset small enough for a smoke test: "+strings.Join(parts, " ")+" (flags given explicitly win)")
}

// resolve applies the --quick preset to the flags not given explicitly
// (call it before the command reads its own flags), then parses and checks
// the expectations against the command's catalog and reads the baseline.
// Every mistake is a usage error, found before anything runs.
func (o *CIOptions) resolve(cmd *cobra.Command, cat expect.Catalog) error {
	if o.Quick {
		f := cmd.Flags()
		for _, p := range o.preset {
			if f.Changed(p.Flag) {
				continue
			}
			if err := f.Set(p.Flag, p.Value); err != nil {
				return fmt.Errorf("--quick: set --%s: %w", p.Flag, err)
			}
		}
	}
	o.history = ""
	if f := cmd.Flags().Lookup("history"); f != nil {
		o.history = f.Value.String()
	}
	o.Exprs = o.Exprs[:0]
	for _, s := range o.Expect {
		e, err := expect.Parse(s)
		if err != nil {
			return Usagef("--expect: %v", err)
		}
		o.Exprs = append(o.Exprs, e)
	}
	for _, name := range o.ExpectFile {
		f, err := os.Open(name)
		if err != nil {
			err = sysio.PathCause(err)
			return Usagef("--expect-file %s: %v", name, err)
		}
		es, err := expect.ParseLines(f, name)
		f.Close()
		if err != nil {
			return Usagef("--expect-file %v", err)
		}
		if len(es) == 0 {
			return Usagef("--expect-file %s: no expectations in it", name)
		}
		o.Exprs = append(o.Exprs, es...)
	}
	for _, e := range o.Exprs {
		if err := cat.Check(e); err != nil {
			return Usagef("--expect: %v", err)
		}
		if e.Stat == expect.VsHistory && o.history == "" {
			return Usagef("--expect %s: judged against a history: give --history DIR or URL", e.Text)
		}
	}
	if o.threshold != "" {
		if o.Baseline == "" {
			return Usagef("--threshold needs --baseline (to compare two saved results, use fsbench compare)")
		}
		t, err := compare.ParseThreshold(o.threshold)
		if err != nil {
			return Usagef("--threshold: %v", err)
		}
		o.Threshold = &t
	}
	if o.metrics != "" {
		if o.Baseline == "" {
			return Usagef("--baseline-metrics needs --baseline")
		}
		k, err := compare.ParseKinds(o.metrics)
		if err != nil {
			return Usagef("--baseline-metrics: %v", err)
		}
		o.Kinds = k
	}
	if o.Baseline != "" {
		base, err := readResult(o.Baseline)
		if err != nil {
			return err
		}
		if base.Command != cat.Command {
			return Usagef("--baseline %s is a %q result, not %q", o.Baseline, base.Command, cat.Command)
		}
		o.base = base
	}
	return nil
}

// checkMeasured makes an expectation on a phase the run will not have a
// usage error: measured lists the phases the options will run, and why
// says which flag turned the others off.
func (o *CIOptions) checkMeasured(measured []string, why map[string]string) error {
	for _, e := range o.Exprs {
		if e.Name == expect.Errors || e.Name == expect.Functional || e.Name == expect.Capacity {
			continue
		}
		found := false
		for _, m := range measured {
			found = found || m == e.Name
		}
		if !found {
			return Usagef("--expect %q: %s is not measured in this run (%s)", e.Text, e.Name, why[e.Name])
		}
	}
	return nil
}

// finishRun ends a run that was measured: it evaluates the CI checks,
// writes the result, and returns ErrInterrupted for an interrupted run,
// else the checks' error (exit 3) or nil.
func (a *App) finishRun(res *report.Result, out *OutputOptions, ci *CIOptions) error {
	ciErr := a.finishCI(res, ci)
	if werr := a.writeResult(res, out); werr != nil {
		return werr
	}
	if res.Interrupted {
		return ErrInterrupted
	}
	return ciErr
}

// finishCI evaluates the expectations and the baseline against res and
// records them in res.Expectations. Call it before writing the result, and
// return its error after: an error wrapping ErrExpectation (exit 3) when an
// expectation or a functional check failed or the baseline comparison found
// regressions beyond --threshold; nil otherwise. An expectation the run
// was too short to judge is no failure: it is a warning that says what
// would make it judgeable; with --strict it fails.
func (a *App) finishCI(res *report.Result, o *CIOptions) error {
	res.Expectations = append(res.Expectations, expect.EvalAll(o.Exprs, res)...)
	hx, err := a.historyExpectations(res, o)
	if err != nil {
		return err
	}
	res.Expectations = append(res.Expectations, hx...)
	if o.base != nil {
		rep, err := compare.Compare(o.base, res, o.Baseline, "", compare.Options{Threshold: o.Threshold, Kinds: o.Kinds})
		if err != nil {
			return &UsageError{Err: err}
		}
		if !a.Globals.Quiet {
			fmt.Fprintln(a.IO.Err, "Baseline comparison:")
			if err := compare.WriteTable(a.IO.Err, rep, a.Color(a.IO.ErrTTY)); err != nil {
				return err
			}
		}
		res.Expectations = append(res.Expectations, rep.Expectations()...)
	}
	var failed []string
	for i := range res.Expectations {
		x := &res.Expectations[i]
		x.Verdict = x.Outcome()
		switch x.Verdict {
		case report.VerdictFail:
			failed = append(failed, x.Expr)
		case report.VerdictTooShort:
			if o.Strict {
				j := verdict.Judgement{Verdict: x.Verdict, Reason: x.Reason}.Strict()
				x.Verdict, x.Reason, x.Pass = j.Verdict, j.Reason, false
				failed = append(failed, x.Expr)
				continue
			}
			msg := fmt.Sprintf("%s: %s: %s", x.Expr, report.VerdictTooShort, x.Reason)
			a.Warnf("%s", msg)
			res.Warnings = append(res.Warnings, msg)
		}
	}
	checks := expect.FailedChecks(res)
	var msgs []string
	if len(failed) > 0 {
		msgs = append(msgs, fmt.Sprintf("%d of %d expectations failed: %s", len(failed), len(res.Expectations), strings.Join(failed, ", ")))
	}
	if len(checks) > 0 {
		noun := "checks"
		if len(checks) == 1 {
			noun = "check"
		}
		msgs = append(msgs, fmt.Sprintf("%d functional %s failed: %s", len(checks), noun, strings.Join(checks, ", ")))
	}
	if len(msgs) == 0 {
		return nil
	}
	return &expectationError{msg: strings.Join(msgs, "; ")}
}

// expectationError is a failed expectation, check or regression check with
// its own message; it wraps ErrExpectation (exit 3).
type expectationError struct{ msg string }

func (e *expectationError) Error() string { return e.msg }
func (e *expectationError) Unwrap() error { return ErrExpectation }
