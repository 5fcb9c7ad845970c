package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/tick"
	"github.com/fsbench/fsbench/internal/workload"
)

// Progress shows how far one phase has got: a bar on a terminal, one plain
// line at the end otherwise (CI logs get no carriage returns or colours).
// Poll is called a few times a second and returns the units done so far;
// the workers never touch the bar themselves. Every bar shows a live rate
// and, when the end is known (a count, or a duration), the percent done
// and the time left. The bar is drawn by progressbar, into a string that
// is written through the App's stderr gate (see progressWrite), so that
// waits, warnings and a second Ctrl-C interleave with it cleanly.
type Progress struct {
	app   *App
	title string
	total atomic.Int64  // units, -1 when unknown
	limit time.Duration // a timed phase's length, else 0
	unit  string
	poll  func() int64
	stop  chan struct{}
	wg    sync.WaitGroup
	t0    time.Time
	live  bool // a bar is drawn on stderr
	// mu serialises the use of bar, which starts no goroutine of its own
	// (no spinner timer): it is drawn only when Progress asks.
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	barMax int64 // the total bar was made for
	width  int   // the bar's columns, fitted to the terminal
	// compact leaves the bar out: the terminal is too narrow for it.
	compact bool
	// final, once the phase has ended, is what its result counts: the
	// units done after the warm-up and their time (see measured).
	final    *metrics.Live
	finalPer int64
	done     int64
	took     time.Duration
	hasFinal bool
	// bare leaves the rate out of the last line: a phase on many hosts,
	// whose rate the table gives over the hosts' own times.
	bare bool
}

// progressEvery is how often a bar is redrawn.
const progressEvery = 200 * time.Millisecond

// barColumns is the widest a bar's [====    ] gets, brackets excluded.
const barColumns = 20

// StartProgress begins showing a phase of total units (-1 when unknown).
func (a *App) StartProgress(title string, total int64, unit string, poll func() int64) *Progress {
	return a.startProgress(title, total, 0, unit, poll, time.Now())
}

// StartTimedProgress begins showing a phase that ends after d: its bar
// counts time, and shows the units done and their rate.
func (a *App) StartTimedProgress(title string, d time.Duration, unit string, poll func() int64) *Progress {
	return a.startProgress(title, -1, d, unit, poll, time.Now())
}

// phaseProgress shows a workload phase: a bar of its units when their
// number is known, else of its time when it runs for a duration (its
// warm-up included, as the count is), else a count with its rate.
func (a *App) phaseProgress(p *workload.FilePhase, total int64, unit string, poll func() int64) *Progress {
	if total < 0 && p.Duration > 0 {
		return a.StartTimedProgress(p.Title, p.Warmup+p.Duration, unit, poll)
	}
	return a.StartProgress(p.Title, total, unit, poll)
}

// startProgress begins showing a phase that began at t0.
func (a *App) startProgress(title string, total int64, limit time.Duration, unit string, poll func() int64, t0 time.Time) *Progress {
	p := &Progress{app: a, title: title, limit: limit, unit: unit, poll: poll,
		stop: make(chan struct{}), t0: t0, width: barColumns}
	p.total.Store(total)
	if a.Globals.Quiet || !a.IO.ErrTTY {
		return p
	}
	p.live = true
	p.bar, p.barMax = p.newBar(barTotal(total)), barTotal(total)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick.Every(progressEvery, p.stop, func() bool {
			p.redraw(p.poll())
			return true
		})
	}()
	return p
}

// from makes Done end with the phase's figures as its result counts
// them, which the engine leaves in l when the phase ends: its operations,
// per units each, after the warm-up, and their time. The last line's rate
// is then the table's (or, where the table shows bytes, its operations').
func (p *Progress) from(l *metrics.Live, per int64) *Progress {
	if p != nil {
		p.final, p.finalPer = l, per
	}
	return p
}

// measured gives Done the phase's figures as its result counts them:
// the units done after the warm-up and their time.
func (p *Progress) measured(done int64, d time.Duration) {
	if p != nil {
		p.done, p.took, p.hasFinal = done, d, true
	}
}

// figures are the count and time the last line shows: the phase's own
// (from, measured) once it has ended, else what the bar counted since it
// began.
func (p *Progress) figures() (int64, time.Duration) {
	switch {
	case p.hasFinal:
		return p.done, p.took
	case p.final != nil && p.final.MeasuredNs.Load() > 0:
		return p.final.Measured.Load() * p.finalPer, time.Duration(p.final.MeasuredNs.Load())
	}
	return p.poll(), time.Since(p.t0)
}

