package io500

import (
	"context"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// A tree of 4 directories of 50 files: find matches by name, size and
// time exactly, with any number of walkers.
func TestFindMatchesNameSizeAndAge(t *testing.T) {
	root := t.TempDir()
	old := time.Now().Add(-time.Hour)
	var want int64
	for d := range 4 {
		dir := filepath.Join(root, "d"+strconv.Itoa(d), "sub")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 50 {
			name := "f." + strconv.Itoa(d) + "." + strconv.Itoa(i)
			size := 3901
			if i%3 == 0 {
				size = 100
			}
			p := filepath.Join(dir, name)
			if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
				t.Fatal(err)
			}
			stale := i%5 == 0
			if stale {
				os.Chtimes(p, old, old)
			}
			if m, _ := filepath.Match("*1*", name); m && size == 3901 && !stale {
				want++
			}
		}
	}
	for _, workers := range []int{1, 3, 16} {
		var seen atomic.Int64
		f := Find(context.Background(), root, Match{Name: "*1*", Size: 3901, Newer: old.Add(time.Minute)}, workers, nil, &seen)
		// root, 4 dirs, 4 subdirs read; 8 directories and 200 files seen.
		if f.Err != nil || f.Found != want || f.Scanned != 8+200 || f.Dirs != 9 || seen.Load() != f.Scanned {
			t.Errorf("%d walkers: %+v, %d seen as it went: want %d found, every entry seen", workers, f, seen.Load(), want)
		}
	}
	if f := Find(context.Background(), filepath.Join(root, "none"), Match{Size: -1}, 2, nil, nil); f.Err == nil {
		t.Errorf("a missing root: %+v", f)
	}
}

// find starts a walker for each rank of the world, whichever host its
// ranks are on: one process of a launched run walks for all.
func TestWalkers(t *testing.T) {
	for _, c := range []struct{ world, threads, want int }{
		{0, 3, 3},       // one host: its threads
		{4, 1, 4},       // mpirun -np 4: a rank a process
		{12, 4, 12},     // three hosts of four
		{1000, 2, 64},   // at most maxWalkers
		{200, 100, 100}, // unless one host has more threads
	} {
		if got := walkers(Options{World: c.world, Threads: c.threads}); got != c.want {
			t.Errorf("world %d, threads %d: %d walkers, want %d", c.world, c.threads, got, c.want)
		}
	}
}

// A pattern *TEXT* matches as path.Match would, by a faster test.
func TestWithin(t *testing.T) {
	names := []string{"file.01", "file.1", "01", "0", "a01b", "file.0.1", "file.10", "", "x*01y"}
	for _, pat := range []string{"*01*", "*1*", "*a*", "*0.1*", "01*", "*01", "*0?*", "*[01]*", "**", "*\\**", "*"} {
		if w := within(pat); w == "" && (pat == "*01*" || pat == "*1*" || pat == "*0.1*") {
			t.Errorf("%q: not taken as *TEXT*", pat)
		}
		for _, n := range names {
			f := &finder{m: Match{Name: pat}, within: within(pat)}
			want, _ := path.Match(pat, n)
			if got := f.nameMatches(n); got != want {
				t.Errorf("%q on %q: %v, path.Match says %v", pat, n, got, want)
			}
		}
	}
}
