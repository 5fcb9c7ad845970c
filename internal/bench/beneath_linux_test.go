package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
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
