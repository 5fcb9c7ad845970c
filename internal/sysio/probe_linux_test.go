package sysio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

// The O_DIRECT probe of bench --read-existing opens its file beneath
// PATH: a directory of PATH that is a link out of it is refused, and
// nothing outside is opened.
func TestProbeDirectReadStaysBeneath(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "f0"), make([]byte, 64<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ProbeDirectRead(outside, "f0", "test"); err != nil {
		t.Skipf("no O_DIRECT here: %v", err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	opened := testenv.WatchOpens(t, outside)
	if _, err := ProbeDirectRead(dir, "d/f0", "test"); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "d/f0")) {
		t.Errorf("probe through a link out of the directory: %v", err)
	}
	opened()
}
