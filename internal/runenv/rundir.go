package runenv

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/leftover"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// RunDir is the run's own directory, with a handle on the directory that
// holds it. It is removed through that handle, so it is found even when
// its path no longer leads to it: a file system lazily unmounted, a PATH
// renamed during the run.
type RunDir struct {
	path   string // absolute
	name   string // in parent
	parent *os.Root
	o      Options
}

// MakeRunDir creates the run's own directory under abs (o.RunDir when set,
// which must not exist), tells o.Tracer and o.Hooks.Created. Of o it uses
// RunDir, Keep, Tracer and Hooks.
func MakeRunDir(o Options, abs string) (*RunDir, error) {
	d, err := makeOwn(o.RunDir, abs)
	if err != nil {
		return nil, &Error{"prepare", err}
	}
	d.o = o
	if o.Tracer != nil {
		o.Tracer.Trace(-1, workload.Event{Op: "mkdir", Path: d.path, Start: time.Now()})
	}
	if o.Hooks.Created != nil {
		o.Hooks.Created(leftover.Dir(d.path))
	}
	return d, nil
}

// Path is the directory's absolute path.
func (d *RunDir) Path() string { return d.path }

// Close keeps the directory and releases its handle, instead of Remove.
func (d *RunDir) Close() { d.parent.Close() }

// makeOwn creates the run's own directory: runDir when given (a host's
// directory in a run on many hosts; it must not exist), else a new name
// under abs.
func makeOwn(runDir, abs string) (*RunDir, error) {
	if runDir == "" {
		return makeOwnDir(abs)
	}
	parent, name := filepath.Split(filepath.Clean(runDir))
	root, err := os.OpenRoot(parent)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", parent, sysio.PathCause(err))
	}
	if err := root.Mkdir(name, 0o755); err != nil {
		root.Close()
		return nil, fmt.Errorf("create benchmark directory %s: %w", runDir, sysio.PathCause(err))
	}
	return &RunDir{path: filepath.Clean(runDir), name: name, parent: root}, nil
}

// makeOwnDir creates the run's own directory in parent: a new name that
// cannot clash with anything already there.
func makeOwnDir(parent string) (*RunDir, error) {
	root, err := os.OpenRoot(parent)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", parent, sysio.PathCause(err))
	}
	host, _ := os.Hostname()
	for range 10 {
		var b [6]byte
		_, _ = rand.Read(b[:])
		name := fmt.Sprintf("fsbench-%s-%d-%s", leftover.Label(host, "-.", '_', 32), os.Getpid(), hex.EncodeToString(b[:]))
		err := root.Mkdir(name, 0o755)
		if err == nil {
			return &RunDir{path: filepath.Join(parent, name), name: name, parent: root}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			root.Close()
			return nil, fmt.Errorf("create benchmark directory in %s: %w", parent, sysio.PathCause(err))
		}
	}
	root.Close()
	return nil, fmt.Errorf("create benchmark directory in %s: no free name", parent)
}

// Remove deletes the directory and what is in it at the end of a run
// (unless Keep), warning about what it could not remove, and tells
// o.Hooks.Removed. What someone else removed first is gone: not an error.
func (d *RunDir) Remove(warn func(string, ...any)) {
	defer d.parent.Close()
	if d.o.Keep {
		warn("keeping benchmark files in %s (--keep)", d.path)
		return
	}
	if err := d.remove(d.o.Tracer, d.o.Hooks.Waiting); err != nil {
		warn("clean up %s: %v; left behind: %s", d.path, sysio.PathCause(err), leftover.Dir(d.path))
		return
	}
	if d.o.Hooks.Removed != nil {
		d.o.Hooks.Removed()
	}
}

// remove deletes the run directory and what is in it. It only ever
// touches the directory the run created; names are listed, not guessed.
func (d *RunDir) remove(tracer workload.Tracer, wait func(string) func()) error {
	entries, err := d.list()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(entries) > 0 { // an empty directory goes at once: no wait to name
		defer wait(cleanupWhat(entries, d.path))()
	}
	var firstErr error
	note := func(op, name string, fn func(string) error) {
		t0 := time.Now()
		err := fn(name)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil // removed by someone else: gone is gone
		}
		if tracer != nil {
			tracer.Trace(-1, workload.Event{Op: op, Path: filepath.Join(d.path, strings.TrimPrefix(name, d.name)), Start: t0, Dur: time.Since(t0), Err: err})
		}
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for _, e := range entries {
		if e.dir {
			note("rmdir", d.name+"/"+e.name, d.parent.RemoveAll) // a job's tree
		} else {
			note("unlink", d.name+"/"+e.name, d.parent.Remove)
		}
	}
	note("rmdir", d.name, d.parent.Remove)
	return firstErr
}

// entry is a name in the run's directory.
type entry struct {
	name string
	dir  bool
}

// list reads the run's directory a batch at a time and keeps only each
// name and whether it is a directory: a DirEntry read through an os.Root
// holds the entry's FileInfo, some 300 bytes, and the small-file phases
// leave one file per thread and file there (25,600 at -p 256).
func (d *RunDir) list() ([]entry, error) {
	f, err := d.parent.Open(d.name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []entry
	for {
		batch, err := f.ReadDir(1024)
		for _, e := range batch {
			out = append(out, entry{e.Name(), e.IsDir()})
		}
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// Vanished reports whether the run's directory no longer exists.
func Vanished(dir string) bool {
	_, err := os.Lstat(dir)
	return errors.Is(err, fs.ErrNotExist)
}

// ExplainVanished says so when a phase failed because the run's directory
// is gone: the file system was unmounted or the directory deleted during
// the run. Other errors are returned as they are.
func ExplainVanished(dir string, err error) error {
	var e *Error
	if !errors.As(err, &e) || !Vanished(dir) {
		return err
	}
	cause := strings.TrimPrefix(e.Err.Error(), e.Phase+": ")
	return &Error{e.Phase, &vanishedError{fmt.Sprintf("the benchmark directory %s vanished during the run (unmounted or deleted?): %s", dir, cause), e.Err}}
}

type vanishedError struct {
	msg string
	err error
}

func (v *vanishedError) Error() string { return v.msg }
func (v *vanishedError) Unwrap() error { return v.err }

// cleanupWhat names the removal of a run's directory: how many files
// (and trees) it holds, which on a remote file system takes a while.
func cleanupWhat(entries []entry, path string) string {
	files, trees := 0, 0
	for _, e := range entries {
		if e.dir {
			trees++
		} else {
			files++
		}
	}
	what := "cleaning up " + units.CountGrouped(files, "file")
	if trees > 0 {
		what += " and " + units.CountGrouped(trees, "directory tree")
	}
	return what + " in " + path
}
