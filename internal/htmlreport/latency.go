package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strings"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// Percentile curves are drawn as HdrHistogram's plotter draws them: x is
// 1/(1-q) on a log axis, so 0%, 90%, 99%, 99.9%, ... are equally spaced.

// pointsPerDecade is how many points a curve from a histogram has between
// 90% and 99%, and so on.
const pointsPerDecade = 12

// histCurve returns the percentile curve of h: latency in µs at x = 1/(1-q),
// up to the resolution of its sample count, ending at the maximum.
func histCurve(h *metrics.Histogram) plotter.XYs {
	n := float64(h.Count())
	var pts plotter.XYs
	last := 1.0
	for k := 0; ; k++ {
		x := math.Pow(10, float64(k)/pointsPerDecade)
		if k > 0 && x > n {
			break
		}
		pts = append(pts, plotter.XY{X: x, Y: durUS(h.Quantile(100 * (1 - 1/x)))})
		last = x
	}
	return append(pts, plotter.XY{X: math.Max(n, last*2), Y: durUS(h.Quantile(100))})
}

// summaryCurve returns the curve through a summary's stored points, for
// results without histograms.
func summaryCurve(s metrics.Summary) plotter.XYs {
	pts := plotter.XYs{{X: 1, Y: s.Min}, {X: 2, Y: s.P50}, {X: 10, Y: s.P90}, {X: 100, Y: s.P99}, {X: 1000, Y: s.P999}}
	return append(pts, plotter.XY{X: math.Max(float64(s.Count), 2000), Y: s.Max})
}

func durUS(d time.Duration) float64 { return float64(d) / 1e3 }

// percentileTicks labels the decades of 1/(1-q): 0%, 90%, 99%, 99.9%, ...
type percentileTicks struct{}

func (percentileTicks) Ticks(min, max float64) []plot.Tick {
	var out []plot.Tick
	for k := 0; math.Pow(10, float64(k)) <= max*1.0001; k++ {
		out = append(out, plot.Tick{Value: math.Pow(10, float64(k)), Label: percentileLabel(k)})
		for _, m := range []float64{2, 5} {
			if v := m * math.Pow(10, float64(k)); v <= max {
				out = append(out, plot.Tick{Value: v})
			}
		}
	}
	return out
}

// percentileLabel names the percentile 1 - 10^-k.
func percentileLabel(k int) string {
	switch k {
	case 0:
		return "0%"
	case 1:
		return "90%"
	case 2:
		return "99%"
	}
	return "99." + strings.Repeat("9", k-2) + "%"
}

// latencyScale picks the unit of a latency axis whose largest value is
// maxUS microseconds.
func latencyScale(maxUS float64) (unit string, div float64) {
	switch {
	case maxUS >= 2e6:
		return "s", 1e6
	case maxUS >= 2e3:
		return "ms", 1e3
	}
	return "µs", 1
}

// curve is one line of a percentile chart and its row in the table.
type curve struct {
	run         int // index of the result
	of          string
	dash        int
	pts         plotter.XYs
	row         []float64 // min, p50, p90, p99, p99.9, p99.99, max in µs; NaN unknown
	count       int64
	fromSummary bool
}

// phaseCurves returns the latency curves of one result's phase: the
// latency, and where measured the time to first byte and the service time.
func phaseCurves(run int, p *report.PhaseResult) (out []curve, notes []string) {
	kinds := []struct {
		of   string
		sum  *metrics.Summary
		hist string
	}{{"latency", &p.Latency, p.Histogram}, {"time to first byte", p.TTFB, p.TTFBHistogram}, {"service time", p.ServiceTime, p.ServiceHistogram}}
	for k, x := range kinds {
		if x.sum == nil || (x.sum.Count == 0 && x.hist == "") {
			continue
		}
		c := curve{run: run, of: x.of, dash: k, count: x.sum.Count}
		h, err := decodeHist(x.hist)
		if err != nil {
			notes = append(notes, fmt.Sprintf("The stored %s histogram of %s could not be read (%v): drawn from its summary.", x.of, p.Name, err))
		}
		if h != nil && h.Count() > 0 {
			c.pts, c.count = histCurve(h), h.Count()
			q := func(v float64) float64 { return durUS(h.Quantile(v)) }
			c.row = []float64{q(0), q(50), q(90), q(99), q(99.9), q(99.99), q(100)}
		} else {
			s := x.sum
			c.pts, c.fromSummary = summaryCurve(*s), true
			c.row = []float64{s.Min, s.P50, s.P90, s.P99, s.P999, math.NaN(), s.Max}
		}
		out = append(out, c)
	}
	return out, notes
}

func decodeHist(enc string) (*metrics.Histogram, error) {
	if enc == "" {
		return nil, nil
	}
	return metrics.Decode(enc)
}

