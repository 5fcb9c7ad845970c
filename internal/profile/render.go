package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/olekukonko/tablewriter/tw"

	"github.com/fsbench/fsbench/internal/report"
)

// Columns of the table, as JuiceFS's profile names them, plus errors and
// percentiles.
var Columns = []string{"Operation", "Count", "Average(us)", "Total(us)", "Percent(%)", "Errors", "P50(us)", "P99(us)", "Max(us)"}

// ANSI sequences of the terminal display.
const (
	clearScreen = "\x1b[H\x1b[2J"
	ansiTitle   = "\x1b[1;32m"
	ansiDim     = "\x1b[2m"
	ansiReset   = "\x1b[0m"
)

type display struct {
	out io.Writer
	o   *Options
	buf bytes.Buffer
}

func newDisplay(out io.Writer, o *Options) *display { return &display{out: out, o: o} }

// render writes one window: a JSON line, a block of text, or (on a
// terminal) a whole screen, in one write so that redraws do not flicker.
func (r *display) render(w *Window) error {
	r.buf.Reset()
	if r.o.JSON {
		if err := json.NewEncoder(&r.buf).Encode(w); err != nil {
			return err
		}
	} else {
		if r.o.Terminal {
			r.buf.WriteString(clearScreen)
		}
		if err := WriteTable(&r.buf, w, r.o); err != nil {
			return err
		}
		if r.o.Terminal && w.Mode == ModeReplay && !w.Last && r.o.Speed > 0 && r.o.Pause != nil {
			r.buf.WriteString(r.dim("[Enter] pause/continue") + "\n")
		}
		if !r.o.Terminal {
			r.buf.WriteByte('\n')
		}
	}
	_, err := r.out.Write(r.buf.Bytes())
	if err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// waiting shows, on a terminal, that a live profile has started.
func (r *display) waiting(t time.Time) error {
	if r.o.JSON {
		return nil
	}
	r.buf.Reset()
	r.buf.WriteString(clearScreen)
	r.buf.WriteString(r.title(title(r.o.Source, ModeLive, r.o.Interval, false)) + "\n")
	fmt.Fprintf(&r.buf, "Started %s; the first window comes in %s.\n", t.Format("15:04:05"), r.o.Interval)
	_, err := r.out.Write(r.buf.Bytes())
	return err
}

// paused tells a terminal that the replay waits for Enter.
func (r *display) paused() error {
	if r.o.JSON || !r.o.Terminal {
		return nil
	}
	_, err := io.WriteString(r.out, r.title("Paused. Press Enter to continue.")+"\n")
	return err
}

func (r *display) title(s string) string {
	if r.o.Color {
		return ansiTitle + s + ansiReset
	}
	return s
}

func (r *display) dim(s string) string {
	if r.o.Color {
		return ansiDim + s + ansiReset
	}
	return s
}

func title(source, mode string, interval time.Duration, last bool) string {
	s := "fsbench profile: " + source + " ("
	switch mode {
	case ModeLive:
		s += "live, every " + secs(interval.Seconds())
	case ModeReplay:
		s += "replay, " + secs(interval.Seconds()) + " windows"
		if last {
			s += ", done"
		}
	default:
		s += "summary"
	}
	return s + ")"
}

func secs(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " s" }

// WriteTable writes a window as a header and a table: plain text, no
// escape sequences unless o.Color.
func WriteTable(out io.Writer, w *Window, o *Options) error {
	hdr := title(w.Source, w.Mode, o.Interval, w.Last)
	if w.Interrupted {
		hdr = strings.TrimSuffix(hdr, ")") + ", interrupted)"
	}
	if o.Color {
		hdr = ansiTitle + hdr + ansiReset
	}
	fmt.Fprintln(out, hdr)
	label := "Window"
	if w.Mode == ModeSummary {
		label = "Span"
	}
	if w.Start.IsZero() {
		fmt.Fprintf(out, "%s: no entries\n", label)
	} else {
		endLayout := "2006-01-02 15:04:05.000"
		if w.Start.YearDay() == w.End.YearDay() && w.Start.Year() == w.End.Year() {
			endLayout = "15:04:05.000"
		}
		fmt.Fprintf(out, "%s: %s to %s (%.3f s)\n", label, w.Start.Format("2006-01-02 15:04:05.000"), w.End.Format(endLayout), w.Seconds)
	}
	fmt.Fprintf(out, "Lines: %d read, %d counted, %d filtered out, %s\n", w.Lines, w.Entries, w.Filtered, skippedText(w))

	align := []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}
	t := report.NewTable(out, Columns, align)
	f0 := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	for _, s := range w.Operations {
		if err := t.Append([]string{
			s.Op, strconv.FormatInt(s.Count, 10), f0(s.AvgUs), f0(s.TotalUs),
			strconv.FormatFloat(s.Percent, 'f', 1, 64), strconv.FormatInt(s.Errors, 10),
			f0(s.P50Us), f0(s.P99Us), f0(s.MaxUs),
		}); err != nil {
			return err
		}
	}
	return t.Render()
}

func skippedText(w *Window) string {
	s := w.Skipped
	var parts []string
	for _, p := range []struct {
		n    int64
		what string
	}{{s.Malformed, "malformed"}, {s.NotUTF8, "not UTF-8"}, {s.KeepAlive, "keep-alive"}, {s.Blank, "blank"}} {
		if p.n > 0 {
			parts = append(parts, strconv.FormatInt(p.n, 10)+" "+p.what)
		}
	}
	out := strconv.FormatInt(s.Total(), 10) + " skipped"
	if len(parts) > 0 {
		out += " (" + strings.Join(parts, ", ") + ")"
	}
	if w.Mode != ModeSummary && w.SkippedTotal > s.Total() {
		out += ", " + strconv.FormatInt(w.SkippedTotal, 10) + " since the start"
	}
	return out
}
