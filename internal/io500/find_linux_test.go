package io500

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
)

// Entries whose type the file system does not give (DT_UNKNOWN, as some
// give for every entry) are stat'ed to tell a directory from a file;
// "." and ".." are not entries.
func TestFindUnknownTypes(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "f.01"), make([]byte, 3901), 0o644)
	os.WriteFile(filepath.Join(dir, "f.02"), make([]byte, 3901), 0o644)
	var b []byte
	for _, e := range []struct {
		name string
		typ  byte
	}{{".", unix.DT_DIR}, {"..", unix.DT_DIR}, {"sub", unix.DT_UNKNOWN}, {"f.01", unix.DT_UNKNOWN}, {"f.02", unix.DT_REG}, {"gone.01", unix.DT_UNKNOWN}} {
		rec := make([]byte, (19+len(e.name)+1+7)/8*8)
		binary.NativeEndian.PutUint16(rec[16:], uint16(len(rec)))
		rec[18] = e.typ
		copy(rec[19:], e.name)
		b = append(b, rec...)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	f := &finder{m: Match{Name: "*01*", Size: 3901}}
	var c FindResult
	subdirs := f.entries(fd, dir, b, nil, &c)
	if len(subdirs) != 1 || subdirs[0] != dir+"/sub" || c.Scanned != 4 || c.Found != 1 || c.Errors != 1 {
		t.Errorf("subdirs %v, %+v: want sub, 4 looked at, f.01 found, gone.01 an error", subdirs, c)
	}
}

// A rank bound to one core (as mpirun binds each of two ranks) walks on
// its own core and the idle ones it is given, with a P for each walker
// while it walks and its own count of Ps again after; CPUs it has
// already add nothing.
func TestFindOnIdleCPUs(t *testing.T) {
	cpus := sysio.CPUs()
	if len(cpus) < 2 {
		testenv.Unavailable(t, "this machine runs the test on %d CPU; it needs 2", len(cpus))
	}
	root := t.TempDir()
	for i := range 30 {
		os.WriteFile(filepath.Join(root, "f."+strconv.Itoa(i)), make([]byte, 3901), 0o644)
	}
	prev := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(prev)
	type walk struct {
		res   FindResult
		procs int
		err   error
	}
	bound := func(idle []int) walk {
		ch := make(chan walk)
		go func() {
			// The goroutine ends locked: its thread, bound here, ends too.
			runtime.LockOSThread()
			if err := sysio.RunOn(cpus[:1]); err != nil {
				ch <- walk{err: err}
				return
			}
			f := Find(context.Background(), root, Match{Name: "*1*", Size: 3901}, 2, idle, nil)
			ch <- walk{res: f, procs: runtime.GOMAXPROCS(0)}
		}()
		return <-ch
	}
	for _, c := range []struct {
		idle []int
		want int
	}{{nil, 1}, {cpus[:1], 1}, {cpus[1:2], 2}, {[]int{cpus[1], cpus[0], cpus[1]}, 2}} {
		w := bound(c.idle)
		// f.1, f.10 to f.19, f.21
		if w.err != nil || w.res.Err != nil || w.res.Found != 12 || w.res.CPUs != c.want || w.procs != 1 {
			t.Errorf("idle %v: %+v, %v, %d Ps after: want 12 found on %d CPUs, and 1 P after", c.idle, w.res, w.err, w.procs, c.want)
		}
	}
}
