package history

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
)

// HTMLOptions tune the trend page.
type HTMLOptions struct {
	ShowOptions
	// ResultLink is the link of a run's whole result, from its key in
	// the store ("" for none: a store the page cannot reach).
	ResultLink func(key string) string
}

// chart geometry, in SVG user units.
const (
	chartW, chartH = 760.0, 180.0
	padL, padR     = 70.0, 10.0
	padT, padB     = 12.0, 24.0
)

type pointView struct {
	X, Y  float64
	Title string
	Href  string
}

type lineView struct{ X1, Y1, X2, Y2 float64 }

type markView struct {
	X     float64
	Label string
}

type chartView struct {
	Figure, Summary string
	Points          []pointView
	Path            string
	Medians         []lineView
	Marks           []markView
	Changes         []string
	YTop, YBottom   string
}

type seriesView struct {
	ID, Key, Runs string
	Charts        []chartView
}

// trendTmpl is the trend section: every series' charts in a div of class
// trend, with its own style, so that the history's page and the report's
// both draw it.
var trendTmpl = template.Must(template.New("trend").Parse(`<div class="trend">
<style>
.trend h3{font-size:1.05em;margin-top:1.5em} .trend .key{opacity:.75;font-size:.9em}
.trend svg{display:block;max-width:100%;height:auto;margin:.5em 0;background:rgba(127,127,127,.06);border:1px solid rgba(127,127,127,.35)}
.trend .pt{fill:#2166ac} .trend .pt:hover{fill:#b2182b} .trend .line{fill:none;stroke:#92c5de;stroke-width:1}
.trend .med{stroke:currentColor;stroke-width:1.5} .trend .cp{stroke:#d6604d;stroke-dasharray:4 3;stroke-width:1.5}
.trend .cpl{fill:#d6604d;font-size:11px} .trend .ax{fill:currentColor;opacity:.75;font-size:11px} .trend ul{font-size:.9em}
@media (prefers-color-scheme:dark){.trend .pt{fill:#6baed6}}
</style>
<p>Each run is a point (hover for its run, date, label and value; a click opens its result);
the flat lines are each segment's median; dashed red lines are change points (E-Divisive with means).</p>
{{range .}}<h3>Series {{.ID}}</h3><p class="key">{{.Key}} &middot; {{.Runs}}</p>
{{range .Charts}}<h4>{{.Figure}}</h4><p class="key">{{.Summary}}</p>
<svg class="trendchart" viewBox="0 0 760 180" width="760" height="180" role="img" aria-label="{{.Figure}}">
<text class="ax" x="4" y="20">{{.YTop}}</text><text class="ax" x="4" y="156">{{.YBottom}}</text>
<path class="line" d="{{.Path}}"/>
{{range .Medians}}<line class="med" x1="{{.X1}}" y1="{{.Y1}}" x2="{{.X2}}" y2="{{.Y2}}"/>{{end}}
{{range .Marks}}<line class="cp" x1="{{.X}}" y1="12" x2="{{.X}}" y2="156"/><text class="cpl" x="{{.X}}" y="172">{{.Label}}</text>{{end}}
{{range .Points}}{{if .Href}}<a href="{{.Href}}">{{end}}<circle class="pt" cx="{{.X}}" cy="{{.Y}}" r="3"><title>{{.Title}}</title></circle>{{if .Href}}</a>{{end}}{{end}}
</svg>
{{if .Changes}}<ul>{{range .Changes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{end}}{{end}}</div>
`))

var pageTmpl = template.Must(template.Must(trendTmpl.Clone()).New("page").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>fsbench history</title>
<style>body{font-family:system-ui,sans-serif;margin:1.5em;color:#222}</style></head><body>
<h1>fsbench history</h1>
{{template "trend" .}}
</body></html>
`))

// WriteHTML writes a self-contained trend page of every series: each
// figure a chart with every run as a point, segment medians and change
// points marked, and each point linked to its run's result.
func WriteHTML(w io.Writer, all []*Series, o HTMLOptions) error {
	return pageTmpl.Execute(w, views(all, o))
}

// WriteTrend writes the trend charts of every series as an HTML fragment
// (a div of class trend, with its style) for another page to hold: the
// report's trend section.
func WriteTrend(w io.Writer, all []*Series, o HTMLOptions) error {
	return trendTmpl.Execute(w, views(all, o))
}

func views(all []*Series, o HTMLOptions) []seriesView {
	var views []seriesView
	for _, s := range all {
		sv := seriesView{ID: s.ID, Key: s.Key.String(), Runs: fmt.Sprintf("%d runs", len(s.Entries))}
		for _, name := range s.FigureNames() {
			sv.Charts = append(sv.Charts, chart(s, Analyse(s, name, o.Change), o))
		}
		views = append(views, sv)
	}
	return views
}

// chart draws one figure's analysis, its last o.Last runs.
func chart(s *Series, a Analysis, o HTMLOptions) chartView {
	from := 0
	if o.Last > 0 && len(a.Values) > o.Last {
		from = len(a.Values) - o.Last
	}
	v := a.Values[from:]
	lo, hi := v[0], v[0]
	for _, x := range v {
		lo, hi = math.Min(lo, x), math.Max(hi, x)
	}
	if hi == lo {
		lo, hi = lo*0.9, hi*1.1+1e-9
	}
	x := func(i int) float64 {
		return padL + (chartW-padL-padR)*(float64(i)+0.5)/float64(len(v))
	}
	y := func(val float64) float64 {
		return round1(padT + (chartH-padT-padB)*(hi-val)/(hi-lo))
	}
	c := chartView{Figure: a.Figure, YTop: FormatValue(hi, a.Unit), YBottom: FormatValue(lo, a.Unit),
		Summary: fmt.Sprintf("median %s over %d runs, %d change %s", FormatValue(median(v), a.Unit), len(v), len(a.Changes), plural(len(a.Changes), "point"))}
	var path strings.Builder
	for i, val := range v {
		e := s.Entries[a.Entries[from+i]]
		p := pointView{X: round1(x(i)), Y: y(val), Title: fmt.Sprintf("run %d, %s%s: %s", from+i+1,
			e.StartedAt.Format("2006-01-02 15:04"), labelNote(e), FormatValue(val, a.Unit))}
		if o.ResultLink != nil {
			p.Href = o.ResultLink(e.Result)
		}
		c.Points = append(c.Points, p)
		fmt.Fprintf(&path, "%s%.1f %.1f", map[bool]string{true: "M", false: " L"}[i == 0], p.X, p.Y)
	}
	c.Path = path.String()
	bounds := []int{0}
	for _, ch := range a.Changes {
		c.Changes = append(c.Changes, ch.describe(a.Figure, a.Unit))
		if ch.Index > from {
			c.Marks = append(c.Marks, markView{X: round1(x(ch.Index-from) - (x(1)-x(0))/2), Label: fmt.Sprintf("run %d: %+.1f%%", ch.Run, ch.Shift)})
			bounds = append(bounds, ch.Index-from)
		}
	}
	bounds = append(bounds, len(v))
	for i := 0; i+1 < len(bounds); i++ {
		m := y(median(v[bounds[i]:bounds[i+1]]))
		c.Medians = append(c.Medians, lineView{X1: round1(x(bounds[i]) - 3), Y1: m, X2: round1(x(bounds[i+1]-1) + 3), Y2: m})
	}
	return c
}

func round1(v float64) float64 { return math.Round(v*10) / 10 }