// Done ends the phase's progress display: the bar's last state on a line
// of its own (a terminal), or one plain line with the phase's count, time
// and rate (not a terminal). Whatever comes next starts on a new line.
func (p *Progress) Done() {
	close(p.stop)
	p.wg.Wait()
	if p.app.Globals.Quiet {
		return
	}
	done, d := p.figures()
	if p.live {
		p.app.progressWrite("\r" + p.finalLine(done, d) + "\x1b[K\n")
		return
	}
	var b strings.Builder
	writePlainProgress(&b, p.title, done, p.total.Load(), p.unit, d, !p.bare)
	p.app.progressWrite(b.String())
}

// SetTotal sets the units the phase will do, once known.
func (p *Progress) SetTotal(total int64) { p.total.Store(total) }

// writePlainProgress writes a phase's last line: its count, time and,
// if withRate, rate.
func writePlainProgress(w io.Writer, title string, done, total int64, unit string, d time.Duration, withRate bool) {
	rate := ""
	if s := d.Seconds(); s > 0 && withRate {
		rate = fmt.Sprintf(" (%s %s/s)", formatRate(float64(done)/s), unit)
	}
	switch {
	case total >= 0:
		fmt.Fprintf(w, "%s: %d/%d %s in %.2fs%s\n", title, done, total, unit, d.Seconds(), rate)
	default:
		fmt.Fprintf(w, "%s: %d %s in %.2fs%s\n", title, done, unit, d.Seconds(), rate)
	}
}

// barTheme draws [=====>    ]: plain ASCII, as a log or an old terminal
// shows it.
var barTheme = progressbar.Theme{Saucer: "=", SaucerHead: ">", SaucerPadding: " ", BarStart: "[", BarEnd: "]"}

// unknownSpan is what a bar of an unknown end counts up to: the library
// counts such a bar modulo its width, given at its making; counting
// modulo this instead keeps the count whole, so that the bar can take a
// total learnt later (ChangeMax64) and show its percent at once.
const unknownSpan = 1 << 62

// layout is how the bar's line is laid out on the terminal: the title in
// a column of its own and a bar of p.width columns, or, on a terminal too
// narrow for them, compact: the title, the percent and the figures.
func (p *Progress) layout() []progressbar.Option {
	if p.compact {
		return []progressbar.Option{progressbar.OptionSetDescription(p.title + ":"),
			progressbar.OptionSetTheme(progressbar.Theme{}), progressbar.OptionSetWidth(0)}
	}
	return []progressbar.Option{progressbar.OptionSetDescription(fmt.Sprintf("%-18s", p.title+":")),
		progressbar.OptionSetTheme(barTheme), progressbar.OptionSetWidth(p.width)}
}

// barOptions are what every bar of a phase is drawn with: into no writer
// (Progress writes the line drawn, see fitted), no colours, no spinner
// timer, laid out as p.layout says.
func (p *Progress) barOptions() []progressbar.Option {
	return append([]progressbar.Option{
		progressbar.OptionSetWriter(io.Discard),
		progressbar.OptionSetSpinnerChangeInterval(0),
		progressbar.OptionSetPredictTime(false),
	}, p.layout()...)
}

// applyLayout lays b out as p.layout says.
func (p *Progress) applyLayout(b *progressbar.ProgressBar) {
	for _, o := range p.layout() {
		o(b)
	}
}

// timed reports whether the bar counts time: a phase with a length and
// no count known.
func (p *Progress) timed(total int64) bool { return p.limit > 0 && total < 0 }

// newBar makes the live bar of a phase of total units, its clock started:
// a bar of the units with their count, rate and [elapsed:left] when total
// is known; of time (milliseconds, one more than the phase's, so that it
// never ends on its own) when the phase is timed; else a spinner with
// the count, rate and [elapsed].
func (p *Progress) newBar(total int64) *progressbar.ProgressBar {
	opts := append(p.barOptions(), progressbar.OptionSetPredictTime(true))
	var b *progressbar.ProgressBar
	switch {
	case p.timed(total):
		b = progressbar.NewOptions64(p.limit.Milliseconds()+1, opts...)
	case total > 0:
		b = progressbar.NewOptions64(total, append(opts, p.countOptions()...)...)
	default:
		opts = append(opts, p.countOptions()...)
		b = progressbar.NewOptions64(-1, append(opts, progressbar.OptionSetWidth(unknownSpan),
			progressbar.OptionShowTotalBytes(false))...)
		p.applyLayout(b)
	}
	b.StartWithoutRender()
	return b
}

// countOptions show the units done and their rate.
func (p *Progress) countOptions() []progressbar.Option {
	return []progressbar.Option{progressbar.OptionShowCount(), progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(p.unit)}
}

