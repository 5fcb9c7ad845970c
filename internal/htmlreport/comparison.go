package htmlreport

import (
	"fmt"
	"math"
	"strings"

	"github.com/fsbench/fsbench/internal/compare"
	"github.com/fsbench/fsbench/internal/units"
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
	return in.changeOf(*it)
}

// changeOf shows an item's change, its status and why it was not called.
func (in *input) changeOf(it compare.Item) cell {
	label, class := in.judge(it)
	return cell{Text: changeText(it) + " " + label, Sub: it.Note, Class: class, Num: true}
}

// noChange reports whether compare found no change that can be told from
// noise in a figure that did move: shown as "~", as benchstat does.
func noChange(it compare.Item) bool {
	return it.Status == compare.Same && it.Old != nil && it.New != nil && *it.Old != *it.New
}

// changeText is an item's change, "~" before it when the change cannot be
// told from noise.
func changeText(it compare.Item) string {
	if noChange(it) {
		return "~ " + compare.FormatChange(it)
	}
	return compare.FormatChange(it)
}

// judge names an item's status for the page and the class that colours
// it: a regression and an improvement beyond the threshold stand out; a
// significant change within the threshold is coloured text; a change that
// cannot be told from noise ("~") and a percentile with too few samples are
// grey, the latter in italics.
func (in *input) judge(it compare.Item) (label, class string) {
	switch it.Status {
	case compare.Regression:
		return "regression", "bad"
	case compare.Worse:
		if it.ChangePct != nil && math.Abs(*it.ChangePct) > in.opts.Threshold {
			return "worse, not surely beyond threshold", "worse"
		}
		return "worse, within threshold", "worse"
	case compare.Better:
		if it.ChangePct == nil || math.Abs(*it.ChangePct) > in.opts.Threshold {
			return "improvement", "good"
		}
		return "better, within threshold", "better"
	case compare.TooFew:
		return "too few samples", "toofew"
	case compare.Missing:
		return "only in " + in.names[0], "muted"
	case compare.Added:
		return "not in " + in.names[0], "muted"
	}
	if noChange(it) {
		return "no significant change", "nochange"
	}
	return "same", "muted"
}

// verdictView is the verdict of one comparison, said at the top of the
// page.
type verdictView struct {
	Text    string
	Class   string
	Details []string
}

// verdictNames is how many regressions a verdict names before "and N
// more": the rest are in the comparison's table.
const verdictNames = 6

// verdict sums up the comparison of the first result with result j: the
// regressions first, then what could not be judged.
func (in *input) verdict(j int) verdictView {
	c := in.cmps[j]
	thr := fmtPct(in.opts.Threshold)
	v := verdictView{Text: fmt.Sprintf("%s against %s: no regression beyond %s%%.", in.names[j], in.names[0], thr), Class: "good"}
	if c.Regressions > 0 {
		list := c.RegressionList()
		if len(list) > verdictNames {
			list = append(list[:verdictNames-1], fmt.Sprintf("and %d more", len(list)-verdictNames+1))
		}
		v.Text = fmt.Sprintf("%s against %s: %s beyond %s%%: %s.", in.names[j], in.names[0],
			units.Count(c.Regressions, "regression"), thr, strings.Join(list, ", "))
		v.Class = "bad"
	}
	var same, few, better int
	for _, it := range c.Items {
		switch {
		case noChange(it):
			same++
		case it.Status == compare.TooFew:
			few++
		case it.Status == compare.Better && it.ChangePct != nil && math.Abs(*it.ChangePct) > in.opts.Threshold:
			better++
		}
	}
	if better > 0 {
		v.Details = append(v.Details, fmt.Sprintf("%s beyond %s%%.", units.Count(better, "improvement"), thr))
	}
	if same > 0 {
		v.Details = append(v.Details, fmt.Sprintf("%s that cannot be told from noise (~).", units.Count(same, "change")))
	}
	if few > 0 {
		v.Details = append(v.Details, fmt.Sprintf("%s with too few samples to judge.", units.Count(few, "percentile")))
	}
	v.Details = append(v.Details, evidence(c, thr))
	// What makes the two runs unlike (parameters, missing phases) is read
	// with the verdict, not after it.
	for _, w := range c.Warnings {
		v.Details = append(v.Details, "Warning: "+w+".")
	}
	return v
}

// evidence says what a comparison could tell apart: with one run on a
// side, only changes beyond the threshold are called.
func evidence(c *compare.Report, thr string) string {
	if c.OldRuns < 2 || c.NewRuns < 2 {
		return fmt.Sprintf("One run a side: a change within %s%% cannot be told from noise; run both with --repeat 5 to test changes.", thr)
	}
	return fmt.Sprintf("%d against %d runs: a change is called when significant at %s%%.", c.OldRuns, c.NewRuns, fmtPct(c.Alpha*100))
}

func (in *input) comparisonSection() (section, error) {
	s := section{ID: "comparison", Title: "Comparison",
		Intro: fmt.Sprintf("What fsbench compare reports, with a threshold of %s%%: a throughput that dropped, or a latency that grew, by more is a regression; errors that grew at all are one too. “~” marks a change that cannot be told from the noise of the runs, and a latency percentile is judged only when the histograms hold enough samples for it.",
			fmtPct(in.opts.Threshold))}
	for j := 1; j < len(in.results); j++ {
		c := in.cmps[j]
		if c == nil {
			continue
		}
		// compare's verdict, then what differs between the runs, then the
		// rows.
		b := block{Title: in.names[0] + " → " + in.names[j], Notes: append([]string{c.Verdict}, c.Warnings...)}
		t := table{Head: []string{"Item", in.names[0], in.names[j], "Change"}}
		for _, it := range c.Items {
			t.Rows = append(t.Rows, []cell{
				{Text: it.Metric},
				numCell(optValue(it.Old, it.Unit), it.Old == nil),
				numCell(optValue(it.New, it.Unit), it.New == nil),
				in.changeOf(it),
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
