package cli

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// RunInterruptible runs one command line as Run does, stopped by the
// signals that arrive on sigs. The first cancels the run's context: the
// command stops its work, cleans up, prints what it measured and returns
// (exit code 130). A second Ctrl-C ends it at once, whatever it is doing,
// with one line naming what it leaves behind and how to remove it; a
// second SIGTERM does not (see interrupts.take).
func RunInterruptible(app *App, args []string, sigs <-chan os.Signal) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- Run(ctx, app, args) }()
	var in interrupts
	for {
		select {
		case code := <-done:
			return code
		case sig := <-sigs:
			switch in.take(sig, time.Now()) {
			case stopRun:
				cancel()
				if app.Left.What() != "" && !app.Globals.Quiet {
					app.progressWrite("fsbench: interrupted: stopping and cleaning up; Ctrl-C again to quit at once\n")
				}
			case remindQuit:
				if app.Left.What() != "" && !app.Globals.Quiet {
					app.progressWrite("fsbench: still stopping and cleaning up; Ctrl-C (SIGINT) quits at once\n")
				}
			case quitNow:
				// Nothing of the run may print after this line: the
				// run goes on until the process exits.
				app.silenceProgress()
				if left := app.Left.What(); left != "" {
					fmt.Fprintf(app.IO.Err, "fsbench: interrupted again: left behind %s\n", left)
				} else {
					fmt.Fprintln(app.IO.Err, "fsbench: interrupted again: nothing left behind")
				}
				return ExitInterrupted
			}
		}
	}
}

// sameSignal is how close two deliveries of one signal come when they
// are one event: coreutils' timeout signals the process and then its
// process group, and a Ctrl-C under it reaches fsbench from the terminal
// and again from timeout, microseconds apart. A person pressing Ctrl-C
// twice on purpose is slower than this.
const sameSignal = 50 * time.Millisecond

// An action is what one signal does to a run.
type action int

const (
	ignore     action = iota // another delivery of a signal already taken
	stopRun                  // the first: stop, clean up, report, exit 130
	remindQuit               // a later SIGTERM: the clean-up goes on
	quitNow                  // a later Ctrl-C: end at once
)

// interrupts tells the signals a run receives apart. The first SIGINT or
// SIGTERM stops the run. A later Ctrl-C is a person who will not wait for
// the clean-up: it ends fsbench at once, leaving what it names. A later
// SIGTERM is not: what sends SIGTERM (a service manager, an orchestrator
// evicting a pod, timeout) asks for a clean stop and escalates with
// SIGKILL, and timeout and group kills deliver one SIGTERM more than once;
// so it lets the clean-up finish and says once how to quit at once.
type interrupts struct {
	first    os.Signal
	firstAt  time.Time
	reminded bool
}

// take returns what sig, arriving at now, does.
func (in *interrupts) take(sig os.Signal, now time.Time) action {
	switch {
	case in.first == nil:
		in.first, in.firstAt = sig, now
		return stopRun
	case sig == in.first && now.Sub(in.firstAt) < sameSignal:
		return ignore
	case sig == syscall.SIGTERM:
		if in.reminded {
			return ignore
		}
		in.reminded = true
		return remindQuit
	}
	return quitNow
}
