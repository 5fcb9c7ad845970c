package file_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fsbench/fsbench/pkg/object/file"
)

// TestGetOnlyRegularFiles gets the entries of a directory that are not
// regular files: a symbolic link is not followed, whether to a file
// outside the store or to /dev/zero (which would never end), and a FIFO is
// refused at once rather than waited on forever.
func TestGetOnlyRegularFiles(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(outside, []byte("outside the store"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("data"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"out": outside, "zero": "/dev/zero", "inside": "plain"} {
		if err := os.Symlink(to, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := file.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rc, err := s.Get(ctx, "plain", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || string(b) != "data" {
		t.Fatalf("get plain: %q, %v", b, err)
	}
	// The FIFO last: before the fix its open waited for a writer forever.
	for _, key := range []string{"out", "zero", "inside", "fifo"} {
		rc, err := s.Get(ctx, key, 0, -1)
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(rc, 64))
			rc.Close()
			t.Errorf("get %s: read %q, want an error: not a regular file", key, b)
			continue
		}
		if !strings.Contains(err.Error(), "not a regular file") || !strings.Contains(err.Error(), key) {
			t.Errorf("get %s: %v, want an error naming it and saying it is not a regular file", key, err)
		}
	}
}
