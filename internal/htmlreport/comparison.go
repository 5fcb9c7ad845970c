package htmlreport

import (
	"fmt"
	"math"

	"github.com/fsbench/fsbench/internal/compare"
)

// item finds the compared figure kind of phase in the comparison of the
// first result with result j; nil when there is none.
func (in *input) item(j int, phase, kind string) *compare.Item {
	c := in.cmps[j]
	if c == nil {
		return nil
	}
	for i := range c.Items {
		if it := &c.Items[i]; it.Phase == phase && it.Kind == kind {
			return it
		}
	}
	return nil
}

// changeCell shows the change of a figure of result j against the first
// result, and whether it is beyond noise.
func (in *input) changeCell(j int, phase, kind string) cell {
	if in.cmps[j] == nil {
		return cell{Text: "not compared", Num: true}
	}
	it := in.item(j, phase, kind)
	if it == nil {
		return cell{Text: "-", Num: true}
	}
	label, class := in.judge(*it)
	return cell{Text: compare.FormatChange(*it) + " " + label, Class: class, Num: true}
}

// judge names an item's status for the page: compare marks regressions
// (worse beyond the threshold); an improvement beyond it is marked too.
func (in *input) judge(it compare.Item) (label, class string) {
	switch it.Status {
	case compare.Regression:
		return "regression", "bad"
	case compare.Worse:
		return "worse, within the threshold", "muted"
	case compare.Better:
		if it.ChangePct == nil || math.Abs(*it.ChangePct) > in.opts.Threshold {
			return "improvement", "good"
		}
		return "better, within the threshold", "muted"
	case compare.TooFew:
		return "too few samples", "muted"
	case compare.Missing:
		return "only in " + in.names[0], "muted"
	case compare.Added:
		return "not in " + in.names[0], "muted"
	}
	if it.Old != nil && it.New != nil && *it.Old != *it.New {
		return "~ (not told from noise)", "muted"
	}
	return "same", "muted"
}

func (in *input) comparisonSection() (section, error) {
	s := section{ID: "comparison", Title: "Comparison",
		Intro: fmt.Sprintf("What fsbench compare reports, with a threshold of %s%%: a throughput that dropped, or a latency that grew, by more is a regression; errors that grew at all are one too.",
			fmtPct(in.opts.Threshold))}
	for j := 1; j < len(in.results); j++ {
		c := in.cmps[j]
		if c == nil {
			continue
		}
		b := block{Title: in.names[0] + " → " + in.names[j], Notes: c.Warnings}
		verdict := fmt.Sprintf("No regression beyond %s%%.", fmtPct(in.opts.Threshold))
		if c.Regressions > 0 {
			verdict = fmt.Sprintf("%d regressions beyond %s%%.", c.Regressions, fmtPct(in.opts.Threshold))
			if c.Regressions == 1 {
				verdict = fmt.Sprintf("1 regression beyond %s%%.", fmtPct(in.opts.Threshold))
			}
		}
		b.Notes = append([]string{verdict}, b.Notes...)
		t := table{Head: []string{"Item", in.names[0], in.names[j], "Change", "Result"}, Long: len(c.Items) > 24}
		for _, it := range c.Items {
			label, class := in.judge(it)
			t.Rows = append(t.Rows, []cell{
				{Text: it.Metric},
				numCell(optValue(it.Old, it.Unit), it.Old == nil),
				numCell(optValue(it.New, it.Unit), it.New == nil),
				{Text: compare.FormatChange(it), Num: true, Class: class},
				{Text: label, Class: class},
			})
		}
		b.Tables = append(b.Tables, t)
		s.Blocks = append(s.Blocks, b)
	}
	return s, nil
}

func optValue(v *float64, unit string) string {
	if v == nil {
		return ""
	}
	return compare.FormatValue(*v, unit)
}
