package bench

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/leftover"
	"github.com/fsbench/fsbench/internal/workload"
)

// created tells the hooks that the run's directory exists.
func (o *Options) created(dir string) {
	if o.Hooks.Created != nil {
		o.Hooks.Created(leftover.Dir(dir))
	}
}

// ownDir is the run's own directory, with a handle on the directory that
// holds it. It is removed through that handle, so it is found even when
// its path no longer leads to it: a file system lazily unmounted, a PATH
// renamed during the run.
type ownDir struct {
	path   string // absolute
	name   string // in parent
	parent *os.Root
}

// makeOwn creates the run's own directory: Options.RunDir when given (a
// host's directory in a run on many hosts; it must not exist), else a new
// name under abs.
func (o *Options) makeOwn(abs string) (*ownDir, error) {
	if o.RunDir == "" {
		return makeOwnDir(abs)
	}
	parent, name := filepath.Split(filepath.Clean(o.RunDir))
	root, err := os.OpenRoot(parent)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", parent, unwrapPath(err))
	}
	if err := root.Mkdir(name, 0o755); err != nil {
		root.Close()
		return nil, fmt.Errorf("create benchmark directory %s: %w", o.RunDir, unwrapPath(err))
	}
	return &ownDir{path: filepath.Clean(o.RunDir), name: name, parent: root}, nil
}

// makeOwnDir creates the run's own directory in parent: a new name that
// cannot clash with anything already there.
func makeOwnDir(parent string) (*ownDir, error) {
	root, err := os.OpenRoot(parent)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", parent, unwrapPath(err))
	}
	host, _ := os.Hostname()
	for range 10 {
		var b [6]byte
		_, _ = rand.Read(b[:])
		name := fmt.Sprintf("fsbench-%s-%d-%s", leftover.Label(host, "-.", '_', 32), os.Getpid(), hex.EncodeToString(b[:]))
		err := root.Mkdir(name, 0o755)
		if err == nil {
			return &ownDir{path: filepath.Join(parent, name), name: name, parent: root}, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			root.Close()
			return nil, fmt.Errorf("create benchmark directory in %s: %w", parent, unwrapPath(err))
		}
	}
	root.Close()
	return nil, fmt.Errorf("create benchmark directory in %s: no free name", parent)
}

// removeOwn removes the run's directory at the end of a run (unless Keep)
// and tells the hooks. What someone else removed first is gone: not an
// error.
func (o *Options) removeOwn(d *ownDir, warn func(string, ...any)) {
	defer d.parent.Close()
	if o.Keep {
		warn("keeping benchmark files in %s (--keep)", d.path)
		return
	}
	if err := d.remove(o.Tracer, o.wait); err != nil {
		warn("clean up %s: %v; left behind: %s", d.path, unwrapPath(err), leftover.Dir(d.path))
		return
	}
	if o.Hooks.Removed != nil {
		o.Hooks.Removed()
	}
}

// remove deletes the run directory and what is in it. It only ever
// touches the directory the run created; names are listed, not guessed.
func (d *ownDir) remove(tracer workload.Tracer, wait func(string) func()) error {
	entries, err := d.list()
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer wait(cleanupWhat(entries, d.path))()
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
func (d *ownDir) list() ([]entry, error) {
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

// vanished reports whether the run's directory no longer exists.
func vanished(dir string) bool {
	_, err := os.Lstat(dir)
	return errors.Is(err, fs.ErrNotExist)
}

// explainVanished says so when a phase failed because the run's directory
// is gone: the file system was unmounted or the directory deleted during
// the run. Other errors are returned as they are.
func explainVanished(dir string, err error) error {
	var e *Error
	if !errors.As(err, &e) || !vanished(dir) {
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
	what := "cleaning up " + countNoun(files, "file")
	if trees > 0 {
		what += " and " + countNoun(trees, "directory tree")
	}
	return what + " in " + path
}

// countNoun is n and noun, in the plural unless n is 1, with thousands
// separated: "1 file", "12,000 files".
func countNoun(n int, noun string) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n != 1 {
		noun += "s"
	}
	return s + " " + noun
}
