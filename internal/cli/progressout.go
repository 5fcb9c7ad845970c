package cli

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"
)

// stderrGate serialises what a run writes to stderr while it runs (bars,
// named waits, warnings, interval lines), and falls silent for good once
// fsbench quits at once on a second Ctrl-C: nothing is printed after the
// line that names what was left behind.
type stderrGate struct {
	mu     sync.Mutex
	silent bool
	open   bool // a bar or a wait is drawn with no newline after it yet
}

// progressWrite writes s to stderr unless the run has been silenced. A
// bar's redraw starts with "\r" and leaves the line open; anything else
// first ends an open line's drawing, so that it starts on a line of its own.
func (a *App) progressWrite(s string) {
	g := &a.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.silent {
		return
	}
	if g.open && !strings.HasPrefix(s, "\r") {
		s = "\r\x1b[K" + s
	}
	fmt.Fprint(a.IO.Err, s)
	g.open = !strings.HasSuffix(s, "\n")
}

// silenceProgress stops every later write of progressWrite, and ends a
// line left open by a bar. It returns once no write is under way.
func (a *App) silenceProgress() {
	g := &a.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		fmt.Fprintln(a.IO.Err)
		g.open = false
	}
	g.silent = true
}

// Wait names a wait on stderr (flushing, dropping caches, cleaning up N
// files) as it begins, and returns the function that ends it. On a
// terminal the line stays open and gets the time the wait took; in a log
// the name is a line of its own when the wait begins, so that a log that
// stops says what fsbench was waiting for.
func (a *App) Wait(what string) (done func()) {
	if a.Globals.Quiet {
		return func() {}
	}
	t0 := time.Now()
	if !a.IO.ErrTTY {
		a.progressWrite(what + "...\n")
		return func() {}
	}
	// Room for " done in 99.9s" after it, on one line of the terminal.
	what = shorten(what, a.IO.cols()-1-len("... done in 99.9s"))
	a.progressWrite("\r" + what + "...")
	var once sync.Once
	return func() {
		once.Do(func() { a.progressWrite("\r" + waitDoneLine(what, time.Since(t0)) + "\n") })
	}
}

// waitDoneLine is a wait's line on a terminal once it is over.
func waitDoneLine(what string, d time.Duration) string {
	return fmt.Sprintf("%s... done in %.1fs\x1b[K", what, d.Seconds())
}

// shorten cuts the middle of s, most often a path, so that it takes at
// most n columns: its start says what, its end which.
func shorten(s string, n int) string {
	if len(s) <= n || n < 20 {
		return s
	}
	keep := n - len("...")
	return s[:keep/2] + "..." + s[len(s)-(keep-keep/2):]
}

// cols is the width output is drawn to: the terminal's, or 80.
func (io IO) cols() int {
	if io.Cols > 0 {
		return io.Cols
	}
	return 80
}

// termCols is the width of the first of fs that is a terminal, or 0.
func termCols(fs ...*os.File) int {
	for _, f := range fs {
		if w, _, err := term.GetSize(int(f.Fd())); err == nil && w > 0 {
			return w
		}
	}
	return 0
}
