package cli

import (
	"context"
	"errors"
	"fmt"
)

// Exit codes of fsbench. Nothing else is ever returned.
const (
	ExitOK          = 0   // success
	ExitRuntime     = 1   // the storage or the run failed
	ExitUsage       = 2   // bad command line or input
	ExitExpectation = 3   // an expectation, functional check or regression check failed
	ExitInterrupted = 130 // Ctrl-C or SIGTERM
)

// UsageError is a mistake on the command line: exit code 2.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// Usagef builds a UsageError.
func Usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// ErrExpectation is wrapped by errors that mean "the run worked, but the
// storage did not meet what was asked of it": exit code 3.
var ErrExpectation = errors.New("expectation failed")

// ErrInterrupted is returned when the run was stopped by a signal.
var ErrInterrupted = errors.New("interrupted")

// RankExit ends a rank other than 0 of a launched run (mpirun, srun, ...)
// with the exit code of the run, which rank 0 decided.
type RankExit struct{ Code int }

func (e *RankExit) Error() string {
	return fmt.Sprintf("the run failed: rank 0 ended it with exit code %d (its output says why)", e.Code)
}

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	var ue *UsageError
	var re *RankExit
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &re):
		return re.Code
	case errors.Is(err, ErrInterrupted), errors.Is(err, context.Canceled):
		return ExitInterrupted
	case errors.As(err, &ue):
		return ExitUsage
	case errors.Is(err, ErrExpectation):
		return ExitExpectation
	}
	return ExitRuntime
}
