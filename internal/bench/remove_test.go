package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workload's files of earlier phases are removed beneath the run's
// directory: one of its directories swapped for a link to a directory
// outside leads no removal there.
func TestRemoveInStaysBeneath(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	keep := filepath.Join(outside, "f")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "g"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	err := removeIn(dir, []string{"g", "d/f"})
	if err == nil || !strings.Contains(err.Error(), "unlink "+filepath.Join(dir, "d/f")) {
		t.Errorf("removal through a link out of the run directory: %v", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("removed outside the run directory: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "g")); !os.IsNotExist(err) {
		t.Errorf("g not removed: %v", err)
	}
}
