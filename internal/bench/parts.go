package bench

import (
	"github.com/fsbench/fsbench/internal/report"
)

// The parts of a run that other benchmarks built on the workload engine
// share with bench: the target check, the run's own directory and the
// cache drops before reads.

// OpenTarget checks that path is a writable directory, records where it
// lives in res.Target and returns its absolute path.
func OpenTarget(path string, res *report.Result) (string, error) {
	abs, _, _, err := openTarget(path, res)
	return abs, err
}

// RunDir is a run's own directory, made by MakeRunDir.
type RunDir struct {
	own *ownDir
	o   Options
}

// MakeRunDir creates the run's own directory under abs (o.RunDir when set,
// which must not exist) and tells o.Hooks.Created. Of o it uses RunDir,
// Keep, Tracer and Hooks.
func MakeRunDir(o Options, abs string) (*RunDir, error) {
	own, err := o.makeOwn(abs)
	if err != nil {
		return nil, &Error{"prepare", err}
	}
	o.created(own.path)
	return &RunDir{own: own, o: o}, nil
}

// Path is the directory's absolute path.
func (d *RunDir) Path() string { return d.own.path }

// Remove deletes the directory and what is in it (unless Keep), warning
// about what it could not remove, and tells o.Hooks.Removed.
func (d *RunDir) Remove(warn func(string, ...any)) { d.o.removeOwn(d.own, warn) }

// Close keeps the directory and releases its handle, instead of Remove.
func (d *RunDir) Close() { d.own.parent.Close() }

// Dropper drops the kernel's caches before read phases, as bench does: all
// caches as root, else the given files' pages.
type Dropper struct{ d *dropper }

// NewDropper makes the dropper of o.DropCaches and o.SkipDropCaches; root
// says whether the process may drop all caches.
func NewDropper(o Options, root bool, warn func(string, ...any)) *Dropper {
	return &Dropper{newDropper(o, root, warn)}
}

// Drop drops the caches before the named phase, which reads files.
func (d *Dropper) Drop(phase string, files []string) { d.d.drop(phase, files) }

// Method is how caches are dropped: drop_caches, fadvise or none.
func (d *Dropper) Method() string { return d.d.method }

// ValidDropCaches checks a --drop-caches mode.
func ValidDropCaches(mode string) bool {
	return mode == DropAuto || mode == DropAlways || mode == DropNever
}
