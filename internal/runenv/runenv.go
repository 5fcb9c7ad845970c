// Package runenv is what every benchmark built on workload.Runner needs
// around its phases: the check of the target directory, the run's own
// directory under it and its removal, the cache drops before reads, the
// callbacks that show a run's progress, and the error naming the phase a
// run failed in. bench, checkpoint, train, replay and io500 share it.
//
// It removes nothing but the run's own directory, and runs no phase itself
// (workload.Runner does).
package runenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/workload"
)

// Cache-drop modes of --drop-caches.
const (
	DropAuto   = "auto"
	DropAlways = "always"
	DropNever  = "never"
)

// ValidDropCaches checks a --drop-caches mode.
func ValidDropCaches(mode string) bool {
	return mode == DropAuto || mode == DropAlways || mode == DropNever
}

// Options are what the run's directory and cache drops are made of.
type Options struct {
	// RunDir is the run's own directory, made by MakeRunDir (it must not
	// exist), instead of a new name under the target: a host's directory
	// in a run on many hosts.
	RunDir string
	// Keep leaves the run's directory in place at the end.
	Keep bool
	// DropCaches is auto, always or never.
	DropCaches string
	// SkipDropCaches is SKIP_DROP_CACHES=true: no cache dropping at all.
	SkipDropCaches bool
	// Tracer, if set, is told of the run directory's creation and removal.
	Tracer workload.Tracer
	Hooks  Hooks
}

// Hooks are the run's callbacks to its caller.
type Hooks struct {
	// PhaseStart is called at the start of each measured phase, once its
	// workers are set up and just before its clock starts (a host's
	// barrier), with the number of progress units (blocks or files) it
	// will do; PhaseEnd after it.
	PhaseStart func(e *workload.Runner, p *workload.FilePhase, total int64)
	PhaseEnd   func(e *workload.Runner, p *workload.FilePhase)
	// Started is called once the run's runner exists, before any phase, and
	// Finished after the last phase (also on failure).
	Started  func(e *workload.Runner, dir string)
	Finished func(e *workload.Runner)
	// Created is called once the run's own directory exists, with a phrase
	// that names it and says how to remove it (package leftover); Removed
	// once it is gone. In between, a process that ends abruptly leaves it
	// behind.
	Created func(left string)
	Removed func()
	Warn    func(msg string)
	// Wait is called as the run begins to wait on the storage between
	// phases, with what it waits for ("flushing and dropping caches",
	// "cleaning up 12,000 files in DIR"); it returns the function called
	// when the wait is over.
	Wait func(what string) (done func())
	// Interval is called at the end of each interval of a workload phase
	// with an interval set, from a goroutine of the engine's.
	Interval func(p *workload.FilePhase, s report.Sample)
}

// Waiting tells the Wait hook that the run waits for what, and returns the
// function that ends the wait.
func (h *Hooks) Waiting(what string) func() {
	if h.Wait == nil {
		return func() {}
	}
	return h.Wait(what)
}

// Error is a failure of the run, naming the phase it happened in.
type Error struct {
	Phase string
	Err   error
}

func (e *Error) Error() string {
	msg := e.Err.Error()
	if strings.HasPrefix(msg, e.Phase+": ") {
		return msg // the engine names the phase already
	}
	return e.Phase + ": " + msg
}
func (e *Error) Unwrap() error { return e.Err }

// ErrBadInput is wrapped by errors the user fixes by changing the command
// line: options out of range, a PATH that is not a directory.
var ErrBadInput = errors.New("bad input")

type badInput struct{ err error }

func (b *badInput) Error() string   { return b.err.Error() }
func (b *badInput) Unwrap() []error { return []error{ErrBadInput, b.err} }

// BadInput marks err as the user's to fix: it wraps ErrBadInput.
func BadInput(err error) error { return &badInput{err} }

// OpenTarget checks that path is a writable directory, records where it
// lives in res.Target and returns its absolute path.
func OpenTarget(path string, res *report.Result) (string, error) {
	abs, _, _, err := OpenTargetMount(path, res)
	return abs, err
}

// OpenTargetMount is OpenTarget that also returns the target's mount (ok
// is false when the mount table could not be read).
func OpenTargetMount(path string, res *report.Result) (abs string, mnt sysio.Mount, ok bool, err error) {
	abs, mnt, ok, err = OpenDir(path, res)
	if err == nil && ok && mnt.ReadOnly() {
		return "", mnt, true, &Error{"prepare", fmt.Errorf("path %s is on a read-only mount (%s, type %s)", abs, mnt.MountPoint, mnt.FSType)}
	}
	return abs, mnt, ok, err
}

// OpenDir checks that path is a directory, on any mount (read-only ones
// too), records where it lives in res.Target and returns its absolute path
// and its mount (ok is false when the mount table could not be read).
func OpenDir(path string, res *report.Result) (abs string, mnt sysio.Mount, ok bool, err error) {
	abs, err = filepath.Abs(path)
	if err != nil {
		return "", mnt, false, &Error{"prepare", err}
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", mnt, false, &Error{"prepare", fmt.Errorf("path %s: %w", abs, sysio.PathCause(err))}
	case !st.IsDir():
		return "", mnt, false, &Error{"prepare", &badInput{fmt.Errorf("path %s is not a directory", abs)}}
	}
	mnt, merr := sysio.FindMount(abs)
	res.Target = report.Target{Path: abs}
	if merr != nil {
		return abs, mnt, false, nil
	}
	res.Target.FSType, res.Target.MountPoint, res.Target.MountSource, res.Target.MountOptions = mnt.FSType, mnt.MountPoint, mnt.Source, mnt.Options
	return abs, mnt, true, nil
}
