package cli

import (
	"context"
	"fmt"
	"os"
)

// RunInterruptible runs one command line as Run does, stopped by the
// signals that arrive on sigs. The first cancels the run's context: the
// command stops its work, cleans up, prints what it measured and returns
// (exit code 130). The second ends it at once, whatever it is doing, with
// one line naming what it leaves behind and how to remove it.
func RunInterruptible(app *App, args []string, sigs <-chan os.Signal) int {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int, 1)
	go func() { done <- Run(ctx, app, args) }()
	for {
		select {
		case code := <-done:
			return code
		case <-sigs:
			if ctx.Err() == nil {
				cancel()
				if app.Left.What() != "" && !app.Globals.Quiet {
					fmt.Fprintln(app.IO.Err, "fsbench: interrupted: stopping and cleaning up; interrupt again to quit at once")
				}
				continue
			}
			if left := app.Left.What(); left != "" {
				fmt.Fprintf(app.IO.Err, "fsbench: interrupted again: left behind %s\n", left)
			} else {
				fmt.Fprintln(app.IO.Err, "fsbench: interrupted again: nothing left behind")
			}
			return ExitInterrupted
		}
	}
}
