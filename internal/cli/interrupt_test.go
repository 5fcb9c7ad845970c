package cli

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestInterruptRules: what each signal does after the first. One signal
// delivered twice within sameSignal (timeout signals the process and its
// group) is one interrupt; a later Ctrl-C quits at once; a later SIGTERM
// never does, and is answered once.
func TestInterruptRules(t *testing.T) {
	const (
		INT  = syscall.SIGINT
		TERM = syscall.SIGTERM
	)
	type step struct {
		sig  os.Signal
		at   time.Duration
		want action
	}
	soon, later := sameSignal/10, 3*sameSignal
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"Ctrl-C", []step{{INT, 0, stopRun}}},
		{"SIGTERM", []step{{TERM, 0, stopRun}}},
		{"SIGTERM to process and group", []step{{TERM, 0, stopRun}, {TERM, soon, ignore}}},
		{"Ctrl-C to process and group", []step{{INT, 0, stopRun}, {INT, soon, ignore}, {INT, soon, ignore}}},
		{"Ctrl-C twice", []step{{INT, 0, stopRun}, {INT, later, quitNow}}},
		{"Ctrl-C delivered twice, then pressed again", []step{{INT, 0, stopRun}, {INT, soon, ignore}, {INT, later, quitNow}}},
		{"SIGTERM twice", []step{{TERM, 0, stopRun}, {TERM, later, remindQuit}, {TERM, 2 * later, ignore}}},
		{"SIGTERM, then Ctrl-C", []step{{TERM, 0, stopRun}, {INT, soon, quitNow}}},
		{"SIGTERM answered, then Ctrl-C", []step{{TERM, 0, stopRun}, {TERM, later, remindQuit}, {INT, 2 * later, quitNow}}},
		{"Ctrl-C, then SIGTERM", []step{{INT, 0, stopRun}, {TERM, later, remindQuit}}},
	} {
		var in interrupts
		t0 := time.Now()
		for i, s := range c.steps {
			if got := in.take(s.sig, t0.Add(s.at)); got != s.want {
				t.Errorf("%s: signal %d (%v at %v): action %d, want %d", c.name, i+1, s.sig, s.at, got, s.want)
			}
		}
	}
}
