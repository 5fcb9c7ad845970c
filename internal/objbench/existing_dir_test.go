package objbench

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// strictatimeTmpfs mounts a tmpfs that updates a file's access time at
// every read (strictatime), for the test's life.
func strictatimeTmpfs(t *testing.T) string {
	t.Helper()
	testenv.RequireRoot(t)
	dir := t.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_STRICTATIME, "size=8m"); err != nil {
		testenv.Unavailable(t, "mount a strictatime tmpfs: %v", err)
	}
	t.Cleanup(func() { unix.Unmount(dir, unix.MNT_DETACH) })
	return dir
}

// atime is the access time of path, in ns.
func atime(t *testing.T, path string) int64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Atim.Nano()
}

// TestListExistingDirectory downloads the objects of a directory (the file
// store) that holds, beside its files, a FIFO, a symbolic link to /dev/zero
// and one to a file outside: it reads the two files, counts the rest as
// not read, and leaves every access time as it was on a mount that
// updates them at every read.
func TestListExistingDirectory(t *testing.T) {
	dir := strictatimeTmpfs(t)
	outside := filepath.Join(t.TempDir(), "outside")
	old := time.Unix(1_000_000_000, 0)
	files := map[string]int{"a": 4096, "sub/b": 10000, outside: 32}
	for name, n := range files {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, name)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"zero": "/dev/zero", "sub/out": outside} {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	o := Defaults()
	o.URL, o.ListExisting, o.Verify, o.Threads = dir, true, false, 2
	res := &report.Result{}
	if err := RunExisting(context.Background(), o, res); err != nil {
		t.Fatal(err)
	}
	p := res.FindPhase(GetExisting)
	if p == nil || p.Items != 2 || p.Bytes != 4096+10000 || p.Errors != 0 {
		t.Fatalf("phases %+v, want %s of 2 objects, %d bytes, no error", res.Phases, GetExisting, 4096+10000)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "2 symbolic links (not followed) and 1 special files") {
		t.Errorf("warnings %q, want one counting 2 symbolic links and 1 special file not read", w)
	}
	for _, name := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "sub/b"), outside} {
		if a := atime(t, name); a != old.UnixNano() {
			t.Errorf("%s: access time %v, want %v: the run changed it", name, time.Unix(0, a), old)
		}
	}
	// The check can fail: a plain read moves the access time here.
	if _, err := os.ReadFile(filepath.Join(dir, "a")); err != nil {
		t.Fatal(err)
	}
	if atime(t, filepath.Join(dir, "a")) == old.UnixNano() {
		t.Errorf("a plain read left the access time of a as it was: the check proves nothing here")
	}
}

// TestListExistingMissingDirectory: the error of a directory that is not
// there names the listing once.
func TestListExistingMissingDirectory(t *testing.T) {
	o := Defaults()
	o.URL, o.ListExisting, o.Verify = filepath.Join(t.TempDir(), "nonexist"), true, false
	err := RunExisting(context.Background(), o, &report.Result{})
	want := "list: directory " + o.URL + " does not exist"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v, want %q", err, want)
	}
}
