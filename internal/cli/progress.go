package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/tick"
	"github.com/fsbench/fsbench/internal/workload"
)

// Progress shows how far one phase has got: a bar on a terminal, one plain
// line at the end otherwise (CI logs get no carriage returns or colours).
// Poll is called a few times a second and returns the units done so far;
// the workers never touch the bar themselves. Every bar shows a live rate
// and, when the end is known (a count, or a duration), the percent done
// and the time left.
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
	rate  rateWindow
	live  bool // a bar is drawn on stderr
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
		stop: make(chan struct{}), t0: t0}
	p.total.Store(total)
	if a.Globals.Quiet || !a.IO.ErrTTY {
		return p
	}
	p.live = true
	p.rate.add(p.t0, 0)
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		tick.Every(progressEvery, p.stop, func() bool {
			now := time.Now()
			done := p.poll()
			p.rate.add(now, done)
			a.progressWrite("\r" + p.line(done, now.Sub(p.t0), p.rate.rate()) + "\x1b[K")
			return true
		})
	}()
	return p
}

// line is the bar as it stands.
func (p *Progress) line(done int64, elapsed time.Duration, rate float64) string {
	return progressLine{Title: p.title, Done: done, Total: p.total.Load(), Limit: p.limit, Unit: p.unit,
		Elapsed: elapsed, Rate: rate, Width: p.app.IO.cols()}.String()
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
	avg := 0.0
	if d > 0 {
		avg = float64(done) / d.Seconds()
	}
	if p.live {
		l := progressLine{Title: p.title, Done: done, Total: p.total.Load(), Limit: p.limit, Unit: p.unit,
			Elapsed: d, Rate: avg, Width: p.app.IO.cols(), Final: true, Bare: p.bare}
		p.app.progressWrite("\r" + l.String() + "\x1b[K\n")
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

// progressLine is one state of a bar, drawn by String: a pure function of
// its fields, so that what a terminal shows is tested as text.
type progressLine struct {
	Title   string
	Done    int64
	Total   int64         // -1: unknown
	Limit   time.Duration // a timed phase's length, else 0
	Unit    string
	Elapsed time.Duration
	Rate    float64 // units per second, recent
	Width   int     // the terminal's columns
	Final   bool    // the phase is over: no time left to show
	Bare    bool    // final, without the rate (many hosts)
}

// String draws the line within Width columns: title, a bar with percent
// when the end is known, the count, the rate and the time left (or the
// time taken, once final).
func (l progressLine) String() string {
	frac := -1.0
	switch {
	case l.Total > 0:
		frac = float64(l.Done) / float64(l.Total)
	case l.Total == 0:
		frac = 1
	case l.Limit > 0:
		frac = l.Elapsed.Seconds() / l.Limit.Seconds()
	}
	if frac > 1 || (l.Final && frac >= 0 && l.Total < 0) {
		frac = 1 // a timed phase that ended is complete, whatever its clock says
	}
	count := fmt.Sprintf("%d %s", l.Done, l.Unit)
	if l.Total >= 0 {
		count = fmt.Sprintf("%d/%d %s", l.Done, l.Total, l.Unit)
	}
	rate := fmt.Sprintf("  %s/s  %s", formatRate(l.Rate), l.timeText(frac))
	if l.Bare && l.Final {
		rate = "  " + l.timeText(frac)
	}
	head := fmt.Sprintf("%-18s", l.Title+":")
	if frac < 0 {
		return fitLine(head+"  "+count+rate, l.Width)
	}
	pct := fmt.Sprintf(" %3.0f%%", 100*frac)
	tail := pct + "  " + count + rate
	// The bar takes what room the text leaves, up to 20 columns; on a
	// narrow terminal it goes first, then the count.
	if room := l.Width - 1 - len(head) - len(tail) - 3; room >= 8 {
		n := min(room, 20)
		fill := int(frac * float64(n))
		return head + " [" + strings.Repeat("=", fill) + strings.Repeat(" ", n-fill) + "]" + tail
	}
	if len(head)+len(tail) < l.Width {
		return head + tail
	}
	return fitLine(head+pct+rate, l.Width)
}

// timeText is the time left (ETA) while the phase runs, the time taken
// once it is over, or the time so far when the end is unknown.
func (l progressLine) timeText(frac float64) string {
	switch {
	case l.Final:
		return "in " + formatClock(l.Elapsed)
	case l.Limit > 0 && l.Total < 0:
		return "ETA " + formatClock(max(l.Limit-l.Elapsed, 0))
	case frac >= 0 && l.Rate > 0:
		left := float64(l.Total-l.Done) / l.Rate
		return "ETA " + formatClock(time.Duration(left*float64(time.Second)))
	case frac >= 0:
		return "ETA -"
	}
	return formatClock(l.Elapsed)
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

// rateWindow keeps the last few seconds of (time, count) samples: the
// rate a bar shows is over them, so it follows the phase as it speeds up
// or slows down.
type rateWindow struct {
	t []time.Time
	n []int64
}

const rateSamples = 16 // about 3 s at progressEvery

func (w *rateWindow) add(t time.Time, n int64) {
	w.t = append(w.t, t)
	w.n = append(w.n, n)
	if len(w.t) > rateSamples {
		w.t, w.n = w.t[1:], w.n[1:]
	}
}

func (w *rateWindow) rate() float64 {
	if len(w.t) < 2 {
		return 0
	}
	d := w.t[len(w.t)-1].Sub(w.t[0]).Seconds()
	if d <= 0 {
		return 0
	}
	return float64(w.n[len(w.n)-1]-w.n[0]) / d
}
