package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/verdict"
)

// WriteJSON writes r as indented JSON.
func WriteJSON(w io.Writer, r *Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ANSI colours: regressions red, improvements green.
const (
	ansiRed   = "\x1b[1;31m"
	ansiGreen = "\x1b[1;32m"
	ansiReset = "\x1b[0m"
)

// WriteTable writes r for people: the verdict first, the two runs and
// what differs between their parameters, then one row per item (ITEM |
// OLD | NEW | CHANGE | RESULT). A change that cannot be told from noise is
// "~", with its p-value when the runs allow a test.
func WriteTable(w io.Writer, r *Report, color bool) error {
	ew := &report.ErrWriter{W: w}
	thr := "no threshold"
	if r.ThresholdPct != nil {
		thr = "threshold " + strconv.FormatFloat(*r.ThresholdPct, 'f', -1, 64) + "%"
	}
	fmt.Fprintf(ew, "Comparing %s results (%s)\n", r.Command, thr)
	line := "Verdict: " + r.Verdict
	if color && r.Regressions > 0 {
		line = ansiRed + line + ansiReset
	}
	fmt.Fprintln(ew, line)
	for _, s := range []struct {
		label string
		side  Side
		runs  int
	}{{"OLD", r.Old, r.OldRuns}, {"NEW", r.New, r.NewRuns}} {
		fmt.Fprintf(ew, "%s: %s\n", s.label, describe(s.side, s.runs))
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(ew, "Warning: %s\n", warn)
	}
	t := report.NewTable(ew, []string{"ITEM", "OLD", "NEW", "CHANGE", "RESULT"},
		[]tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft})
	for _, it := range r.Items {
		old, new := "-", "-"
		if it.Old != nil {
			old = FormatValue(*it.Old, it.Unit)
		}
		if it.New != nil {
			new = FormatValue(*it.New, it.Unit)
		}
		_ = t.Append([]string{it.Metric, old, new, FormatChange(it), statusText(it, color)})
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, it := range r.Items {
		if it.Status == TooFew {
			fmt.Fprintf(ew, "Too few samples: a percentile is judged with ten samples beyond it (p50 %d, p90 %d, p99 %d, p99.9 %d); the maximum is one operation and never judged.\n",
				verdict.MinSamples("p50"), verdict.MinSamples("p90"), verdict.MinSamples("p99"), verdict.MinSamples("p999"))
			break
		}
	}
	return ew.Err()
}

// statusText is an item's RESULT cell.
func statusText(it Item, color bool) string {
	p := ""
	if it.P != nil {
		p = fmt.Sprintf(" (p=%.3f)", *it.P)
	}
	switch it.Status {
	case Same:
		if it.Old != nil && it.New != nil && *it.Old == *it.New {
			return "same"
		}
		return "~" + p
	case Regression:
		if color {
			return ansiRed + "REGRESSION" + ansiReset + p
		}
		return "REGRESSION" + p
	case Better:
		if color {
			return ansiGreen + "better" + ansiReset + p
		}
		return "better" + p
	case Worse:
		if it.PBeyond != nil && it.Note != "" {
			// called worse, and beyond the threshold by its medians, but
			// its interval reaches back within it (Report.call)
			return "worse, not surely beyond" + p
		}
		return "worse" + p
	case TooFew:
		return "too few samples"
	case Missing:
		return "missing in NEW"
	case Added:
		return "new in NEW"
	}
	return it.Status
}

func describe(s Side, runs int) string {
	parts := []string{}
	if s.File != "" {
		parts = append(parts, s.File)
	}
	if s.Target != "" {
		parts = append(parts, s.Target)
	}
	if !s.StartedAt.IsZero() {
		parts = append(parts, s.StartedAt.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
	if s.Version != "" {
		parts = append(parts, "fsbench "+s.Version)
	}
	if runs > 1 {
		parts = append(parts, strconv.Itoa(runs)+" runs")
	} else {
		parts = append(parts, "1 run")
	}
	return strings.Join(parts, ", ")
}

// FormatValue prints a figure of an Item in its unit: a throughput as the
// table of a run shows it, a latency with an adapted unit, errors as a count.
func FormatValue(v float64, unit string) string {
	switch unit {
	case "us":
		return units.FormatLatency(v)
	case "errors":
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return report.FormatMeasure(report.Measure{Value: v, Unit: report.Unit(unit)})
}

// FormatChange prints an Item's change: the percentage, or for error counts
// the difference; "+inf" for a rise from zero, "-" when there is none.
func FormatChange(it Item) string {
	switch {
	case it.Kind == "errors" && it.Old != nil && it.New != nil:
		return fmt.Sprintf("%+.0f", *it.New-*it.Old)
	case it.ChangePct != nil:
		return fmt.Sprintf("%+.1f%%", *it.ChangePct)
	case it.Old != nil && it.New != nil && *it.New > *it.Old:
		return "+inf"
	}
	return "-"
}
