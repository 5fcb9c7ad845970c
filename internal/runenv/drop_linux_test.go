package runenv

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestFlushWritesBack: Flush leaves none of a just-written file's pages
// dirty (cachestat(2) counts them), unless caches are never dropped.
func TestFlushWritesBack(t *testing.T) {
	dir := t.TempDir()
	write := func(name string) string {
		f := filepath.Join(dir, name)
		// Something else may write everything back at any time (a sync
		// from another test): a file found clean is written again.
		for range 5 {
			if err := os.WriteFile(f, make([]byte, 1<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			if testenv.DirtyPages(t, f) > 0 {
				return f
			}
		}
		t.Fatalf("%s never stayed dirty long enough to look at", f)
		return ""
	}
	var waits []string
	hooks := Hooks{Wait: func(what string) func() { waits = append(waits, what); return func() {} }}
	warn := func(f string, a ...any) { t.Errorf("warning: "+f, a...) }
	f := write("a")
	NewDropper(Options{DropCaches: DropAuto, Hooks: hooks}, true, warn).Flush("write-big", dir)
	if n := testenv.DirtyPages(t, f); n != 0 || len(waits) != 1 || waits[0] != "writing back dirty data before write-big" {
		t.Errorf("after Flush: %d pages dirty, waits %q; want none dirty, one wait named", n, waits)
	}
	waits = nil
	NewDropper(Options{DropCaches: DropNever, Hooks: hooks}, true, warn).Flush("write-big", dir)
	if len(waits) != 0 {
		t.Errorf("--drop-caches never flushed: %q", waits)
	}
}
