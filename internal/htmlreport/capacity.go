package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// capacitySection draws each result's latency-throughput curve (--curve
// or the probes of --slo): each percentile against the throughput done,
// the objective's bounds, the knee and the answer.
func (in *input) capacitySection() (section, error) {
	s := section{ID: "capacity", Title: "Latency against throughput",
		Intro: "Each open-loop rate run by --curve or --slo: the response time's percentiles (from each operation's scheduled start) against the throughput done. " +
			"Past the knee the throughput barely grows while the latency climbs; a horizontal line is a bound of the objective, the vertical one the highest rate that met it."}
	if b, ok, err := in.capacityOverlay(); err != nil || ok {
		if err != nil {
			return s, err
		}
		s.Blocks = append(s.Blocks, b)
	}
	for j, r := range in.results {
		c := r.Capacity
		if c == nil || len(openSteps(c)) == 0 {
			continue
		}
		svg, err := capacityChart(in.names[j]+": "+c.Phase, c)
		if err != nil {
			return s, err
		}
		b := block{Title: in.names[j] + ": " + c.Phase, Charts: []template.HTML{svg}, Tables: []table{capacityTable(c)}}
		if c.Answer != nil {
			b.Notes = append(b.Notes, c.AnswerLine())
		}
		s.Blocks = append(s.Blocks, b)
	}
	return s, nil
}

// openSteps are the open-loop steps of c, in increasing rate.
func openSteps(c *report.Capacity) []report.CapacityStep {
	var out []report.CapacityStep
	for _, st := range c.Steps {
		if st.Rate > 0 && st.Latency.Count > 0 {
			out = append(out, st)
		}
	}
	sort.SliceStable(out, func(a, b int) bool { return out[a].Rate < out[b].Rate })
	return out
}

// capacityStats are the percentiles drawn, with their values in a step.
var capacityStats = []struct {
	name string
	of   func(report.CapacityStep) float64
}{
	{"p50", func(s report.CapacityStep) float64 { return s.Latency.P50 }},
	{"p90", func(s report.CapacityStep) float64 { return s.Latency.P90 }},
	{"p99", func(s report.CapacityStep) float64 { return s.Latency.P99 }},
	{"p99.9", func(s report.CapacityStep) float64 { return s.Latency.P999 }},
}

func capacityChart(title string, c *report.Capacity) (template.HTML, error) {
	steps := openSteps(c)
	lo, hi, xmax := math.Inf(1), 0.0, 0.0
	for _, st := range steps {
		for _, k := range capacityStats {
			if v := k.of(st); v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		xmax = math.Max(xmax, st.OpsPerSec)
	}
	for _, b := range c.Bounds {
		lo, hi = math.Min(lo, b), math.Max(hi, b)
	}
	unit, div := latencyScale(hi)
	ch := newChart(title, "throughput done ("+c.RateUnit()+")", "latency ("+unit+", log scale)")
	p := ch.p
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	p.Y.Min, p.Y.Max = lo/div/1.25, hi/div*1.25
	p.X.Min, p.X.Max = 0, xmax*1.05
	ch.gridLines(true, true)
	for i, k := range capacityStats {
		var pts plotter.XYs
		for _, st := range steps {
			pts = append(pts, plotter.XY{X: st.OpsPerSec, Y: math.Max(k.of(st), lo) / div})
		}
		l, s, err := plotter.NewLinePoints(pts)
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", title, err)
		}
		styleLine(l, i, i)
		s.Color, s.Shape, s.Radius = seriesInk(i), draw.CircleGlyph{}, vg.Points(2.5)
		ch.add(k.name, lineWithPoints{l, s})
	}
	if err := capacityMarks(ch, c, steps, div, lo, hi); err != nil {
		return "", err
	}
	return ch.render(vg.Points(chartHeight))
}

// capacityMarks draws the objective's bounds, the answer and the knee.
func capacityMarks(ch *chart, c *report.Capacity, steps []report.CapacityStep, div, lo, hi float64) error {
	xmax := ch.p.X.Max
	for _, stat := range sortedKeys(c.Bounds) {
		l, err := plotter.NewLine(plotter.XYs{{X: 0, Y: c.Bounds[stat] / div}, {X: xmax, Y: c.Bounds[stat] / div}})
		if err != nil {
			return err
		}
		l.LineStyle.Color, l.LineStyle.Width, l.LineStyle.Dashes = inkFG, vg.Points(1), []vg.Length{vg.Points(4), vg.Points(4)}
		ch.add("objective "+stat+" < "+units.FormatLatency(c.Bounds[stat]), l)
	}
	if a := c.Answer; a != nil && a.OpsPerSec > 0 {
		l, err := plotter.NewLine(plotter.XYs{{X: a.OpsPerSec, Y: lo / div / 1.2}, {X: a.OpsPerSec, Y: hi / div * 1.2}})
		if err != nil {
			return err
		}
		l.LineStyle.Color, l.LineStyle.Width = inkFG, vg.Points(1.25)
		ch.add("max rate under the objective: "+strconv.FormatFloat(a.OpsPerSec, 'f', 0, 64)+" "+c.RateUnit(), l)
	}
	if c.KneeStep > 0 && c.KneeStep < len(c.Steps) {
		k := c.Steps[c.KneeStep]
		sc, err := plotter.NewScatter(plotter.XYs{{X: k.OpsPerSec, Y: math.Max(k.Latency.P99, lo) / div}})
		if err != nil {
			return err
		}
		sc.GlyphStyle = draw.GlyphStyle{Color: inkFG, Shape: draw.RingGlyph{}, Radius: vg.Points(7)}
		ch.add("knee: "+strconv.FormatFloat(k.OpsPerSec, 'f', 0, 64)+" "+c.RateUnit(), sc)
	}
	return nil
}

