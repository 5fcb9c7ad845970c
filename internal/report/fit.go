package report

import (
	"io"
	"strings"

	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/tw"
)

// MaxColumns is the widest line a table may take: it fits a terminal of
// 120 columns. Long texts wrap inside their cells to stay within it.
const MaxColumns = 120

// minWrapWidth is the narrowest a wrapped column becomes while that is
// enough; then it goes down to minBrokenWidth, breaking longer words.
const (
	minWrapWidth   = 16
	minBrokenWidth = 8
)

// renderTable renders header and rows as an fsbench table no wider than
// MaxColumns. The columns that wrap gives a priority give up width, the
// highest priority first (the widest first among equals), and their texts
// wrap at spaces inside the cell; a column of priority 0 never wraps.
func renderTable(w io.Writer, header []string, align []tw.Align, rows [][]string, wrap []int) error {
	t := NewTable(w, header, align)
	for _, row := range fitRows(header, rows, wrap, MaxColumns) {
		_ = t.Append(row)
	}
	return t.Render()
}

// fitRows returns rows with the cells of the wrappable columns wrapped so
// that the table of header and rows is at most limit columns wide.
func fitRows(header []string, rows [][]string, wrap []int, limit int) [][]string {
	widths := columnWidths(header, rows)
	natural := append([]int(nil), widths...)
	// A column wraps no narrower than its header and minWrapWidth.
	floor := make([]int, len(header))
	for i, h := range header {
		floor[i] = max(minWrapWidth, cellWidth(h))
	}
	total := sumWidths(widths)
	shrink(widths, floor, wrap, total-limit)
	if over := sumWidths(widths) - limit; over > 0 {
		// Still too wide: the words break, down to the headers' width.
		for i, h := range header {
			floor[i] = max(cellWidth(h), minBrokenWidth)
		}
		shrink(widths, floor, wrap, over)
	}
	out := make([][]string, len(rows))
	for r, row := range rows {
		out[r] = append([]string(nil), row...)
		for i := range out[r] {
			if i < len(widths) && widths[i] < natural[i] {
				out[r][i] = wrapCell(out[r][i], widths[i])
			}
		}
	}
	return out
}

// tableWidth is the width of the table of header and rows, unwrapped.
func tableWidth(header []string, rows [][]string) int {
	return sumWidths(columnWidths(header, rows))
}

// columnWidths are the widths of the columns of header and rows: each
// column's widest cell.
func columnWidths(header []string, rows [][]string) []int {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = cellWidth(h)
	}
	for _, row := range rows {
		for i, c := range row {
			if i < len(widths) {
				widths[i] = max(widths[i], cellWidth(c))
			}
		}
	}
	return widths
}

// sumWidths is the width of a table of columns of widths: each column
// takes its text and a space either side, plus a border.
func sumWidths(widths []int) int {
	total := len(widths) + 1
	for _, wd := range widths {
		total += wd + 2
	}
	return total
}

// shrink takes over columns from the widths of the columns wrap allows,
// none below its floor: from the column of the highest priority first,
// the widest first among equals. It stops when nothing is left to give:
// the numbers are never cut.
func shrink(widths, floor, wrap []int, over int) {
	for ; over > 0; over-- {
		widest := -1
		for i, wd := range widths {
			if i >= len(wrap) || wrap[i] == 0 || wd <= floor[i] {
				continue
			}
			if widest < 0 || wrap[i] > wrap[widest] || (wrap[i] == wrap[widest] && wd > widths[widest]) {
				widest = i
			}
		}
		if widest < 0 {
			return
		}
		widths[widest]--
	}
}

// cellWidth is the display width of a cell's widest line, colours left out.
func cellWidth(s string) int {
	w := 0
	for _, line := range strings.Split(s, "\n") {
		w = max(w, twwidth.Width(line))
	}
	return w
}

// wrapCell wraps s to lines of at most width columns, breaking at spaces
// (inside a word only when the word alone is wider). A cell painted in one
// colour is painted again line by line, so that no colour runs over the
// table's borders.
func wrapCell(s string, width int) string {
	pre, body, post := "", s, ""
	if strings.HasPrefix(s, "\x1b[") && strings.HasSuffix(s, ansiReset) {
		if i := strings.IndexByte(s, 'm'); i > 0 {
			pre, body, post = s[:i+1], s[i+1:len(s)-len(ansiReset)], ansiReset
		}
	}
	var lines []string
	for _, para := range strings.Split(body, "\n") {
		lines = append(lines, wrapText(para, width)...)
	}
	for i, l := range lines {
		lines[i] = pre + l + post
	}
	return strings.Join(lines, "\n")
}

// wrapText wraps one line of plain text greedily at spaces.
func wrapText(s string, width int) []string {
	var lines []string
	line := ""
	for _, word := range strings.Fields(s) {
		for twwidth.Width(word) > width {
			if line != "" {
				lines, line = append(lines, line), ""
			}
			head := twwidth.Truncate(word, width)
			lines = append(lines, head)
			word = word[len(head):]
		}
		switch {
		case line == "":
			line = word
		case twwidth.Width(line)+1+twwidth.Width(word) <= width:
			line += " " + word
		default:
			lines, line = append(lines, line), word
		}
	}
	if line != "" || len(lines) == 0 {
		lines = append(lines, line)
	}
	return lines
}
