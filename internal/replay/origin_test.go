//go:build linux

package replay

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/testenv"
)

// TestReplayReadOrigin replays, on a loop device's ext4, strace's record
// of cat reading a file three times over. The file, which the log reads
// without making, is made before the replay; with the caches dropped then,
// the device serves the first pass and the page cache the other two (about
// a third from storage, warned of as the recording's own re-reads); with
// them kept (the file pinned in the page cache), none of it, warned of with
// the remedy of dropping them.
func TestReplayReadOrigin(t *testing.T) {
	straceBin, err := testenv.LookPath("strace")
	if err != nil {
		testenv.Unavailable(t, "strace not installed")
	}
	work := t.TempDir()
	data := filepath.Join(work, "data")
	if err := os.WriteFile(data, make([]byte, 8<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(work, "cat.trace")
	if b, err := exec.Command(straceBin, "-f", "-ttt", "-T", "-y", "-o", log, "sh", "-c", "cat "+data+" "+data+" "+data+" >/dev/null").CombinedOutput(); err != nil {
		t.Fatalf("strace cat: %v %s", err, b)
	}
	dest := testenv.LoopExt4(t, "64M")
	for _, tc := range []struct {
		drop   string
		lo, hi float64 // the share from storage
		method string
		remedy string
	}{
		{runenv.DropAlways, 25, 45, "drop_caches", DroppedRemedy},
		{runenv.DropNever, 0, 5, "none", KeptRemedy},
	} {
		// Another process may drop every cache during the replay (fsbench's
		// tests as root do): with the caches kept, the file is pinned as the
		// replay starts, and either way a run that read more from the
		// device than it should is taken again, up to three times.
		var o *report.Origin
		var res *report.Result
		for range 3 {
			res = &report.Result{}
			opts := Options{Log: log, Path: dest, DropCaches: tc.drop}
			release := func() {}
			opts.Hooks.Warn = func(string) {}
			if tc.drop == runenv.DropNever {
				opts.Hooks.Started = func(*engine.Engine, int64) {
					runs, _ := filepath.Glob(filepath.Join(dest, "fsbench-*"))
					release = testenv.PinPageCache(t, filepath.Join(runs[0], data))
				}
			}
			err := Run(context.Background(), opts, res)
			release()
			if err != nil {
				t.Fatal(err)
			}
			p := res.FindPhase("replay-read")
			if p == nil || p.Origin == nil || p.Origin.FromStorage == nil || p.Origin.ReadBytes != p.Bytes || p.Bytes < 3*8<<20 {
				t.Fatalf("--drop-caches %s: replay-read %+v: want an origin of what it read, 24 MiB and more", tc.drop, p)
			}
			if o = p.Origin; *o.FromStorage <= tc.hi {
				break
			}
		}
		warned := slices.ContainsFunc(res.Warnings, func(w string) bool {
			return strings.HasPrefix(w, "replay-read: only") && strings.HasSuffix(w, "; "+tc.remedy)
		})
		if *o.FromStorage < tc.lo || *o.FromStorage > tc.hi || !warned || res.CacheDrop != tc.method {
			t.Errorf("--drop-caches %s: %.1f%% from storage (want %.0f to %.0f), cache drop %q (want %q), warnings %q",
				tc.drop, *o.FromStorage, tc.lo, tc.hi, res.CacheDrop, tc.method, res.Warnings)
		}
	}
	if err := (&Options{Log: log, Path: dest, DropCaches: "sometimes"}).Validate(); err == nil || !strings.Contains(err.Error(), "--drop-caches") {
		t.Errorf("--drop-caches sometimes: %v", err)
	}
}
