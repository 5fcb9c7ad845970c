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

// WriteTable writes r for people: a header naming both runs, one row per
// item (ITEM | OLD | NEW | CHANGE | RESULT), the warnings and a verdict.
func WriteTable(w io.Writer, r *Report, color bool) error {
	ew := &report.ErrWriter{W: w}
	thr := "no threshold"
	if r.ThresholdPct != nil {
		thr = "threshold " + strconv.FormatFloat(*r.ThresholdPct, 'f', -1, 64) + "%"
	}
	fmt.Fprintf(ew, "Comparing %s results (%s)\n", r.Command, thr)
	for _, s := range []struct {
		label string
		side  Side
	}{{"OLD", r.Old}, {"NEW", r.New}} {
		fmt.Fprintf(ew, "%s: %s\n", s.label, describe(s.side))
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
		status := it.Status
		switch it.Status {
		case Regression:
			status = "REGRESSION"
			if color {
				status = ansiRed + status + ansiReset
			}
		case Better:
			if color {
				status = ansiGreen + status + ansiReset
			}
		case Missing:
			status = "missing in NEW"
		case Added:
			status = "new in NEW"
		}
		_ = t.Append([]string{it.Metric, old, new, FormatChange(it), status})
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, warn := range r.Warnings {
		fmt.Fprintf(ew, "Warning: %s\n", warn)
	}
	switch {
	case r.ThresholdPct == nil:
	case r.Regressions == 0:
		fmt.Fprintf(ew, "No regression beyond %s%%.\n", strconv.FormatFloat(*r.ThresholdPct, 'f', -1, 64))
	default:
		noun := "regressions"
		if r.Regressions == 1 {
			noun = "regression"
		}
		fmt.Fprintf(ew, "%d %s beyond %s%%: %s\n", r.Regressions, noun,
			strconv.FormatFloat(*r.ThresholdPct, 'f', -1, 64), strings.Join(r.RegressionList(), ", "))
	}
	return ew.Err()
}

func describe(s Side) string {
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
	return report.FormatMeasure(report.Measure{Value: v, Unit: unit})
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
