package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/fsbench/fsbench/internal/report"
)

// phaseRef names a phase found in one or more of the results.
type phaseRef struct{ name, title string }

// unitGroup is the phases whose VALUE has one unit (MiB/s, files/s, ...):
// only those share an axis.
type unitGroup struct {
	unit   report.Unit
	phases []phaseRef
}

// allPhases lists the phases of every result, in the order first seen.
func (in *input) allPhases(keep func(p *report.PhaseResult) bool) []phaseRef {
	var out []phaseRef
	seen := map[string]bool{}
	for _, r := range in.results {
		for i := range r.Phases {
			p := &r.Phases[i]
			if seen[p.Name] || !keep(p) {
				continue
			}
			seen[p.Name] = true
			out = append(out, phaseRef{p.Name, p.Title})
		}
	}
	return out
}

func (in *input) unitGroups() []unitGroup {
	var out []unitGroup
	idx := map[report.Unit]int{}
	for _, r := range in.results {
		for _, p := range r.Phases {
			u := p.Value.Unit
			if u == "" || u == report.UnitNotSupported {
				continue
			}
			k, ok := idx[u]
			if !ok {
				k = len(out)
				idx[u] = k
				out = append(out, unitGroup{unit: u})
			}
			g := &out[k]
			if !hasPhase(g.phases, p.Name) {
				g.phases = append(g.phases, phaseRef{p.Name, p.Title})
			}
		}
	}
	return out
}

func hasPhase(ps []phaseRef, name string) bool {
	for _, p := range ps {
		if p.name == name {
			return true
		}
	}
	return false
}

func (in *input) throughputSection() (section, error) {
	s := section{ID: "throughput", Title: "Throughput",
		Intro: "Each phase's VALUE, as the table of a run shows it; phases with the same unit share a chart."}
	if len(in.results) > 1 {
		s.Intro += fmt.Sprintf(" Changes are against %s; beyond %s%% they count as more than noise.", in.names[0], fmtPct(in.opts.Threshold))
	}
	for _, r := range in.results {
		if len(r.Runs) > 1 {
			s.Intro += " For a repeated benchmark (--repeat) the bar is the median of the runs, each ring one run, and the capped line the median's confidence interval; under each median the table gives the number of runs and that interval, or their range when they are too few for one."
			break
		}
	}
	for j, r := range in.results {
		var none []string
		for _, p := range r.Phases {
			if p.Value.Unit == report.UnitNotSupported {
				none = append(none, p.Title+" ("+p.Name+")")
			}
		}
		if len(none) > 0 {
			s.Intro += fmt.Sprintf(" Not supported by the storage of %s, so not measured: %s.", in.names[j], strings.Join(none, ", "))
		}
	}
	for _, g := range in.unitGroups() {
		b, err := in.throughputBlock(g)
		if err != nil {
			return s, err
		}
		s.Blocks = append(s.Blocks, b)
	}
	if b := in.accessBlock(); len(b.Tables) > 0 {
		s.Blocks = append(s.Blocks, b)
	}
	return s, nil
}

// value is phase name's VALUE in result j, or NaN when it has none in g's unit.
func (in *input) value(j int, name string, unit report.Unit) float64 {
	p := in.results[j].FindPhase(name)
	if p == nil || p.Value.Unit != unit {
		return math.NaN()
	}
	return p.Value.Value
}

// spread is how phase name's VALUE in result j varied over its runs; nil
// for a single run or another unit.
func (in *input) spread(j int, name string, unit report.Unit) *report.Spread {
	p := in.results[j].FindPhase(name)
	if p == nil || p.Value.Unit != unit {
		return nil
	}
	return p.Spread
}

func (in *input) throughputBlock(g unitGroup) (block, error) {
	title := "Throughput in " + string(g.unit)
	b := block{Title: title}
	svg, err := barChart(title, string(g.unit), in.names, 0, g.phases, func(j int, name string) float64 { return in.value(j, name, g.unit) },
		func(j int, name string) *report.Spread { return in.spread(j, name, g.unit) })
	if err != nil {
		return b, err
	}
	b.Charts = append(b.Charts, svg)
	b.Tables = append(b.Tables, in.throughputTable(g))
	return b, nil
}

