package history

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// FormatValue prints a figure's value in its unit.
func FormatValue(v float64, unit string) string {
	if unit == "us" {
		return units.FormatLatency(v)
	}
	return report.FormatMeasure(report.Measure{Value: v, Unit: report.Unit(unit)})
}

// trendRuns is how many of the latest runs the TREND column draws.
const trendRuns = 60

// sparks are the levels of a sparkline, lowest first.
var sparks = []rune("▁▂▃▄▅▆▇█")

// Sparkline draws values as one character each, from the lowest level for
// their minimum to the highest for their maximum; marks are the indices
// after which a "|" is drawn (change points).
func Sparkline(values []float64, marks map[int]bool) string {
	if len(values) == 0 {
		return ""
	}
	lo, hi := values[0], values[0]
	for _, v := range values {
		lo, hi = math.Min(lo, v), math.Max(hi, v)
	}
	var b strings.Builder
	for i, v := range values {
		if marks[i] {
			b.WriteByte('|')
		}
		l := 0
		if hi > lo {
			l = int((v - lo) / (hi - lo) * float64(len(sparks)-1))
		}
		b.WriteRune(sparks[l])
	}
	return b.String()
}

// ShowOptions select what Show prints.
type ShowOptions struct {
	// Last is how many of each series' latest runs the table's figures
	// and trend cover; 0: all.
	Last int
	Options
}

// Show prints each series: its key and runs, then a row per figure with
// its runs, latest value, median and spread over the last runs, its change
// points and a sparkline.
func Show(w io.Writer, all []*Series, o ShowOptions) error {
	ew := &report.ErrWriter{W: w}
	if len(all) == 0 {
		fmt.Fprintln(ew, "The history holds no runs yet: add results with fsbench history add, or --history on a benchmark.")
		return ew.Err()
	}
	for i, s := range all {
		if i > 0 {
			fmt.Fprintln(ew)
		}
		if err := showSeries(ew, s, o); err != nil {
			return err
		}
	}
	return ew.Err()
}

func showSeries(w *report.ErrWriter, s *Series, o ShowOptions) error {
	first, last := s.Entries[0], s.Entries[len(s.Entries)-1]
	fmt.Fprintf(w, "Series %s: %s\n", s.ID, s.Key)
	fmt.Fprintf(w, "%d runs, %s to %s%s\n", len(s.Entries), first.StartedAt.Format("2006-01-02 15:04"),
		last.StartedAt.Format("2006-01-02 15:04"), labelNote(last))
	t := report.NewTable(w, []string{"FIGURE", "RUNS", "LATEST", "MEDIAN", "SPREAD", "CHANGES", "TREND"},
		[]tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft})
	var notes []string
	for _, name := range s.FigureNames() {
		a := Analyse(s, name, o.Change)
		from := 0
		if o.Last > 0 && len(a.Values) > o.Last {
			from = len(a.Values) - o.Last
		}
		v := a.Values[from:]
		trend := max(from, len(a.Values)-trendRuns)
		marks := map[int]bool{}
		for _, c := range a.Changes {
			if c.Index > trend {
				marks[c.Index-trend] = true
			}
			notes = append(notes, c.describe(name, a.Unit))
		}
		_ = t.Append([]string{name, fmt.Sprint(len(v)), FormatValue(v[len(v)-1], a.Unit), FormatValue(median(v), a.Unit),
			spread(v), fmt.Sprint(len(a.Changes)), Sparkline(a.Values[trend:], marks)})
	}
	if err := t.Render(); err != nil {
		return err
	}
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	return w.Err()
}

func labelNote(e Entry) string {
	if e.Label == "" {
		return ""
	}
	return " (latest: " + e.Label + ")"
}

// spread is how far the values reach from their median, in percent of it:
// "-12% +9%".
func spread(v []float64) string {
	m := median(v)
	if m == 0 || len(v) < 2 {
		return "-"
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return fmt.Sprintf("%+.0f%% %+.0f%%", (s[0]-m)/m*100, (s[len(s)-1]-m)/m*100)
}

// WriteCheck prints a check: its verdict, the series, and a row per
// judged figure.
func WriteCheck(w io.Writer, c Check) error {
	ew := &report.ErrWriter{W: w}
	fmt.Fprintf(ew, "History check against series %s: %s\n", c.Series, c.Key)
	fmt.Fprintf(ew, "Verdict: %s\n", c.Verdict())
	for _, id := range sortedKeys(c.Differs) {
		fmt.Fprintf(ew, "Parameters differ from series %s: %s\n", id, strings.Join(c.Differs[id], ", "))
	}
	if len(c.Figures) == 0 {
		return ew.Err()
	}
	t := report.NewTable(ew, []string{"FIGURE", "NEW", "RUNS", "MEDIAN", "BOUND", "RESULT"},
		[]tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignLeft})
	for _, j := range c.Figures {
		bound, med := "-", "-"
		if j.Needs == 0 {
			bound = FormatValue(j.Bound, j.Unit)
		}
		if j.Runs > 0 {
			med = FormatValue(j.Median, j.Unit)
		}
		_ = t.Append([]string{j.Figure, FormatValue(j.New, j.Unit), fmt.Sprint(j.Runs), med, bound, j.result()})
	}
	if err := t.Render(); err != nil {
		return err
	}
	return ew.Err()
}

func (j Judgement) result() string {
	switch {
	case j.Needs > 0:
		return fmt.Sprintf("needs %d more %s", j.Needs, plural(j.Needs, "run"))
	case j.Outside && j.Higher:
		return "OUTSIDE: below the bound"
	case j.Outside:
		return "OUTSIDE: above the bound"
	case j.Small:
		return "within the threshold, beyond the bound"
	}
	return "within"
}

// Verdict is the check in one sentence.
func (c Check) Verdict() string {
	rate := fmt.Sprintf("false-alarm rate %g%% over %d figures", c.FalseAlarm*100, len(c.Figures))
	switch {
	case c.New:
		return fmt.Sprintf("NEW starts a series of its own; the history needs %d runs of it before a check", MinRuns)
	case c.Outside > 0:
		var names []string
		for _, j := range c.Figures {
			if j.Outside {
				names = append(names, j.Figure)
			}
		}
		return fmt.Sprintf("NEW is outside its history in %d of %d figures (%s; %s)", c.Outside, len(c.Figures), strings.Join(names, ", "), rate)
	case c.Needs > 0:
		return fmt.Sprintf("too short a history: a figure is judged against %d runs since its last change point; %d more needed", MinRuns, c.Needs)
	}
	small := 0
	for _, j := range c.Figures {
		if j.Small {
			small++
		}
	}
	if small > 0 {
		return fmt.Sprintf("NEW is within its history (%s; %d beyond the bound by no more than the %g%% threshold)", rate, small, c.Threshold*100)
	}
	return fmt.Sprintf("NEW is within its history (%s)", rate)
}

func sortedKeys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func plural(n int, noun string) string {
	if n == 1 {
		return noun
	}
	return noun + "s"
}
