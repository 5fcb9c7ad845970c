package htmlreport

import (
	"bytes"
	"fmt"
	"html/template"
	"image/color"
	"regexp"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Charts are drawn with stand-in colours that are replaced in the SVG text
// by CSS variables, so that the page's style sheet decides the real colours
// for light and dark screens and for print. Each stand-in is a colour no
// chart would use otherwise.
var (
	inkFG   = color.RGBA{R: 1, G: 2, B: 3, A: 255} // axes, ticks, text
	inkGrid = color.RGBA{R: 1, G: 2, B: 4, A: 255} // grid lines
	inkCard = color.RGBA{R: 1, G: 2, B: 5, A: 255} // the background of a chart's box
)

// paletteSize is the number of series colours (Okabe-Ito without black,
// which is the foreground); more series reuse them with other dashes.
const paletteSize = 7

// seriesInk is the stand-in colour of series i.
func seriesInk(i int) color.Color {
	return color.RGBA{R: 1, G: 3, B: uint8(i % paletteSize), A: 255}
}

// inkVars maps each stand-in, as vgsvg writes it, to its CSS variable.
var inkVars = func() map[string]string {
	m := map[string]string{hexInk(inkFG): "var(--fg)", hexInk(inkGrid): "var(--grid)", hexInk(inkCard): "var(--card)"}
	for i := 0; i < paletteSize; i++ {
		m[hexInk(seriesInk(i))] = fmt.Sprintf("var(--c%d)", i)
	}
	return m
}()

func hexInk(c color.Color) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// dashes are the line patterns of series, so that lines differ in print
// and for readers who cannot tell the colours apart.
var dashes = [][]vg.Length{
	nil,
	{vg.Points(6), vg.Points(3)},
	{vg.Points(2), vg.Points(2)},
	{vg.Points(8), vg.Points(3), vg.Points(2), vg.Points(3)},
}

// Chart geometry, in SVG user units (the page scales the SVG to its box).
const (
	chartWidth  = 520
	chartHeight = 300
	fontSize    = 13
)

// chart is a plot in the report's style with a legend of its own, drawn
// below the plot so that it never hides data.
type chart struct {
	p      *plot.Plot
	title  string
	legend []legendEntry
}

// legendEntry is one line of a chart's legend.
type legendEntry struct {
	label string
	thumb plot.Thumbnailer
}

// newChart returns an empty chart in the report's style: transparent
// background, sans-serif text in the foreground colour, numeric axes with
// plain tick labels.
func newChart(title, xLabel, yLabel string) *chart {
	p := plot.New()
	p.BackgroundColor = nil
	p.Title.Text = title
	p.X.Label.Text = xLabel
	p.Y.Label.Text = yLabel
	for _, s := range []*text.Style{&p.Title.TextStyle, &p.X.Label.TextStyle, &p.Y.Label.TextStyle,
		&p.X.Tick.Label, &p.Y.Tick.Label, &p.Legend.TextStyle} {
		size := vg.Length(fontSize)
		switch s {
		case &p.Title.TextStyle:
			size++
		case &p.X.Tick.Label, &p.Y.Tick.Label:
			size--
		}
		s.Font = font.From(font.Font{Typeface: "Liberation", Variant: "Sans"}, size)
		s.Color = inkFG
	}
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.LineStyle.Color = inkFG
		a.Tick.LineStyle.Color = inkFG
		a.Tick.Marker = niceTicks{}
	}
	p.Title.Padding = vg.Points(8)
	return &chart{p: p, title: title}
}

// add draws x on the chart and lists it in the legend under label.
func (c *chart) add(label string, x interface {
	plot.Plotter
	plot.Thumbnailer
}) {
	c.p.Add(x)
	if label != "" {
		c.legend = append(c.legend, legendEntry{label, x})
	}
}

// Legend geometry, in SVG user units.
const (
	legendRow   = fontSize + 6
	legendThumb = 22
	legendGap   = 14
)

