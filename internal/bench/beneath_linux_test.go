package bench

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/workload"
)

// A directory of the tree bench --read-existing reads flips between
// itself and a link to a directory outside the tree while runs list and
// read the tree: nothing outside is ever opened, listed or read.
func TestReadExistingStaysBeneath(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	d, alt := filepath.Join(dir, "d"), filepath.Join(dir, "alt")
	for _, p := range []string{d, filepath.Join(outside, "sub")} {
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 8 {
		for _, p := range []string{filepath.Join(d, fmt.Sprint("f", i)), filepath.Join(outside, fmt.Sprint("f", i)), filepath.Join(outside, "sub", fmt.Sprint("g", i))} {
			if err := os.WriteFile(p, []byte(p), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "top"), []byte("top"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, alt); err != nil {
		t.Fatal(err)
	}
	opened, openedSub := testenv.WatchOpens(t, outside), testenv.WatchOpens(t, filepath.Join(outside, "sub"))
	stop := testenv.Flip(t, d, alt)
	for range 30 {
		o := existingOptions(dir)
		o.Threads = 2
		_ = RunExisting(context.Background(), o, &report.Result{})
	}
	stop()
	opened()
	openedSub()
}

// A kept tree (tree.dir) of a run on an agent, whose PATH the agent
// pinned: the tree is made and reused beneath PATH, and a tree directory
// swapped for a link to an fsbench tree outside PATH is refused before
// anything there is opened.
func TestPinnedTreeStaysBeneath(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	src := `tree: {dir: keep, depth: 1, width: 2, files: 2, file_size: 4K}
phases:
  - {name: read, op: read, xfer_size: 4K, duration: 50ms}
  - {name: stat, op: stat, duration: 50ms}
`
	run := func(path string, pinned bool) (*report.Result, error) {
		o := jobOptions(path)
		if pinned {
			o.PinnedPath = path
		}
		res := &report.Result{}
		return res, RunJob(context.Background(), o, parseJob(t, src), res)
	}
	// Made, then reused, beneath the pinned PATH.
	for i := range 2 {
		res, err := run(dir, true)
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
		if reused := strings.Contains(strings.Join(res.Warnings, "\n"), "reusing the tree in "+filepath.Join(dir, "keep")); reused != (i == 1) {
			t.Errorf("run %d: warnings %v", i, res.Warnings)
		}
	}
	// A complete tree outside PATH, and PATH's tree swapped for a link to it.
	if _, err := run(other, false); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(other, "keep")
	before := testenv.Snapshot(t, outside, true)
	if err := os.RemoveAll(filepath.Join(dir, "keep")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "keep")); err != nil {
		t.Fatal(err)
	}
	opened := testenv.WatchOpens(t, outside)
	_, err := run(dir, true)
	if err == nil || !strings.Contains(err.Error(), "leads out of") {
		t.Errorf("a kept tree through a link out of PATH: %v", err)
	}
	opened()
	testenv.SameTree(t, "tree outside PATH", before, testenv.Snapshot(t, outside, true))
}

// A kept tree of a run on this host (tree.dir, no agent): once the first
// phase has run, PATH's tree is moved aside and a link to an fsbench tree
// outside PATH put in its place. The next phase goes on in the tree the
// run opened; nothing outside is opened.
func TestKeptTreeStaysBeneath(t *testing.T) {
	dir, other := t.TempDir(), t.TempDir()
	src := `tree: {dir: keep, depth: 1, width: 2, files: 2, file_size: 4K}
phases:
  - {name: read, op: read, xfer_size: 4K, ops: 8}
  - {name: again, op: read, xfer_size: 4K, ops: 8}
`
	for _, d := range []string{dir, other} { // a complete tree in each
		if err := RunJob(context.Background(), jobOptions(d), parseJob(t, src), &report.Result{}); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(other, "keep")
	var dirs []string
	_ = filepath.WalkDir(outside, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			dirs = append(dirs, p)
		}
		return err
	})
	before := testenv.Snapshot(t, outside, true)
	var checks []func()
	for _, d := range dirs { // the tree's files are in its directories
		checks = append(checks, testenv.WatchOpens(t, d))
	}
	o := jobOptions(dir)
	swapped := false
	o.Hooks.PhaseEnd = func(*workload.Runner, *workload.FilePhase) {
		if swapped {
			return
		}
		swapped = true
		keep := filepath.Join(dir, "keep")
		if err := os.Rename(keep, keep+".aside"); err != nil {
			t.Error(err)
		}
		if err := os.Symlink(outside, keep); err != nil {
			t.Error(err)
		}
	}
	res := &report.Result{}
	if err := RunJob(context.Background(), o, parseJob(t, src), res); err != nil || len(res.Phases) != 2 || res.Phases[1].Errors != 0 {
		t.Errorf("run: %v, phases %+v", err, res.Phases)
	}
	for _, opened := range checks {
		opened()
	}
	testenv.SameTree(t, "tree outside PATH", before, testenv.Snapshot(t, outside, true))
	for _, p := range res.Parameters {
		if p.Key == "tree" && !strings.Contains(p.Display, " in "+filepath.Join(dir, "keep")+",") {
			t.Errorf("the tree's parameter names %q, want the tree's own name", p.Display)
		}
	}
}
