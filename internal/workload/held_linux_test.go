//go:build linux && (amd64 || arm64)

package workload

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestHeldCallsAsUsual: every call gives the same results and the same
// errors held as through Go's usual entry, for a short path, a path too
// long for the stack buffer and a path with a NUL in it.
func TestHeldCallsAsUsual(t *testing.T) {
	dir := testenv.Tmpfs(t, "16m")
	long := filepath.Join(dir, strings.Repeat("a", 200), strings.Repeat("b", 200), strings.Repeat("c", 200))
	if err := os.MkdirAll(long, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, hold := range []bool{false, true} {
		for _, base := range []string{dir, long} {
			path := filepath.Join(base, "f")
			fd, err := sysOpen(hold, path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
			if err != nil {
				t.Fatalf("hold %v: create %s: %v", hold, path, err)
			}
			if n, err := sysPwrite(hold, fd, []byte("held"), 4); n != 4 || err != nil {
				t.Fatalf("hold %v: pwrite = %d, %v", hold, n, err)
			}
			if err := sysClose(hold, fd); err != nil {
				t.Fatalf("hold %v: close: %v", hold, err)
			}
			if err := sysClose(hold, fd); !errors.Is(err, unix.EBADF) {
				t.Errorf("hold %v: second close = %v, want EBADF", hold, err)
			}
			if _, err := sysOpen(hold, path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o600); !errors.Is(err, fs.ErrExist) {
				t.Errorf("hold %v: create of an existing file = %v, want it to exist", hold, err)
			}
			var st unix.Stat_t
			if err := sysStat(hold, path, &st); err != nil || st.Size != 8 || st.Mode&0o777 != 0o600 {
				t.Fatalf("hold %v: stat = size %d mode %o, %v", hold, st.Size, st.Mode, err)
			}
			fd, err = sysOpen(hold, path, unix.O_RDONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 8)
			if n, err := sysPread(hold, fd, buf, 0); n != 8 || err != nil || string(buf) != "\x00\x00\x00\x00held" {
				t.Errorf("hold %v: pread = %d %q, %v", hold, n, buf, err)
			}
			if n, err := sysPread(hold, fd, buf, 8); n != 0 || err != nil {
				t.Errorf("hold %v: pread at the end = %d, %v", hold, n, err)
			}
			sysClose(hold, fd)
			if err := sysUnlink(hold, path); err != nil {
				t.Fatalf("hold %v: unlink: %v", hold, err)
			}
			if err := sysStat(hold, path, &st); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("hold %v: stat after unlink = %v, want not found", hold, err)
			}
			if err := sysUnlink(hold, path); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("hold %v: second unlink = %v, want not found", hold, err)
			}
		}
		bad := filepath.Join(dir, "x\x00y")
		if _, err := sysOpen(hold, bad, unix.O_WRONLY|unix.O_CREAT, 0o600); !errors.Is(err, unix.EINVAL) {
			t.Errorf("hold %v: open of a path with a NUL = %v, want EINVAL", hold, err)
		}
		if err := sysUnlink(hold, bad); !errors.Is(err, unix.EINVAL) {
			t.Errorf("hold %v: unlink of a path with a NUL = %v, want EINVAL", hold, err)
		}
		if _, err := os.Stat(filepath.Join(dir, "x")); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("hold %v: the path before the NUL was touched: %v", hold, err)
		}
	}
}

// TestHoldsWhere: a worker holds its P on tmpfs when it has one of its
// own, not when the workers take every P, and not on a FUSE mount.
func TestHoldsWhere(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	tmp := testenv.Tmpfs(t, "16m")
	fuse := testenv.Bindfs(t, tmp)
	for _, c := range []struct {
		workers int
		dir     string
		want    bool
	}{{1, tmp, true}, {3, tmp, true}, {4, tmp, false}, {1, fuse, false}} {
		if got := holds(c.workers, filepath.Join(c.dir, "f")); got != c.want {
			t.Errorf("holds(%d workers, %s) = %v, want %v", c.workers, c.dir, got, c.want)
		}
	}
}

// TestPhasesHeld: a phase on tmpfs runs held, on a FUSE mount not, and
// both write, verify, stat and remove every file: the counts are exact.
func TestPhasesHeld(t *testing.T) {
	tmp := testenv.Tmpfs(t, "64m")
	fuse := testenv.Bindfs(t, t.TempDir())
	for _, c := range []struct {
		dir  string
		held bool
	}{{tmp, true}, {fuse, false}} {
		e := NewRunner(Config{Dir: c.dir, Workers: 2, Verify: true, Seed: 3}, 64<<10)
		var during []bool
		ready := func() { during = append(during, e.hold) }
		ts := filesOf(e, 20, names)
		phases := []FilePhase{
			{Title: "Write", Kind: Create, Targets: ts, FileSize: 100 << 10, BlockSize: 64 << 10, Ready: ready},
			{Title: "Read", Kind: Read, Targets: ts, FileSize: 100 << 10, BlockSize: 64 << 10, Ready: ready},
			{Title: "Stat", Kind: Stat, Targets: ts, Ready: ready},
			{Title: "Unlink", Kind: Unlink, Targets: ts, Ready: ready},
		}
		for _, p := range phases {
			r, err := e.Run(context.Background(), p)
			if err != nil || r.Items != 40 || r.Errors != 0 {
				t.Fatalf("%s on %s: %d items, %d errors, %v", p.Title, c.dir, r.Items, r.Errors, err)
			}
		}
		for i, h := range during {
			if h != c.held {
				t.Errorf("%s on %s: held %v, want %v", phases[i].Title, c.dir, h, c.held)
			}
		}
		if len(during) != len(phases) || e.hold {
			t.Errorf("on %s: %d phases started, held after them %v", c.dir, len(during), e.hold)
		}
		if left, _ := os.ReadDir(c.dir); len(left) != 0 {
			t.Errorf("left on %s: %d entries", c.dir, len(left))
		}
	}
}