func (in *input) latencySection() (section, error) {
	s := section{ID: "latency", Title: "Latency percentiles",
		Intro: "Latency at each percentile, from each phase's stored histogram: the x axis is logarithmic in 1/(1−percentile), so 90%, 99%, 99.9% are equally spaced and the tail is visible; the latency axis is logarithmic too, so that a change at p50 shows as well as one in the tail. Dashed lines are the time to first byte, dotted ones the service time of a fixed-rate phase."}
	for _, r := range in.results {
		if len(r.Runs) > 1 {
			s.Intro += " A repeated benchmark's curve is drawn from the samples of all its runs together."
			break
		}
	}
	phases := in.allPhases(func(p *report.PhaseResult) bool { return p.Latency.Count > 0 || p.Histogram != "" })
	for _, ph := range phases {
		b, err := in.latencyBlock(ph)
		if err != nil {
			return s, err
		}
		s.Blocks = append(s.Blocks, b)
	}
	return s, nil
}

func (in *input) latencyBlock(ph phaseRef) (block, error) {
	b := block{Title: ph.title + " (" + ph.name + ")"}
	var curves []curve
	of := map[string]bool{}
	for j, r := range in.results {
		p := r.FindPhase(ph.name)
		if p == nil {
			continue
		}
		cs, notes := phaseCurves(j, p)
		curves = append(curves, cs...)
		b.Notes = append(b.Notes, notes...)
		if p.LatencyOf != "" && !of[p.LatencyOf] {
			of[p.LatencyOf] = true
			b.Notes = append(b.Notes, "One sample times: "+p.LatencyOf+".")
		}
	}
	for _, c := range curves {
		if c.fromSummary {
			b.Notes = append(b.Notes, "Curves marked “summary” are drawn through the stored p50, p90, p99, p99.9 and max only: their results carry no histogram.")
			break
		}
	}
	svg, err := in.curveChart("Latency of "+ph.name, curves)
	if err != nil {
		return b, err
	}
	b.Charts = append(b.Charts, svg)
	b.Tables = append(b.Tables, in.curveTable(curves))
	return b, nil
}

func (in *input) curveLabel(c curve) string {
	l := in.names[c.run]
	if c.of != "latency" {
		l += " " + c.of
	}
	if c.fromSummary {
		l += " (summary)"
	}
	return l
}

func (in *input) curveChart(title string, curves []curve) (template.HTML, error) {
	maxUS := 0.0
	for _, c := range curves {
		for _, p := range c.pts {
			maxUS = math.Max(maxUS, p.Y)
		}
	}
	unit, div := latencyScale(maxUS)
	ch := newChart(title, "percentile", "latency ("+unit+", log scale)")
	p := ch.p
	p.X.Scale = plot.LogScale{}
	p.X.Tick.Marker = percentileTicks{}
	// A log latency axis: p50 and p99.9 often lie a decade or more apart,
	// and on a linear one everything below p90 sits on the floor.
	lo := positiveMin(curves) / div
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = lo/1.25, maxUS/div*1.15
	ch.gridLines(true, true)
	for _, c := range curves {
		pts := make(plotter.XYs, len(c.pts))
		for i, pt := range c.pts {
			pts[i] = plotter.XY{X: pt.X, Y: math.Max(pt.Y, lo*div) / div}
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", title, err)
		}
		styleLine(l, c.run, c.dash)
		ch.add(in.curveLabel(c), l)
	}
	return ch.render(vg.Points(chartHeight))
}

// positiveMin is the least latency above zero on the curves, in µs (1
// when there is none): the floor of a log axis.
func positiveMin(curves []curve) float64 {
	lo := math.Inf(1)
	for _, c := range curves {
		for _, p := range c.pts {
			if p.Y > 0 {
				lo = math.Min(lo, p.Y)
			}
		}
	}
	if math.IsInf(lo, 1) {
		return 1
	}
	return lo
}

// styleLine gives a line its result's colour and its kind's dashes.
func styleLine(l *plotter.Line, colour, dash int) {
	l.LineStyle.Color = seriesInk(colour)
	l.LineStyle.Width = vg.Points(1.75)
	l.LineStyle.Dashes = dashes[dash%len(dashes)]
}

// curveTable lists the percentiles of each curve; the kind and source
// columns only when some curve differs from a plain latency histogram.
func (in *input) curveTable(curves []curve) table {
	kinds, summaries := false, false
	for _, c := range curves {
		kinds = kinds || c.of != "latency"
		summaries = summaries || c.fromSummary
	}
	t := table{Head: []string{"Result"}}
	if kinds {
		t.Head = append(t.Head, "Of")
	}
	t.Head = append(t.Head, "Samples", "Min", "p50", "p90", "p99", "p99.9", "p99.99", "Max")
	if summaries {
		t.Head = append(t.Head, "From")
	}
	for _, c := range curves {
		row := []cell{{Text: in.names[c.run]}}
		if kinds {
			row = append(row, cell{Text: c.of})
		}
		row = append(row, cell{Text: fmt.Sprint(c.count), Num: true})
		for _, v := range c.row {
			row = append(row, numCell(units.FormatLatency(v), math.IsNaN(v)))
		}
		if summaries {
			from := "histogram"
			if c.fromSummary {
				from = "summary"
			}
			row = append(row, cell{Text: from})
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}
