package htmlreport

import (
	"fmt"
	"math"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/fsbench/fsbench/internal/report"
)

// A repeated benchmark (--repeat) shows each phase's median as the bar, and
// over it each run's VALUE as a dot and the median's confidence interval as
// a line with end caps, so that the reader sees how far apart the runs were
// before reading any change.

// spreadText says how the runs behind a median varied: their count, and
// the median's confidence interval where the runs are enough for one, or
// else their range.
func spreadText(s *report.Spread, unit report.Unit) string {
	if s == nil || s.Runs < 2 {
		return ""
	}
	// A word joiner after the dash keeps a range on one line.
	rng := func(lo, hi float64) string { return fmtValue(lo, unit) + "–\u2060" + fmtValue(hi, unit) }
	if s.Low != nil && s.High != nil {
		return fmt.Sprintf("%d runs, CI %s", s.Runs, rng(*s.Low, *s.High))
	}
	return fmt.Sprintf("%d runs, range %s", s.Runs, rng(s.Min, s.Max))
}

// fmtValue prints a VALUE without its unit, with the decimals the table
// gives that unit.
func fmtValue(v float64, unit report.Unit) string {
	m := report.FormatMeasure(report.Measure{Value: v, Unit: unit})
	if i := len(m) - len(unit) - 1; unit != "" && i > 0 {
		return m[:i]
	}
	return m
}

// runMarks draws, over a bar chart, each run's value of every bar as a dot
// and the interval of the median as a capped line. Rows and series are
// laid out as barChart lays out its bars.
type runMarks struct {
	rows, series int
	// spread[j][i] is the spread of series j in row i (first row on top);
	// nil where there is none.
	spread [][]*report.Spread
}

// Marks geometry, in points.
const (
	runDot    = 2.8
	ciCap     = 4.5
	ciWidth   = 1.6
	dotJitter = 2.5
)

func (m *runMarks) empty() bool {
	for _, row := range m.spread {
		for _, s := range row {
			if s != nil && s.Runs > 1 {
				return false
			}
		}
	}
	return true
}

// y is the centre line of series j's bar in row i.
func (m *runMarks) y(trY func(float64) vg.Length, j, i int) vg.Length {
	return trY(float64(m.rows-1-i)) + vg.Points((float64(m.series-1)/2-float64(j))*barThick)
}

// Plot implements plot.Plotter.
func (m *runMarks) Plot(c draw.Canvas, plt *plot.Plot) {
	trX, trY := plt.Transforms(&c)
	line := draw.LineStyle{Color: inkFG, Width: vg.Points(ciWidth)}
	for j, row := range m.spread {
		for i, s := range row {
			if s == nil || s.Runs < 2 {
				continue
			}
			y := m.y(trY, j, i)
			if s.Low != nil && s.High != nil {
				lo, hi := trX(*s.Low), trX(*s.High)
				c.StrokeLine2(line, lo, y, hi, y)
				c.StrokeLine2(line, lo, y-ciCap, lo, y+ciCap)
				c.StrokeLine2(line, hi, y-ciCap, hi, y+ciCap)
			}
			for k, v := range s.Values {
				// Alternate above and below the centre so that equal
				// values stay countable.
				dy := vg.Points(dotJitter * float64(k%3-1))
				drawRun(&c, vg.Point{X: trX(v), Y: y + dy})
			}
		}
	}
}

// DataRange implements plot.DataRanger: the bars start at zero, and every
// run's value must fit.
func (m *runMarks) DataRange() (xmin, xmax, ymin, ymax float64) {
	xmax = 0
	for _, row := range m.spread {
		for _, s := range row {
			if s == nil {
				continue
			}
			xmax = math.Max(xmax, s.Max)
			if s.High != nil {
				xmax = math.Max(xmax, *s.High)
			}
		}
	}
	return 0, xmax, -0.5, float64(m.rows) - 0.5
}

// drawRun marks one run: a ring in the foreground colour around a disc of
// the card's, so that the dot shows on a bar of any colour and dots that
// overlap stay countable.
func drawRun(c *draw.Canvas, at vg.Point) {
	c.DrawGlyph(draw.GlyphStyle{Color: inkCard, Radius: vg.Points(runDot), Shape: draw.CircleGlyph{}}, at)
	c.DrawGlyph(draw.GlyphStyle{Color: inkFG, Radius: vg.Points(runDot), Shape: draw.RingGlyph{}}, at)
}

// runDots and ciThumb are the legend's pictures of the marks.
type runDots struct{}

func (runDots) Thumbnail(c *draw.Canvas) {
	mid := (c.Min.Y + c.Max.Y) / 2
	for _, f := range []float64{0.2, 0.5, 0.8} {
		drawRun(c, vg.Point{X: c.Min.X + vg.Length(f)*(c.Max.X-c.Min.X), Y: mid})
	}
}

type ciThumb struct{}

func (ciThumb) Thumbnail(c *draw.Canvas) {
	line := draw.LineStyle{Color: inkFG, Width: vg.Points(ciWidth)}
	mid := (c.Min.Y + c.Max.Y) / 2
	c.StrokeLine2(line, c.Min.X+2, mid, c.Max.X-2, mid)
	c.StrokeLine2(line, c.Min.X+2, c.Min.Y, c.Min.X+2, c.Max.Y)
	c.StrokeLine2(line, c.Max.X-2, c.Min.Y, c.Max.X-2, c.Max.Y)
}

// addRunMarks draws m on chart c with its legend entries, when some bar
// has runs.
func (c *chart) addRunMarks(m *runMarks) {
	if m.empty() {
		return
	}
	c.p.Add(m)
	c.legend = append(c.legend, legendEntry{"each run", runDots{}})
	confidence := 0.0
	for _, row := range m.spread {
		for _, s := range row {
			if s != nil && s.Low != nil && s.High != nil {
				confidence = s.Confidence
			}
		}
	}
	if confidence > 0 {
		c.legend = append(c.legend, legendEntry{strconv.FormatFloat(confidence*100, 'f', -1, 64) + "% CI of the median", ciThumb{}})
	}
}
