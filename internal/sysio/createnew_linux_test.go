package sysio

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCreateNewConfined: a file made under a directory that another user
// swapped for a link to elsewhere is refused by the check, which is given
// the directory the link leads to, and nothing is made there; a link as
// the file's own name is never followed; a directory the check accepts
// gets the new file, and a second one of the same name is refused.
func TestCreateNewConfined(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	within := func(dir string) error {
		if dir != root && !strings.HasPrefix(dir, root+"/") {
			return errors.New("outside the allowed roots")
		}
		return nil
	}
	if err := os.Symlink(outside, filepath.Join(root, "sub")); err != nil { // swapped in after a check of root/sub
		t.Fatal(err)
	}
	if _, err := CreateNew(filepath.Join(root, "sub", "j"), 0o644, within); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Fatalf("made beneath a link out of the root: %v", err)
	}
	if _, err := os.Stat(filepath.Join(outside, "j")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a file was made outside: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "target"), filepath.Join(root, "link")); err != nil {
		t.Fatal(err)
	}
	if _, err := CreateNew(filepath.Join(root, "link"), 0o644, within); err == nil {
		t.Fatal("a link as the file's name was followed")
	}
	if _, err := os.Stat(filepath.Join(outside, "target")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the link's target was made: %v", err)
	}
	f, err := CreateNew(filepath.Join(root, "j"), 0o644, within)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("x"); err != nil || f.Close() != nil {
		t.Fatal(err)
	}
	if _, err := CreateNew(filepath.Join(root, "j"), 0o644, within); !errors.Is(err, fs.ErrExist) {
		t.Errorf("a file that exists: %v, want it refused as existing", err)
	}
}
