package stats

import (
	"strconv"
	"strings"
)

// ANSI colours, numbered as in `juicefs stats`.
const (
	black = 30 + iota
	red
	green
	yellow
	blue
	magenta
	cyan
	white
)

const (
	resetSeq     = "\x1b[0m"
	colorSeq     = "\x1b[1;" // bold
	colorDarkSeq = "\x1b[0;" // normal: partial rows
	underlineSeq = "\x1b[4m"
)

// painter colours text, or does nothing when colour is off.
type painter struct{ on bool }

func (p painter) paint(s string, color int, dark, underline bool) string {
	if !p.on || strings.TrimSpace(s) == "" {
		return s
	}
	var b strings.Builder
	if underline {
		b.WriteString(underlineSeq)
	}
	if dark {
		b.WriteString(colorDarkSeq)
	} else {
		b.WriteString(colorSeq)
	}
	b.WriteString(strconv.Itoa(color))
	b.WriteByte('m')
	b.WriteString(s)
	b.WriteString(resetSeq)
	return b.String()
}

// cell formats one value for the terminal view, exactly Col.width()
// characters wide (before colour codes).
func (p painter) cell(v Value, dark bool) string {
	c := v.Col
	w := c.width()
	if !v.OK {
		return p.paint(pad("-", w), black, false, false)
	}
	switch c.Unit {
	case Bytes:
		return p.number(v.V, dark, true, w)
	case Count:
		return p.number(v.V, dark, false, w)
	case Millis:
		return p.millis(v.V, dark, w)
	case Percent:
		return p.percent(v.V, dark, w)
	case Time:
		return p.paint(pad(v.S, w), white, dark, false)
	default:
		s := v.S
		if len(s) > w {
			s = s[:w]
		}
		return p.paint(pad(s, w), white, dark, false)
	}
}

// pad right-aligns s in w characters.
func pad(s string, w int) string {
	if len(s) >= w {
		return s
	}
	return strings.Repeat(" ", w-len(s)) + s
}

// number prints four digits and a unit letter (1024-based, as JuiceFS),
// coloured by magnitude.
func (p painter) number(v float64, dark, isByte bool, w int) string {
	if v <= 0 {
		return p.paint(pad("0 ", w), black, false, false)
	}
	vi := uint64(v + 0.5)
	if v >= 1<<63 {
		vi = 1<<63 - 1
	}
	var unit string
	var color int
	switch {
	case vi < 10000:
		unit, color = " ", red
		if isByte {
			unit = "B"
		}
	case vi>>10 < 10000:
		vi, unit, color = vi>>10, "K", yellow
	case vi>>20 < 10000:
		vi, unit, color = vi>>20, "M", green
	case vi>>30 < 10000:
		vi, unit, color = vi>>30, "G", blue
	case vi>>40 < 10000:
		vi, unit, color = vi>>40, "T", magenta
	default:
		vi, unit, color = vi>>50, "P", cyan
	}
	return p.paint(pad(strconv.FormatUint(vi, 10), w-1), color, dark, false) + p.paint(unit, black, false, false)
}

// millis prints a latency in milliseconds, green below 10, yellow below
// 100, red above.
func (p painter) millis(v float64, dark bool, w int) string {
	var s string
	var color int
	switch {
	case v <= 0:
		return p.paint(pad("0 ", w), black, false, false)
	case v < 10:
		s, color = strconv.FormatFloat(v, 'f', 2, 64)+" ", green
	case v < 100:
		s, color = strconv.FormatFloat(v, 'f', 1, 64)+" ", yellow
	case v < 10000:
		s, color = strconv.FormatFloat(v, 'f', 0, 64)+" ", red
	default:
		s, color = strconv.FormatFloat(v, 'e', 0, 64), magenta
		s = strings.Replace(s, "e+0", "e", 1)
	}
	return p.paint(pad(s, w), color, dark, false)
}

// percent prints a percentage: green below 30, yellow below 100, red
// above (more than one core busy).
func (p painter) percent(v float64, dark bool, w int) string {
	var s string
	var color int
	switch {
	case v <= 0:
		s, color = "0.0", white
	case v < 30:
		s, color = strconv.FormatFloat(v, 'f', 1, 64), green
	case v < 100:
		s, color = strconv.FormatFloat(v, 'f', 1, 64), yellow
	default:
		s, color = strconv.FormatFloat(v, 'f', 0, 64), red
	}
	return p.paint(pad(s, w-1), color, dark, false) + p.paint("%", black, false, false)
}

// sectionWidth is the characters a section takes in a row.
func sectionWidth(s *Section) int {
	w := 0
	for i, c := range s.Columns {
		if i > 0 {
			w++
		}
		w += c.width()
	}
	return w
}

// header returns the two header lines: section names centred in dashes,
// and the column nicks.
func (p painter) header(sections []*Section) (string, string) {
	names := make([]string, len(sections))
	nicks := make([]string, len(sections))
	sep := p.paint("|", blue, true, false)
	for i, s := range sections {
		w := sectionWidth(s)
		name := s.Name
		if len(name) > w {
			name = name[:w]
		}
		d := w - len(name)
		names[i] = p.paint(strings.Repeat("-", d/2)+name+strings.Repeat("-", d-d/2), blue, true, false)
		ns := make([]string, len(s.Columns))
		for j, c := range s.Columns {
			n := c.Nick
			if len(n) > c.width() {
				n = n[:c.width()]
			}
			ns[j] = p.paint(pad(n, c.width()), blue, false, true)
		}
		nicks[i] = strings.Join(ns, " ")
	}
	return strings.Join(names, " "), strings.Join(nicks, sep)
}

// line formats a row's values.
func (p painter) line(r *Row) string {
	parts := make([]string, len(r.Sections))
	for i, rs := range r.Sections {
		cells := make([]string, len(rs.Values))
		for j, v := range rs.Values {
			cells[j] = p.cell(v, r.Partial)
		}
		parts[i] = strings.Join(cells, " ")
	}
	return strings.Join(parts, p.paint("|", blue, true, false))
}
