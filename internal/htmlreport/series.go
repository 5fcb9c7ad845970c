package htmlreport

import (
	"fmt"
	"html/template"
	"math"
	"strconv"

	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

func (in *input) seriesSection() (section, error) {
	s := section{ID: "series", Title: "Over time",
		Intro: "Throughput and p99 latency per interval (--interval or interval: in a workload file), at the end of each interval since the phase began."}
	for _, ph := range in.allPhases(func(p *report.PhaseResult) bool { return len(p.Series) > 0 }) {
		b, err := in.seriesBlock(ph)
		if err != nil {
			return s, err
		}
		s.Blocks = append(s.Blocks, b)
	}
	return s, nil
}

// seriesRate is how a phase's throughput over time is shown: MiB/s when
// it moved data, operations per second otherwise.
func (in *input) seriesRate(name string) (unit string, rate func(report.Sample) float64) {
	for _, r := range in.results {
		if p := r.FindPhase(name); p != nil {
			for _, s := range p.Series {
				if s.Bytes > 0 {
					return string(report.UnitMiBPerSec), func(s report.Sample) float64 { return s.BytesPerSec / float64(units.MiB) }
				}
			}
		}
	}
	return string(report.UnitOpsPerSec), func(s report.Sample) float64 { return s.OpsPerSec }
}

func (in *input) seriesBlock(ph phaseRef) (block, error) {
	b := block{Title: ph.title + " (" + ph.name + ")"}
	unit, rate := in.seriesRate(ph.name)
	maxP99 := 0.0
	in.eachSample(ph.name, func(_ int, s report.Sample) { maxP99 = math.Max(maxP99, s.Latency.P99) })
	lunit, div := latencyScale(maxP99)
	charts := []struct {
		title, y string
		v        func(report.Sample) float64
	}{
		{"Throughput of " + ph.name + " over time", unit, rate},
		{"p99 latency of " + ph.name + " over time", "p99 (" + lunit + ")", func(s report.Sample) float64 { return s.Latency.P99 / div }},
	}
	for _, c := range charts {
		svg, err := in.timeChart(c.title, c.y, ph.name, c.v)
		if err != nil {
			return b, err
		}
		b.Charts = append(b.Charts, svg)
	}
	t := table{Head: []string{"Result", "From (s)", "To (s)", "ops/s", "MiB/s", "p50", "p99", "Max", "Errors"}}
	in.eachSample(ph.name, func(j int, s report.Sample) {
		t.Rows = append(t.Rows, []cell{{Text: in.names[j]},
			{Text: fmtSec(s.Start), Num: true}, {Text: fmtSec(s.Start + s.Seconds), Num: true},
			{Text: strconv.FormatFloat(s.OpsPerSec, 'f', 1, 64), Num: true},
			{Text: strconv.FormatFloat(s.BytesPerSec/float64(units.MiB), 'f', 2, 64), Num: true},
			latCell(s.Latency.P50, s.Latency.Count), latCell(s.Latency.P99, s.Latency.Count), latCell(s.Latency.Max, s.Latency.Count),
			{Text: strconv.FormatInt(s.Errors, 10), Num: true, Class: errClass(s.Errors)}})
	})
	t.Long = len(t.Rows) > 16
	b.Tables = append(b.Tables, t)
	return b, nil
}

func fmtSec(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func latCell(us float64, count int64) cell {
	return numCell(units.FormatLatency(us), count == 0)
}

func errClass(n int64) string {
	if n > 0 {
		return "bad"
	}
	return ""
}

// eachSample calls f with every interval sample of the phase, result by
// result.
func (in *input) eachSample(name string, f func(j int, s report.Sample)) {
	for j, r := range in.results {
		if p := r.FindPhase(name); p != nil {
			for _, s := range p.Series {
				f(j, s)
			}
		}
	}
}

// timeChart draws one line per result: v of each sample at the end of its
// interval.
func (in *input) timeChart(title, yLabel, name string, v func(report.Sample) float64) (template.HTML, error) {
	c := newChart(title, "seconds since the phase began", yLabel)
	c.gridLines(true, true)
	c.p.X.Min, c.p.Y.Min = 0, 0
	for j, r := range in.results {
		ph := r.FindPhase(name)
		if ph == nil || len(ph.Series) == 0 {
			continue
		}
		pts := plotter.XYs{}
		for _, s := range ph.Series {
			pts = append(pts, plotter.XY{X: s.Start + s.Seconds, Y: v(s)})
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return "", fmt.Errorf("chart %s: %w", title, err)
		}
		styleLine(l, j, 0)
		c.add(in.names[j], l)
		if len(pts) < 12 {
			sc, err := plotter.NewScatter(pts)
			if err == nil {
				sc.GlyphStyle.Color = seriesInk(j)
				sc.GlyphStyle.Radius = vg.Points(2.5)
				c.add("", sc)
			}
		}
	}
	return c.render(vg.Points(chartHeight - 40))
}

func (in *input) hostsSection() (section, error) {
	s := section{ID: "hosts", Title: "Per host",
		Intro: "Each host's share of a phase run on many hosts. The phase's own figures are the aggregate from the first host's start to the last host's end; the stonewall rate is the aggregate while every host was still running."}
	for j, r := range in.results {
		for i := range r.Phases {
			p := &r.Phases[i]
			if len(p.Hosts) == 0 {
				continue
			}
			b, err := in.hostBlock(j, p)
			if err != nil {
				return s, err
			}
			s.Blocks = append(s.Blocks, b)
		}
	}
	return s, nil
}

func (in *input) hostBlock(j int, p *report.PhaseResult) (block, error) {
	b := block{Title: fmt.Sprintf("%s: %s (%s)", in.names[j], p.Title, p.Name)}
	b.Notes = append(b.Notes, fmt.Sprintf("Start skew between hosts: %s.", units.FormatLatency(p.StartSkew*1e6)))
	if w := p.Stonewall; w != nil {
		b.Notes = append(b.Notes, fmt.Sprintf("Stonewall (first %.2f s, all hosts running): %s, %.1f ops/s; whole phase: %s, %.1f ops/s.",
			w.Seconds, mibps(w.BytesPerSec), w.OpsPerSec, mibps(p.BytesPerSec), p.OpsPerSec))
	}
	unit, rate := string(report.UnitMiBPerSec), func(h report.HostPhase) float64 { return h.BytesPerSec / float64(units.MiB) }
	if p.Bytes == 0 {
		unit, rate = string(report.UnitOpsPerSec), func(h report.HostPhase) float64 { return h.OpsPerSec }
	}
	rows := make([]phaseRef, len(p.Hosts))
	byAddr := map[string]float64{}
	for i, h := range p.Hosts {
		rows[i] = phaseRef{name: h.Address}
		byAddr[h.Address] = rate(h)
	}
	svg, err := barChart(fmt.Sprintf("%s per host (%s)", p.Name, in.names[j]), unit, in.names[j:j+1], j, rows,
		func(_ int, addr string) float64 { return byAddr[addr] }, nil)
	if err != nil {
		return b, err
	}
	b.Charts = append(b.Charts, svg)
	t := table{Head: []string{"Host", "Ops", "Bytes", "Seconds", "Start offset", "MiB/s", "ops/s", "p50", "p99", "Max", "Errors", "State"}}
	for _, h := range p.Hosts {
		state := cell{Text: "complete"}
		switch {
		case h.Error != "":
			state = cell{Text: h.Error, Class: "bad"}
		case h.Incomplete:
			state = cell{Text: "incomplete", Class: "warn"}
		}
		t.Rows = append(t.Rows, []cell{{Text: h.Address},
			{Text: strconv.FormatInt(h.Ops, 10), Num: true}, {Text: units.FormatBytes(h.Bytes), Num: true},
			{Text: strconv.FormatFloat(h.Seconds, 'f', 2, 64), Num: true}, {Text: units.FormatLatency(h.StartOffset * 1e6), Num: true},
			{Text: strconv.FormatFloat(h.BytesPerSec/float64(units.MiB), 'f', 2, 64), Num: true},
			{Text: strconv.FormatFloat(h.OpsPerSec, 'f', 1, 64), Num: true},
			latCell(h.Latency.P50, h.Latency.Count), latCell(h.Latency.P99, h.Latency.Count), latCell(h.Latency.Max, h.Latency.Count),
			{Text: strconv.FormatInt(h.Errors, 10), Num: true, Class: errClass(h.Errors)}, state})
	}
	b.Tables = append(b.Tables, t)
	return b, nil
}

func mibps(bps float64) string {
	return strconv.FormatFloat(bps/float64(units.MiB), 'f', 2, 64) + " MiB/s"
}
