package history

import (
	"fmt"
	"math"
	"sort"
	"time"
)

// shiftRuns is how many runs on each side of a change point its shift is
// measured over: the nearest, so that a later drift does not blur it.
const shiftRuns = 30

// Change is a point where a figure's series changed.
type Change struct {
	// Index is the first value of the new segment, 0-based over the
	// figure's values; Run is the same run counted from 1.
	Index     int       `json:"index"`
	Run       int       `json:"run"`
	StartedAt time.Time `json:"started_at"`
	// Label is the label of the run where the change begins.
	Label string `json:"label,omitempty"`
	// Before and After are the runs of the segments on either side.
	Before int `json:"runs_before"`
	After  int `json:"runs_after"`
	// BeforeMedian and AfterMedian are those segments' medians (over at
	// most 30 runs next to the change).
	BeforeMedian float64 `json:"before_median"`
	AfterMedian  float64 `json:"after_median"`
	// Shift is the size of the change in percent of BeforeMedian (the
	// Hodges-Lehmann estimate: the median of every difference of a run
	// after and a run before), with its 95% interval (Moses).
	Shift     float64 `json:"shift_pct"`
	ShiftLow  float64 `json:"shift_low_pct"`
	ShiftHigh float64 `json:"shift_high_pct"`
	// P is the permutation test's p-value.
	P float64 `json:"p_value"`
}

func (c Change) describe(figure, unit string) string {
	label := ""
	if c.Label != "" {
		label = ", " + c.Label
	}
	return fmt.Sprintf("%s changed at run %d (%s%s): %s -> %s, %+.1f%% (95%% interval %+.1f%% to %+.1f%%), %d runs before, %d after, p = %.3f",
		figure, c.Run, c.StartedAt.Format("2006-01-02 15:04"), label, FormatValue(c.BeforeMedian, unit),
		FormatValue(c.AfterMedian, unit), c.Shift, c.ShiftLow, c.ShiftHigh, c.Before, c.After, c.P)
}

// Analysis is one figure of a series: its values and change points.
type Analysis struct {
	Figure string `json:"figure"`
	Unit   string `json:"unit"`
	// Values are the figure's value in each run that has it, oldest
	// first; Entries the series' entry of each.
	Values  []float64 `json:"values"`
	Entries []int     `json:"-"`
	Changes []Change  `json:"changes"`
}

// Analyse finds the change points of one figure of s.
func Analyse(s *Series, figure string, o ChangeOptions) Analysis {
	a := Analysis{Figure: figure, Changes: []Change{}}
	a.Values, a.Entries = s.Values(figure)
	for _, f := range s.Entries[a.Entries[len(a.Entries)-1]].Figures {
		if f.Name == figure {
			a.Unit = f.Unit
		}
	}
	points := EDivisive(a.Values, o)
	for i, p := range points {
		from, to := 0, len(a.Values)
		if i > 0 {
			from = points[i-1].Index
		}
		if i+1 < len(points) {
			to = points[i+1].Index
		}
		e := s.Entries[a.Entries[p.Index]]
		c := Change{Index: p.Index, Run: p.Index + 1, StartedAt: e.StartedAt, Label: e.Label, P: p.P,
			Before: p.Index - from, After: to - p.Index}
		before := a.Values[max(from, p.Index-shiftRuns):p.Index]
		after := a.Values[p.Index:min(to, p.Index+shiftRuns)]
		c.BeforeMedian, c.AfterMedian = median(before), median(after)
		c.Shift, c.ShiftLow, c.ShiftHigh = shift(before, after)
		a.Changes = append(a.Changes, c)
	}
	return a
}

// shift is the Hodges-Lehmann estimate of after - before in percent of
// before's median, with its distribution-free 95% interval (Moses).
func shift(before, after []float64) (est, lo, hi float64) {
	var d []float64
	for _, a := range after {
		for _, b := range before {
			d = append(d, a-b)
		}
	}
	sort.Float64s(d)
	n, m := float64(len(before)), float64(len(after))
	k := int(math.Floor(n*m/2 - 1.96*math.Sqrt(n*m*(n+m+1)/12)))
	k = max(k, 0)
	base := median(before)
	if base == 0 {
		return 0, 0, 0
	}
	pct := func(v float64) float64 { return v / base * 100 }
	return pct(median(d)), pct(d[k]), pct(d[len(d)-1-k])
}

// latestStart is the index of the first value of the latest segment of
// values: after its last change point.
func latestStart(values []float64, o ChangeOptions) int {
	points := EDivisive(values, o)
	if len(points) == 0 {
		return 0
	}
	return points[len(points)-1].Index
}

// SeriesAnalysis is a series with each figure analysed, as history show
// -o json writes it.
type SeriesAnalysis struct {
	ID      string     `json:"series"`
	Key     Key        `json:"key"`
	Runs    int        `json:"runs"`
	Figures []Analysis `json:"figures"`
}

// Analyses analyses every figure of every series.
func Analyses(all []*Series, o ChangeOptions) []SeriesAnalysis {
	var out []SeriesAnalysis
	for _, s := range all {
		sa := SeriesAnalysis{ID: s.ID, Key: s.Key, Runs: len(s.Entries)}
		for _, name := range s.FigureNames() {
			sa.Figures = append(sa.Figures, Analyse(s, name, o))
		}
		out = append(out, sa)
	}
	return out
}
