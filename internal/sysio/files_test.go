package sysio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestPathCause(t *testing.T) {
	_, err := os.Open(filepath.Join(t.TempDir(), "missing"))
	wrapped := fmt.Errorf("read: %w", err)
	if got := PathCause(wrapped); got != syscall.ENOENT {
		t.Errorf("PathCause(%v) = %v, want ENOENT alone", wrapped, got)
	}
	other := errors.New("not a path error")
	if PathCause(other) != other {
		t.Error("an error without a path is not returned as it is")
	}
}

func TestWriteAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	if err := WriteFileAtomic(path, "", []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Fatalf("content %q", b)
	}
	if st, _ := os.Stat(path); st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	// A write that fails leaves the old content and no temporary file.
	err := WriteAtomic(path, filepath.Join(dir, ".f.tmp"), 0o644, func(w io.Writer) error {
		w.Write([]byte("half"))
		return errors.New("boom")
	})
	if err == nil || err.Error() != "boom" {
		t.Fatalf("err = %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "one" {
		t.Errorf("after a failed write: %q, want the old content", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("left in the directory: %v", es)
	}
	// A temporary file elsewhere would make the rename cross directories.
	if err := WriteFileAtomic(path, filepath.Join(t.TempDir(), "x"), nil, 0o644); err == nil {
		t.Error("a temporary file in another directory is taken")
	}
	// A path in a missing directory: the error names it.
	missing := filepath.Join(dir, "no", "f")
	if err := WriteFileAtomic(missing, "", nil, 0o644); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
}