// lineWithPoints draws a line with its points and shows both in the legend.
type lineWithPoints struct {
	*plotter.Line
	*plotter.Scatter
}

func (lp lineWithPoints) Plot(c draw.Canvas, p *plot.Plot) {
	lp.Line.Plot(c, p)
	lp.Scatter.Plot(c, p)
}

func (lp lineWithPoints) Thumbnail(c *draw.Canvas) {
	lp.Line.Thumbnail(c)
	lp.Scatter.Thumbnail(c)
}

func (lp lineWithPoints) DataRange() (xmin, xmax, ymin, ymax float64) { return lp.Line.DataRange() }

func sortedKeys(m map[string]float64) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// capacityTable lists every step, the maximum first.
func capacityTable(c *report.Capacity) table {
	t := table{Head: []string{"step", "asked (" + c.RateUnit() + ")", "done (" + c.RateUnit() + ")", "MiB/s", "p50", "p90", "p99", "p99.9", "errors", "objective"}, Long: len(c.Steps) > 12}
	for i, st := range c.Steps {
		name := "maximum (closed loop)"
		if st.Rate > 0 {
			name = strconv.FormatFloat(st.Percent, 'f', -1, 64) + "%"
		}
		if i == c.KneeStep && i > 0 {
			name += " (knee)"
		}
		held := ""
		if st.Holds != nil {
			held = map[bool]string{true: "held", false: "not held: " + st.Reason}[*st.Holds]
		}
		asked := "-"
		if st.Rate > 0 {
			asked = strconv.FormatFloat(st.Rate, 'f', 0, 64)
		}
		t.Rows = append(t.Rows, []cell{{Text: name}, {Text: asked, Num: true},
			{Text: strconv.FormatFloat(st.OpsPerSec, 'f', 0, 64), Num: true},
			{Text: strconv.FormatFloat(st.BytesPerSec/(1<<20), 'f', 2, 64), Num: true},
			{Text: units.FormatLatency(st.Latency.P50), Num: true}, {Text: units.FormatLatency(st.Latency.P90), Num: true},
			{Text: units.FormatLatency(st.Latency.P99), Num: true}, {Text: units.FormatLatency(st.Latency.P999), Num: true},
			{Text: strconv.FormatInt(st.Errors, 10), Num: true}, {Text: held}})
	}
	return t
}

// capacityOverlay lays the p99 curves of every result with one over each
// other, in each result's colour, when there are two or more.
func (in *input) capacityOverlay() (block, bool, error) {
	var with []int
	for j, r := range in.results {
		if r.Capacity != nil && len(openSteps(r.Capacity)) > 0 {
			with = append(with, j)
		}
	}
	if len(with) < 2 {
		return block{}, false, nil
	}
	lo, hi, xmax := math.Inf(1), 0.0, 0.0
	for _, j := range with {
		for _, st := range openSteps(in.results[j].Capacity) {
			if st.Latency.P99 > 0 {
				lo, hi = math.Min(lo, st.Latency.P99), math.Max(hi, st.Latency.P99)
			}
			xmax = math.Max(xmax, st.OpsPerSec)
		}
	}
	unit, div := latencyScale(hi)
	title := "p99 against throughput, every result"
	ch := newChart(title, "throughput done ("+in.results[with[0]].Capacity.RateUnit()+")", "p99 ("+unit+", log scale)")
	ch.p.Y.Scale, ch.p.Y.Tick.Marker = plot.LogScale{}, logTicks{}
	ch.p.Y.Min, ch.p.Y.Max, ch.p.X.Min, ch.p.X.Max = lo/div/1.25, hi/div*1.25, 0, xmax*1.05
	ch.gridLines(true, true)
	for _, j := range with {
		var pts plotter.XYs
		for _, st := range openSteps(in.results[j].Capacity) {
			pts = append(pts, plotter.XY{X: st.OpsPerSec, Y: math.Max(st.Latency.P99, lo) / div})
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return block{}, false, fmt.Errorf("chart %s: %w", title, err)
		}
		styleLine(l, j, 0)
		sc.Color, sc.Shape, sc.Radius = seriesInk(j), draw.CircleGlyph{}, vg.Points(2.5)
		ch.add(in.names[j]+": "+in.results[j].Capacity.Phase, lineWithPoints{l, sc})
	}
	svg, err := ch.render(vg.Points(chartHeight))
	return block{Title: "Every result's curve", Charts: []template.HTML{svg},
		Notes: []string{"The p99 of each result's open-loop steps against the throughput they did: the curve further right at the same latency carries more load."}}, true, err
}
