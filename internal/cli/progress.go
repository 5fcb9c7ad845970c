package cli

import (
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/fsbench/fsbench/internal/tick"
)

// Progress shows how far one phase has got: a bar on a terminal, one plain
// line at the end otherwise (CI logs get no carriage returns or colours).
// Poll is called a few times a second and returns the units done so far;
// the workers never touch the bar themselves.
type Progress struct {
	app   *App
	title string
	total int64
	unit  string
	poll  func() int64
	bar   *progressbar.ProgressBar
	stop  chan struct{}
	wg    sync.WaitGroup
	t0    time.Time
}

// StartProgress begins showing a phase. total may be -1 when unknown.
func (a *App) StartProgress(title string, total int64, unit string, poll func() int64) *Progress {
	p := &Progress{app: a, title: title, total: total, unit: unit, poll: poll, stop: make(chan struct{}), t0: time.Now()}
	if a.Globals.Quiet {
		return p
	}
	if a.IO.ErrTTY {
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(a.IO.Err),
			progressbar.OptionSetDescription(fmt.Sprintf("%-18s", title+":")),
			progressbar.OptionShowCount(),
			progressbar.OptionSetWidth(40),
			progressbar.OptionThrottle(100 * time.Millisecond),
			progressbar.OptionShowElapsedTimeOnFinish(),
			progressbar.OptionSetPredictTime(false),
			progressbar.OptionEnableColorCodes(a.Color(true)),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(a.IO.Err) }),
		}
		p.bar = progressbar.NewOptions64(total, opts...)
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			tick.Every(200*time.Millisecond, p.stop, func() bool {
				_ = p.bar.Set64(p.poll())
				return true
			})
		}()
	}
	return p
}

// Done ends the phase's progress display.
func (p *Progress) Done() {
	close(p.stop)
	p.wg.Wait()
	if p.app.Globals.Quiet {
		return
	}
	done := p.poll()
	if p.bar != nil {
		_ = p.bar.Set64(done)
		if done < p.total || p.total < 0 {
			_ = p.bar.Exit()
			fmt.Fprintln(p.app.IO.Err)
		}
		return
	}
	writePlainProgress(p.app.IO.Err, p.title, done, p.total, p.unit, time.Since(p.t0))
}

func writePlainProgress(w io.Writer, title string, done, total int64, unit string, d time.Duration) {
	if total >= 0 {
		fmt.Fprintf(w, "%s: %d/%d %s in %.2fs\n", title, done, total, unit, d.Seconds())
	} else {
		fmt.Fprintf(w, "%s: %d %s in %.2fs\n", title, done, unit, d.Seconds())
	}
}