// barTotal is the total a bar is made for: -1 when there is no bar of
// units to draw.
func barTotal(total int64) int64 {
	if total <= 0 {
		return -1
	}
	return total
}

// redraw draws the bar with done units. A total learnt since the bar was
// made (many hosts) turns its spinner into a bar.
func (p *Progress) redraw(done int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch total := barTotal(p.total.Load()); {
	case total == p.barMax:
	case p.barMax < 0 && total > 0 && p.limit == 0:
		progressbar.OptionShowTotalBytes(true)(p.bar)
		p.bar.ChangeMax64(total)
		p.barMax = total
	default:
		p.bar, p.barMax = p.newBar(total), total
	}
	p.applyLayout(p.bar)
	suffix := ""
	if p.timed(p.barMax) {
		elapsed := time.Since(p.t0)
		_ = p.bar.Set64(min(elapsed.Milliseconds(), p.limit.Milliseconds()))
		_ = p.bar.RenderBlank() // the time left changes, if not the percent
		suffix = fmt.Sprintf(" (%d, %s %s/s)", done, formatRate(float64(done)/max(elapsed.Seconds(), 1e-3)), p.unit)
	} else {
		_ = p.bar.Set64(done)
	}
	line := p.fitted(func(again bool) string {
		if again {
			p.applyLayout(p.bar)
			_ = p.bar.RenderBlank()
		}
		return drawn(p.bar) + suffix
	})
	if line != suffix {
		p.app.progressWrite("\r" + line + "\x1b[K")
	}
}

// finalLine is the bar's last state: full once the phase is over (or as
// far as it got when interrupted), then the phase's own figures, as its
// result counts them, and the time it took.
func (p *Progress) finalLine(done int64, d time.Duration) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	total := p.total.Load()
	max, at := total, min(done, total)
	if total <= 0 {
		max, at = 1, 1 // timed, empty or of an unknown end: over
	}
	// As the library writes them: the count, then the rate with its
	// unit; the unit after the count when there is no rate.
	count := fmt.Sprint(done)
	if total >= 0 {
		count = fmt.Sprintf("%d/%d", done, total)
	}
	if s := d.Seconds(); s > 0 && !p.bare {
		count += fmt.Sprintf(", %s %s/s", formatRate(float64(done)/s), p.unit)
	} else {
		count += " " + p.unit
	}
	suffix := fmt.Sprintf(" (%s) in %s", count, formatClock(d))
	return p.fitted(func(bool) string {
		// A bar that has ended draws no more: it is made anew to change.
		b := progressbar.NewOptions64(max, p.barOptions()...)
		_ = b.Set64(at)
		return drawn(b) + suffix
	})
}

// fitted is the line draw draws, fitted to the terminal's width: a line
// too wide is drawn again (draw(true)) with a narrower bar, then with
// none; one that leaves room widens the bar the next time; a line still
// too wide is cut.
func (p *Progress) fitted(draw func(again bool) string) string {
	cols := p.app.IO.cols()
	line := draw(false)
	for p.fit(utf8.RuneCountInString(line), cols) {
		line = draw(true)
	}
	return fitLine(line, cols)
}

// fit changes the layout for a line of n columns on a terminal of cols,
// and reports whether the line was too wide and is to be drawn again.
func (p *Progress) fit(n, cols int) bool {
	over := n - (cols - 1)
	switch {
	case over > 0 && !p.compact && p.width > 1:
		p.width = max(1, p.width-over)
	case over > 0 && !p.compact:
		p.compact = true
	case over < 0 && !p.compact:
		p.width = min(barColumns, p.width-over)
		return false
	default:
		return false
	}
	return true
}

// drawn is the line b last drew, without the carriage return and the
// spaces the library leaves around what it leaves out.
func drawn(b *progressbar.ProgressBar) string {
	if b.String() == "" {
		_ = b.RenderBlank() // a bar at 0% is drawn only when asked
	}
	s := strings.TrimRight(strings.TrimPrefix(b.String(), "\r"), " ")
	return strings.ReplaceAll(s, "]  [", "] [")
}

// fitLine cuts s to width columns (the lines are ASCII).
func fitLine(s string, width int) string {
	if width > 1 && len(s) > width-1 {
		return s[:width-1]
	}
	return s
}

// formatRate prints a rate with three significant digits or so.
func formatRate(r float64) string {
	switch {
	case r >= 100:
		return fmt.Sprintf("%.0f", r)
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

// formatClock prints a duration as 42s, 3m05s or 1h02m.
func formatClock(d time.Duration) string {
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, (s%3600)/60)
}
