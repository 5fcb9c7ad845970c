package htmlreport

import (
	"image/color"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/recorder"

	"github.com/fsbench/fsbench/internal/report"
)

// TestRunMarks draws the marks of two bars, one with six runs and an
// interval, one with three runs and none, and counts what was drawn: one
// dot per run, and one capped line for the interval only.
func TestRunMarks(t *testing.T) {
	lo, hi := 98.0, 103.0
	six := &report.Spread{Runs: 6, Values: []float64{100, 101, 99, 98, 103, 100}, Min: 98, Max: 103, Low: &lo, High: &hi, Confidence: 0.95}
	three := &report.Spread{Runs: 3, Values: []float64{50, 55, 52}, Min: 50, Max: 55, Confidence: 0.95}
	m := &runMarks{rows: 1, series: 2, spread: [][]*report.Spread{{six}, {three}}}
	p := plot.New()
	p.Add(m)
	var rec recorder.Canvas
	m.Plot(draw.NewCanvas(&rec, 400, 200), p)
	var fills, strokes int
	var ink color.Color
	for _, a := range rec.Actions {
		switch a := a.(type) {
		case *recorder.SetColor:
			ink = a.Color
		case *recorder.Fill:
			if ink == inkCard {
				fills++
			}
		case *recorder.Stroke:
			if ink == inkFG {
				strokes++
			}
		}
	}
	// Each dot: a disc of the card's colour and a ring; the interval: a
	// line and two caps.
	if fills != 9 || strokes != 9+3 {
		t.Errorf("drawn %d discs and %d foreground strokes, want 9 and 12", fills, strokes)
	}
	if _, xmax, _, _ := m.DataRange(); xmax != 103 {
		t.Errorf("data range ends at %v, want the largest run, 103", xmax)
	}
	c := newChart("t", "", "")
	c.addRunMarks(m)
	if len(c.legend) != 2 || c.legend[0].label != "each run" || c.legend[1].label != "95% CI of the median" {
		t.Errorf("legend %+v", c.legend)
	}
	c = newChart("t", "", "")
	c.addRunMarks(&runMarks{rows: 1, series: 1, spread: [][]*report.Spread{{nil}}})
	if len(c.legend) != 0 {
		t.Errorf("a bar without runs gets a legend: %+v", c.legend)
	}
}

func TestSpreadText(t *testing.T) {
	lo, hi := 909.06, 935.27
	for _, c := range []struct {
		s    *report.Spread
		want string
	}{
		{nil, ""},
		{&report.Spread{Runs: 1, Values: []float64{1}}, ""},
		{&report.Spread{Runs: 3, Min: 401.25, Max: 425.7}, "3 runs, range 401.25–\u2060425.70"},
		{&report.Spread{Runs: 6, Min: 900, Max: 940, Low: &lo, High: &hi, Confidence: 0.95}, "6 runs, CI 909.06–\u2060935.27"},
	} {
		if got := spreadText(c.s, "MiB/s"); got != c.want {
			t.Errorf("spreadText = %q, want %q", got, c.want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(min, max float64) string {
		var out []string
		for _, tk := range (logTicks{}).Ticks(min, max) {
			out = append(out, tk.Label)
		}
		return strings.Join(out, " ")
	}
	if got := labels(0.8, 180); got != "1 2 5 10 20 50 100" {
		t.Errorf("0.8..180: %q", got)
	}
	if got := labels(0.05, 4000); got != " 0.1   1   10   100   1000 " {
		t.Errorf("0.05..4000: %q", got)
	}
	if got := labels(3, 4); got != "3.0 3.2 3.4 3.6 3.8 4.0" {
		t.Errorf("3..4: %q", got)
	}
}
