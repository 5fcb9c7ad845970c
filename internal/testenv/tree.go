package testenv

import (
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"golang.org/x/sys/unix"
)

// Entry is what a snapshot keeps of one entry of a tree.
type Entry struct {
	Mode         fs.FileMode
	Size         int64
	Mtime, Atime int64 // ns
	Sum          string
	Link         string
}

// Snapshot records every entry below dir: type, size, times, and the
// sha256 of each file's content. It reads with O_NOATIME, so that it does
// not change what it records; with dirAtimes off, it leaves the access
// times of directories and links out (a FUSE daemon lists and resolves
// them in its own way).
func Snapshot(t testing.TB, dir string, dirAtimes bool) map[string]Entry {
	t.Helper()
	out := map[string]Entry{}
	var walk func(rel string)
	walk = func(rel string) {
		p := filepath.Join(dir, rel)
		var st unix.Stat_t
		if err := unix.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		e := Entry{Mode: fs.FileMode(st.Mode), Size: st.Size, Mtime: st.Mtim.Nano(), Atime: st.Atim.Nano()}
		switch st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			e.Sum = sum(t, p)
		case unix.S_IFDIR:
			for _, name := range namesNoAtime(t, p) {
				walk(filepath.Join(rel, name))
			}
			fallthrough
		default:
			if !dirAtimes {
				e.Atime = 0
			}
		}
		out[rel] = e
	}
	walk("")
	return out
}

// sum is the sha256 of file p, read with O_NOATIME.
func sum(t testing.TB, p string) string {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOATIME, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	h := sha256.New()
	if _, err := f.WriteTo(h); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// SameTree fails the test where after differs from before.
func SameTree(t testing.TB, what string, before, after map[string]Entry) {
	t.Helper()
	for name, b := range before {
		a, ok := after[name]
		switch {
		case !ok:
			t.Errorf("%s: %s is gone", what, name)
		case !reflect.DeepEqual(a, b):
			t.Errorf("%s: %s changed:\n before %+v\n after  %+v", what, name, b, a)
		}
	}
	for name := range after {
		if _, ok := before[name]; !ok {
			t.Errorf("%s: new entry %s", what, name)
		}
	}
}

// namesNoAtime lists directory p, opened with O_NOATIME.
func namesNoAtime(t testing.TB, p string) []string {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOATIME|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err != nil {
		t.Fatal(err)
	}
	return names
}
