package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"

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
	stop, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			select {
			case <-stop:
				return
			default:
				_ = unix.Renameat2(unix.AT_FDCWD, d, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE)
			}
		}
	}()
	for range 30 {
		o := existingOptions(dir)
		o.Threads = 2
		_ = RunExisting(context.Background(), o, &report.Result{})
	}
	close(stop)
	<-stopped
	opened()
	openedSub()
}