// throughputTable lists the VALUE of each phase of g. With several results
// each gets a row of its own under the phase, with its change against the
// first: the table keeps four columns however many results there are, so
// that the change stays in view on a narrow screen.
func (in *input) throughputTable(g unitGroup) table {
	valueCell := func(j int, name string) cell {
		v := in.value(j, name, g.unit)
		c := numCell(report.FormatMeasure(report.Measure{Value: v, Unit: g.unit}), math.IsNaN(v))
		c.Sub = spreadText(in.spread(j, name, g.unit), g.unit)
		return c
	}
	if len(in.results) == 1 {
		t := table{Head: []string{"Item", in.names[0]}}
		for _, ph := range g.phases {
			t.Rows = append(t.Rows, []cell{{Text: ph.title + " (" + ph.name + ")"}, valueCell(0, ph.name)})
		}
		return t
	}
	base := cell{Num: true}
	for _, c := range in.cmps {
		if c != nil {
			base = cell{Text: "baseline", Class: "muted", Num: true}
		}
	}
	t := table{Head: []string{"Item", "Result", "Value", "Change"}}
	for _, ph := range g.phases {
		first := true
		for j := range in.results {
			if math.IsNaN(in.value(j, ph.name, g.unit)) {
				continue // not in this result: nothing to show
			}
			row := []cell{{}, {Text: in.names[j], Class: "name"}, valueCell(j, ph.name), base}
			if j > 0 {
				row[3] = in.changeCell(j, ph.name, "throughput")
			}
			if first {
				row[0].Text, first = ph.title+" ("+ph.name+")", false
			}
			t.Rows = append(t.Rows, row)
		}
	}
	return t
}

// numCell is a right-aligned number, "-" when missing.
func numCell(text string, missing bool) cell {
	if missing {
		return cell{Text: "-", Num: true}
	}
	return cell{Text: text, Num: true}
}

// Bar geometry, in SVG user units.
const (
	barThick = 15
	barGap   = 12
)

// barChart draws one group of horizontal bars per row, one bar per series
// (the first on top, in colour first+j); value(j, name) is NaN when series
// j has no such figure. spread, when not nil, gives the runs behind a bar
// of a repeated benchmark, drawn over it.
func barChart(title, unit string, series []string, first int, rows []phaseRef, value func(j int, name string) float64,
	spread func(j int, name string) *report.Spread) (template.HTML, error) {
	c := newChart(title, unit, "")
	c.gridLines(true, false)
	p := c.p
	n := len(series)
	names := make([]string, len(rows))
	for i, r := range rows {
		names[len(rows)-1-i] = r.name // first row on top
	}
	for j := 0; j < n; j++ {
		vals := make(plotter.Values, len(rows))
		for i, r := range rows {
			v := value(j, r.name)
			if math.IsNaN(v) || v < 0 {
				v = 0
			}
			vals[len(rows)-1-i] = v
		}
		bc, err := plotter.NewBarChart(vals, vg.Points(barThick))
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", title, err)
		}
		bc.Horizontal = true
		bc.Color = seriesInk(first + j)
		bc.LineStyle.Width = 0
		bc.Offset = vg.Points((float64(n-1)/2 - float64(j)) * barThick)
		label := ""
		if n > 1 {
			label = series[j]
		}
		c.add(label, bc)
	}
	if spread != nil {
		m := &runMarks{rows: len(rows), series: n, spread: make([][]*report.Spread, n)}
		for j := range m.spread {
			for _, r := range rows {
				m.spread[j] = append(m.spread[j], spread(j, r.name))
			}
		}
		c.addRunMarks(m)
	}
	p.NominalY(names...)
	p.X.Min, p.X.Max = 0, p.X.Max*1.04
	p.Y.Min, p.Y.Max = -0.5, float64(len(rows))-0.5
	return c.render(vg.Points(70 + float64(len(rows)*(n*barThick+barGap))))
}

// fmtPct prints a percentage without trailing zeros.
func fmtPct(v float64) string {
	return fmt.Sprintf("%g", v)
}
