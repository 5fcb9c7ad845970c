package workload

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// marker is the state the tree's marker file holds now.
func marker(t *testing.T, root string) (string, bool) {
	t.Helper()
	info, err := ReadTreeInfo(root)
	if err != nil {
		t.Fatal(err)
	}
	return info.State, info.Subdirs
}

// A tree through its phases: the marker says dirty while a phase that
// changes the tree runs, and what the phase left once it completed.
func TestTreeRunStates(t *testing.T) {
	root := filepath.Join(t.TempDir(), "tree")
	s := Shape{Depth: 1, Width: 2, Files: 2, FileSize: 10}
	tr, err := OpenTreeRun(root, s, 7, false)
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := marker(t, root); st != TreeEmpty || tr.Complete() {
		t.Fatalf("new tree: state %s", st)
	}
	if err := tr.Ready(); err != nil {
		t.Fatal(err)
	}
	if st, _ := marker(t, root); st != TreeDirs {
		t.Fatalf("after Ready: %s", st)
	}
	if _, err := os.Stat(filepath.Join(root, s.Dirs()[0])); err != nil {
		t.Fatalf("Ready made no directories: %v", err)
	}
	if !tr.NeedsFormat(Read) || tr.NeedsFormat(Create) || tr.NeedsFormat(Readdir) {
		t.Error("NeedsFormat: a read of an empty tree needs a format; create and readdir do not")
	}

	// A format that is cut short leaves the tree dirty.
	names, done, err := tr.ForPhase(Create, true)
	if err != nil || len(names) != s.NumFiles() {
		t.Fatalf("format: %d names, %v", len(names), err)
	}
	if st, _ := marker(t, root); st != TreeDirty {
		t.Fatalf("during format: %s", st)
	}
	if err := done(false); err != nil {
		t.Fatal(err)
	}
	if st, _ := marker(t, root); st != TreeDirty {
		t.Fatalf("after an incomplete format: %s", st)
	}
	// The next one cleans it first and, complete, leaves it formatted.
	_, done, err = tr.ForPhase(Create, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := done(true); err != nil {
		t.Fatal(err)
	}
	if st, _ := marker(t, root); st != TreeFormatted || !tr.Complete() || tr.NeedsFormat(Read) {
		t.Fatalf("after a complete format: %s", st)
	}
	if _, _, err := tr.ForPhase(Create, false); err == nil || !strings.Contains(err.Error(), "exist already") {
		t.Errorf("create over a complete tree: %v", err)
	}
	// Reads change nothing.
	if names, done, err := tr.ForPhase(Read, false); err != nil || done != nil || len(names) != s.NumFiles() {
		t.Errorf("read: %d names, done %v, %v", len(names), done != nil, err)
	}

	// mkdir, then rmdir: the marker tracks the phases' directories.
	if _, _, err := tr.ForPhase(Rmdir, false); err == nil {
		t.Error("rmdir without an earlier mkdir: no error")
	}
	names, done, err = tr.ForPhase(Mkdir, false)
	if err != nil || len(names) != len(s.SubdirNames()) {
		t.Fatalf("mkdir: %v", err)
	}
	if st, sub := marker(t, root); st != TreeDirty || !sub {
		t.Fatalf("during mkdir: %s subdirs %v", st, sub)
	}
	if err := done(true); err != nil {
		t.Fatal(err)
	}
	if st, sub := marker(t, root); st != TreeFormatted || !sub {
		t.Fatalf("after mkdir: %s subdirs %v", st, sub)
	}
	if _, _, err := tr.ForPhase(Mkdir, false); err == nil {
		t.Error("a second mkdir: no error")
	}
	_, done, err = tr.ForPhase(Rmdir, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := done(true); err != nil {
		t.Fatal(err)
	}
	if st, sub := marker(t, root); st != TreeFormatted || sub {
		t.Fatalf("after rmdir: %s subdirs %v", st, sub)
	}

	// A complete tree of the same shape is reused by the next run; an
	// unlink leaves directories only.
	again, err := OpenTreeRun(root, s, 99, false)
	if err != nil || !again.Complete() || again.Info.Seed != 7 {
		t.Fatalf("reopen: %+v, %v", again, err)
	}
	_, done, err = again.ForPhase(Unlink, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := done(true); err != nil {
		t.Fatal(err)
	}
	if st, _ := marker(t, root); st != TreeDirs {
		t.Fatalf("after unlink: %s", st)
	}
	if err := again.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(root); !os.IsNotExist(err) {
		t.Errorf("tree still there after Remove: %v", err)
	}
}
