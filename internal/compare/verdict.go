package compare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// RegressionList names the regressions, e.g. "write-big -23.1%".
func (r *Report) RegressionList() []string {
	var out []string
	for _, it := range r.Items {
		if it.Status == Regression {
			out = append(out, it.Metric+" "+FormatChange(it))
		}
	}
	return out
}

// Expectations turns the comparison into expectation outcomes for a run
// with --baseline: one failed expectation per regression, or one passed
// summary when there is none. Without a threshold it returns nil.
func (r *Report) Expectations() []report.Expectation {
	if r.ThresholdPct == nil {
		return nil
	}
	t := *r.ThresholdPct
	base := "baseline"
	if r.Old.File != "" {
		base += " " + r.Old.File
	}
	var out []report.Expectation
	for _, it := range r.Items {
		if it.Status != Regression {
			continue
		}
		x := report.Expectation{
			Expr:   fmt.Sprintf("%s within %s%% of baseline", it.Metric, strconv.FormatFloat(t, 'f', -1, 64)),
			Metric: it.Metric, Unit: it.Unit, Measured: *it.New,
		}
		switch {
		case it.Kind == "errors":
			x.Op, x.Want = "<=", *it.Old
		case it.Better == "higher":
			x.Op, x.Want = ">=", *it.Old*(1-t/100)
		default:
			x.Op, x.Want = "<=", *it.Old*(1+t/100)
		}
		if it.Unit == "us" {
			x.Unit, x.Want, x.Measured = "ms", x.Want/1e3, x.Measured/1e3
		}
		x.Want, x.Measured = sig(x.Want), sig(x.Measured)
		x.Reason = fmt.Sprintf("%s vs baseline %s", FormatChange(it), FormatValue(*it.Old, it.Unit))
		out = append(out, x)
	}
	if len(out) == 0 {
		out = append(out, report.Expectation{
			Expr:   fmt.Sprintf("no regression beyond %s%% vs %s", strconv.FormatFloat(t, 'f', -1, 64), base),
			Metric: "baseline", Op: "==", Want: 0, Unit: "regressions", Measured: 0, Pass: true,
		})
	}
	return out
}

func sig(v float64) float64 {
	out, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	if err != nil {
		return v
	}
	return out
}

// verdict is the comparison in one sentence: what was called, and on what
// evidence.
func (r *Report) verdict() string {
	n := map[string]int{}
	for _, it := range r.Items {
		n[it.Status]++
	}
	var s string
	switch {
	case r.ThresholdPct != nil && r.Regressions > 0:
		s = fmt.Sprintf("%s beyond %s%%: %s.", units.Count(r.Regressions, "regression"), fmtPct(*r.ThresholdPct),
			strings.Join(r.RegressionList(), ", "))
	case r.ThresholdPct != nil:
		s = fmt.Sprintf("No regression beyond %s%%.", fmtPct(*r.ThresholdPct))
	case n[Better]+n[Worse] == 0:
		s = "No change told from noise."
	default:
		s = fmt.Sprintf("%d better, %d worse.", n[Better], n[Worse]+n[Regression])
	}
	if r.ThresholdPct != nil && n[Better]+n[Worse] > 0 {
		s += fmt.Sprintf(" Called: %d better, %d worse (not regressions).", n[Better], n[Worse])
	}
	if r.OldRuns < 2 || r.NewRuns < 2 {
		return s + " One run a side: no change can be told from noise, and only a change beyond --threshold is called;" +
			" run both sides with --repeat 5 to test changes."
	}
	s += fmt.Sprintf(" %d against %d runs; a change is called when significant at %g%% (Mann-Whitney U) after adjusting for the %s tested"+
		" (Benjamini-Hochberg): of the changes called, at most %g%% are expected to be noise, and when nothing changed, the chance that any is called is at most %g%%.",
		r.OldRuns, r.NewRuns, r.Alpha*100, units.Count(r.Tested, "figure"), r.Alpha*100, r.Alpha*100)
	if r.ThresholdPct != nil {
		s += fmt.Sprintf(" A worse change is a regression when its %g%% interval lies wholly beyond %s%%.", 100-r.Alpha*100, fmtPct(*r.ThresholdPct))
	}
	return s
}

func fmtPct(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
