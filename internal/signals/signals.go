// Package signals catches SIGINT and SIGTERM from the start of the
// process. Initialising fsbench's packages takes tens of milliseconds
// (hundreds on a loaded machine), and a SIGTERM in that time, left to the
// runtime, ended the process at once with status 143 instead of the
// clean stop (130) it gets later. This package needs nothing but
// os/signal, so it is initialised among the first.
//
// It may import nothing but os, os/signal and syscall, so that it is
// initialised before anything slow.
package signals

import (
	"os"
	"os/signal"
	"syscall"
)

// C receives the process's SIGINTs and SIGTERMs, from its start.
var C = make(chan os.Signal, 2)

// ReadyEnv, set to 1, makes the process say on stderr when C catches
// the signals: the moment from which a test may signal it.
const ReadyEnv = "FSBENCH_SIGNALS_READY"

func init() {
	signal.Notify(C, os.Interrupt, syscall.SIGTERM)
	if os.Getenv(ReadyEnv) == "1" {
		os.Stderr.WriteString("fsbench: signals caught\n")
	}
}
