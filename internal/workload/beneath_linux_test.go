//go:build linux

package workload

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

// sentinels makes names in dir, each holding its own name, and returns
// a check that they are all there as made and nothing else is.
func sentinels(t *testing.T, dir string, names []string) func() {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte(n), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		t.Helper()
		l, _ := os.ReadDir(dir)
		if len(l) != len(names) {
			t.Errorf("outside the run directory: %d entries, want %d: %v", len(l), len(names), l)
		}
		for _, n := range names {
			p := filepath.Join(dir, n)
			b, err := os.ReadFile(p)
			fi, serr := os.Stat(p)
			if err != nil || serr != nil || !bytes.Equal(b, []byte(n)) || fi.Mode().Perm() != 0o600 {
				t.Errorf("outside the run directory: %s changed (%q, %v)", p, b, err)
			}
		}
	}
}

// A directory of the run swapped for a link to a directory outside it:
// no phase that changes files removes, creates, writes, renames or alters
// anything there.
func TestPhasesStayBeneath(t *testing.T) {
	dir, _, files, check := linkSetup(t)
	e := NewRunner(Config{Dir: dir, Workers: 1, Seed: 3}, 64<<10)
	for _, p := range []FilePhase{
		{Kind: Unlink}, {Kind: Rmdir}, {Kind: Chmod}, {Kind: Utime}, {Kind: Rename},
		{Kind: Write, FileSize: 4096, BlockSize: 4096},
		{Kind: Create, FileSize: 4096, BlockSize: 4096, PerFile: true},
	} {
		targets := files
		if p.Kind == Create || p.Kind == Rmdir {
			targets = []string{"d/new0", "d/f0"}
		}
		p.Title, p.Targets = p.Kind.String(), e.NewTargets(dir, targets)
		if _, err := e.Run(context.Background(), p); err == nil || p.Kind != Rename && !strings.Contains(err.Error(), "leads out of the run's directory") {
			t.Errorf("%s through a link out of the run directory: %v", p.Kind, err)
		}
		check()
	}
	p := FilePhase{Title: "mkdir", Kind: Mkdir, Targets: e.NewTargets(dir, []string{"d/sub"})}
	if _, err := e.Run(context.Background(), p); err == nil {
		t.Error("mkdir through a link out of the run directory: no error")
	}
	check()
}

// A directory of the run flips between itself and a link out of it while
// files are created in it and removed: nothing outside is ever touched.
func TestPhasesRaceStayBeneath(t *testing.T) {
	dir, _, files, check := flipSetup(t, false)
	stop := testenv.Flip(t, filepath.Join(dir, "d"), filepath.Join(dir, "alt"))
	e := NewRunner(Config{Dir: dir, Workers: 2, Seed: 3}, 64<<10)
	for range 100 {
		_, _ = e.Run(context.Background(), FilePhase{Title: "create", Kind: Create, FileSize: 4096, BlockSize: 4096, PerFile: true, Targets: e.NewTargets(dir, files)})
		_, _ = e.Run(context.Background(), FilePhase{Title: "write", Kind: Write, FileSize: 4096, BlockSize: 4096, Targets: e.NewTargets(dir, files)})
		_, _ = e.Run(context.Background(), FilePhase{Title: "unlink", Kind: Unlink, Targets: e.NewTargets(dir, files)})
	}
	stop()
	check()
}

// linkSetup is flipSetup with d the link to the directory outside.
func linkSetup(t *testing.T) (dir, outside string, files []string, check func()) {
	t.Helper()
	dir, outside, files, check = flipSetup(t, false)
	if err := os.Remove(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "alt"), filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	return dir, outside, files, check
}