// legendLayout places the legend's entries in rows across the chart's
// width; it returns each entry's position from the top left and the
// legend's height.
func (c *chart) legendLayout() ([]vg.Point, vg.Length) {
	sty := c.p.Legend.TextStyle
	var pts []vg.Point
	x, y := vg.Length(8), vg.Length(0)
	for i, e := range c.legend {
		w := legendThumb + 4 + sty.Width(e.label)
		if i > 0 && x+w > chartWidth-8 {
			x, y = 8, y+legendRow
		}
		pts = append(pts, vg.Point{X: x, Y: y})
		x += w + legendGap
	}
	if len(pts) == 0 {
		return nil, 0
	}
	return pts, y + legendRow + 6
}

// render draws the chart with a plot area h high, its legend beneath.
func (c *chart) render(h vg.Length) (template.HTML, error) {
	pos, lh := c.legendLayout()
	cv := vgsvg.New(vg.Points(chartWidth), h+lh)
	dc := draw.New(cv)
	c.p.Draw(draw.Crop(dc, 0, -16, lh, 0)) // room for the last tick label
	sty := c.p.Legend.TextStyle
	sty.XAlign, sty.YAlign = draw.XLeft, draw.YCenter
	for i, e := range c.legend {
		mid := lh - 6 - pos[i].Y - legendRow/2
		box := draw.Canvas{Canvas: dc.Canvas, Rectangle: vg.Rectangle{
			Min: vg.Point{X: pos[i].X, Y: mid - 4}, Max: vg.Point{X: pos[i].X + legendThumb, Y: mid + 4}}}
		e.thumb.Thumbnail(&box)
		dc.FillText(sty, vg.Point{X: pos[i].X + legendThumb + 4, Y: mid}, e.label)
	}
	return svgElement(cv, c.title)
}

// gridLines draws a light grid behind the data.
func (c *chart) gridLines(vertical, horizontal bool) {
	g := newGrid()
	if !vertical {
		g.Vertical.Color = nil
	}
	if !horizontal {
		g.Horizontal.Color = nil
	}
	c.p.Add(g)
}

// svgHeader matches what vgsvg writes before the first drawing command.
var svgHeader = regexp.MustCompile(`(?s)^<\?xml[^>]*>\s*<!--[^>]*-->\s*<svg width="[^"]*" height="[^"]*" viewBox="([^"]*)"[^>]*>`)

// svgElement returns the SVG element of a drawn canvas to put in the page:
// no XML prologue, no fixed size (CSS sizes it from the viewBox), an
// accessible title, and colours from the style sheet.
func svgElement(c *vgsvg.Canvas, title string) (template.HTML, error) {
	var b bytes.Buffer
	if _, err := c.WriteTo(&b); err != nil {
		return "", fmt.Errorf("draw chart %q: %w", title, err)
	}
	s := b.String()
	m := svgHeader.FindStringSubmatchIndex(s)
	if m == nil {
		return "", fmt.Errorf("draw chart %q: unexpected SVG header", title)
	}
	head := fmt.Sprintf(`<svg class="chart" viewBox="%s" role="img" aria-label="%s"><title>%s</title>`,
		s[m[2]:m[3]], template.HTMLEscapeString(title), template.HTMLEscapeString(title))
	s = head + s[m[1]:]
	s = inkPattern.ReplaceAllStringFunc(s, func(hex string) string {
		if v, ok := inkVars[hex]; ok {
			return v
		}
		return hex
	})
	s = strings.ReplaceAll(s, "font-family:Liberation Sans;", "")
	return template.HTML(s), nil
}

var inkPattern = regexp.MustCompile(`#0[0-9A-F]0[0-9A-F]0[0-9A-F]`)

func newGrid() *plotter.Grid {
	g := plotter.NewGrid()
	g.Vertical.Color = inkGrid
	g.Horizontal.Color = inkGrid
	g.Vertical.Width = vg.Points(0.5)
	g.Horizontal.Width = vg.Points(0.5)
	return g
}
