package stats

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Format is an output format of `fsbench stats`.
type Format string

// The output formats.
const (
	FormatTable Format = "table" // the dstat-like view: coloured on a terminal, plain lines otherwise
	FormatJSON  Format = "json"  // one JSON object per row (NDJSON)
	FormatCSV   Format = "csv"   // a header and one line per row
)

// ParseFormat checks an -o/--output value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case FormatTable, FormatJSON, FormatCSV:
		return f, nil
	}
	return "", fmt.Errorf("unknown output format %q (want table, json or csv)", s)
}

// Renderer writes rows. Start is called once before the first row.
type Renderer interface {
	Start(sections []*Section) error
	Row(r *Row) error
	// Partial reports whether the renderer shows in-place updates between
	// full rows (Row with r.Partial set).
	Partial() bool
	// Close ends the output (a partial line is finished).
	Close() error
}

// HeaderEvery is how many rows the terminal view prints between headers.
const HeaderEvery = 30

// NewRenderer returns the renderer of a format. tty says whether w is a
// terminal (in-place partial rows, header repeated every HeaderEvery
// rows), color whether it may be coloured.
func NewRenderer(w io.Writer, f Format, tty, color bool) Renderer {
	switch f {
	case FormatJSON:
		return &jsonRenderer{w: w}
	case FormatCSV:
		return &csvRenderer{w: csv.NewWriter(w)}
	}
	return &tableRenderer{w: w, tty: tty, p: painter{on: color && tty}}
}

type tableRenderer struct {
	w          io.Writer
	tty        bool
	p          painter
	sections   []*Section
	rows       int  // full rows since the last header
	needHeader bool // the next row, full or partial, comes after a header
	partial    bool // the cursor is at the end of a partial row
}

func (t *tableRenderer) Start(sections []*Section) error {
	t.sections = sections
	t.needHeader = true
	return nil
}

func (t *tableRenderer) Partial() bool { return t.tty }

// Row writes a full row on its own line, or, on a terminal, a partial row
// over the current line. The header comes first, and on a terminal again
// every HeaderEvery full rows; off a terminal it is written once.
func (t *tableRenderer) Row(r *Row) error {
	if r.Partial && !t.tty {
		return nil
	}
	var b strings.Builder
	if t.partial {
		b.WriteByte('\r')
		t.partial = false
	}
	if t.needHeader {
		h1, h2 := t.p.header(t.sections)
		b.WriteString(h1 + "\n" + h2 + "\n")
		t.needHeader = false
		t.rows = 0
	}
	b.WriteString(t.p.line(r))
	if r.Partial {
		t.partial = true
	} else {
		b.WriteByte('\n')
		t.rows++
		if t.tty && t.rows == HeaderEvery {
			t.needHeader = true
		}
	}
	_, err := io.WriteString(t.w, b.String())
	return err
}

func (t *tableRenderer) Close() error {
	if t.partial {
		t.partial = false
		_, err := io.WriteString(t.w, "\n")
		return err
	}
	return nil
}

// num formats a value for JSON and CSV: at most three decimals.
func num(v float64) string {
	if math.Abs(v) < 1e15 {
		v = math.Round(v*1000) / 1000
	}
	return strconv.FormatFloat(v, 'f', -1, 64)
}

type jsonRenderer struct {
	w io.Writer
}

func (j *jsonRenderer) Start([]*Section) error { return nil }
func (j *jsonRenderer) Partial() bool          { return false }
func (j *jsonRenderer) Close() error           { return nil }

// Row writes {"time":..., "interval_s":..., "sections":{"name":{"field":v}}}
// with sections and fields in schema order; a gap is null.
func (j *jsonRenderer) Row(r *Row) error {
	if r.Partial {
		return nil
	}
	b := bufio.NewWriter(j.w)
	fmt.Fprintf(b, `{"time":%q,"interval_s":%s,"sections":{`, r.End.UTC().Format(time.RFC3339Nano), num(r.Seconds()))
	for i, rs := range r.Sections {
		writeKey(b, i, rs.Section.Name)
		b.WriteByte('{')
		for k, v := range rs.Values {
			writeKey(b, k, v.Col.Field)
			switch {
			case !v.OK:
				b.WriteString("null")
			case v.Col.Kind == WallTime || v.Col.Kind == Text:
				s, _ := json.Marshal(v.S)
				b.Write(s)
			default:
				b.WriteString(num(v.V))
			}
		}
		b.WriteByte('}')
	}
	b.WriteString("}}\n")
	return b.Flush()
}

// writeKey writes the i-th key of a JSON object: the comma that parts it
// from the one before, the quoted name and the colon.
func writeKey(b *bufio.Writer, i int, name string) {
	if i > 0 {
		b.WriteByte(',')
	}
	k, _ := json.Marshal(name)
	b.Write(k)
	b.WriteByte(':')
}

type csvRenderer struct {
	w *csv.Writer
}

func (c *csvRenderer) Partial() bool { return false }

// Start writes the header: time, interval_s, then section.field.
func (c *csvRenderer) Start(sections []*Section) error {
	h := []string{"time", "interval_s"}
	for _, s := range sections {
		for _, col := range s.Columns {
			h = append(h, s.Name+"."+col.Field)
		}
	}
	_ = c.w.Write(h)
	c.w.Flush()
	return c.w.Error()
}

func (c *csvRenderer) Row(r *Row) error {
	if r.Partial {
		return nil
	}
	rec := []string{r.End.UTC().Format(time.RFC3339Nano), num(r.Seconds())}
	for _, rs := range r.Sections {
		for _, v := range rs.Values {
			switch {
			case !v.OK:
				rec = append(rec, "")
			case v.Col.Kind == WallTime || v.Col.Kind == Text:
				rec = append(rec, v.S)
			default:
				rec = append(rec, num(v.V))
			}
		}
	}
	_ = c.w.Write(rec)
	c.w.Flush()
	return c.w.Error()
}

func (c *csvRenderer) Close() error { return nil }