// flipSetup makes a run directory with d, a directory (holding files
// f0..f7 when full), and alt, a link to a directory outside holding
// files of the same names: the targets d/f0..d/f7, and a check that the
// files outside are as made.
func flipSetup(t *testing.T, full bool) (dir, outside string, files []string, check func()) {
	t.Helper()
	dir, outside = t.TempDir(), t.TempDir()
	var names []string
	for i := range 8 {
		names = append(names, fmt.Sprintf("f%d", i))
		files = append(files, fmt.Sprintf("d/f%d", i))
	}
	check = sentinels(t, outside, names)
	d := filepath.Join(dir, "d")
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	if full {
		sentinels(t, d, names)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "alt")); err != nil {
		t.Fatal(err)
	}
	return dir, outside, files, check
}

// A directory of a kept tree swapped for a link to a directory outside
// it, holding files of the tree's names: clearing, re-making and removing
// the tree touch nothing there.
func TestTreeClearStaysBeneath(t *testing.T) {
	root, outside := filepath.Join(t.TempDir(), "tree"), t.TempDir()
	s := Shape{Depth: 1, Width: 2, Files: 2, FileSize: 10}
	if _, err := OpenTree(root, s, 1, false); err != nil {
		t.Fatal(err)
	}
	if err := MakeDirs(root, s); err != nil {
		t.Fatal(err)
	}
	d := s.Dirs()[0]
	var names []string
	for _, f := range s.FileNames() {
		if filepath.Dir(f) == d {
			names = append(names, filepath.Base(f))
		}
	}
	if len(names) == 0 {
		t.Fatalf("no files in %s of %v", d, s.FileNames())
	}
	check := sentinels(t, outside, names)
	if err := os.Remove(filepath.Join(root, d)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, d)); err != nil {
		t.Fatal(err)
	}
	if err := ClearTree(root, s); err == nil {
		t.Error("ClearTree through a link out of the tree: no error")
	}
	check()
	if err := RemoveTree(root, s); err == nil {
		t.Error("RemoveTree through a link out of the tree: no error")
	}
	check()
}

// A directory of the run swapped for a link to a directory outside it:
// phases that read, open, stat or list their targets read and open
// nothing there, and stat nothing (the stat fails instead).
func TestReadPhasesStayBeneath(t *testing.T) {
	dir, outside, files, check := linkSetup(t)
	opened := testenv.WatchOpens(t, outside)
	e := NewRunner(Config{Dir: dir, Workers: 1, Seed: 3}, 64<<10)
	for _, p := range []FilePhase{
		{Kind: Read, FileSize: 2, BlockSize: 2},
		{Kind: Read, FileSize: 2, BlockSize: 2, PerFile: true},
		{Kind: Open}, {Kind: Stat}, {Kind: Readdir},
	} {
		targets := files
		if p.Kind == Readdir {
			targets = []string{"d", "d/."}
		}
		p.Title, p.Targets = p.Kind.String(), e.NewTargets(dir, targets)
		if _, err := e.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "leads out of the run's directory") {
			t.Errorf("%s through a link out of the run directory: %v", p.Kind, err)
		}
		opened()
	}
	check()
}

// A directory of the run flips between itself and a link out of it while
// its files are read, opened, stat'ed and listed: nothing outside is ever
// opened or read.
func TestReadPhasesRaceStayBeneath(t *testing.T) {
	dir, outside, files, check := flipSetup(t, true)
	opened := testenv.WatchOpens(t, outside)
	stop := testenv.Flip(t, filepath.Join(dir, "d"), filepath.Join(dir, "alt"))
	e := NewRunner(Config{Dir: dir, Workers: 2, Seed: 3}, 64<<10)
	for range 100 {
		for _, p := range []FilePhase{
			{Kind: Read, FileSize: 2, BlockSize: 2, PerFile: true},
			{Kind: Open}, {Kind: Stat}, {Kind: Readdir},
		} {
			p.Title, p.Targets = p.Kind.String(), e.NewTargets(dir, files)
			if p.Kind == Readdir {
				p.Targets = e.NewTargets(dir, []string{"d", "d/.", "d/../d"})
			}
			_, _ = e.Run(context.Background(), p)
		}
	}
	stop()
	opened()
	check()
}
