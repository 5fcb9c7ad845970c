package bench

import (
	"context"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/origin"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
)

// runOrigin runs a big-file bench of 32 MiB (it fits in the page cache) on
// dir and returns the read phase's origin and the warnings.
func runOrigin(t *testing.T, dir, drop string, direct bool) (*report.Origin, []string) {
	t.Helper()
	o := Defaults()
	o.Path, o.BigFileSize, o.SmallFileCount, o.DropCaches, o.Direct = dir, 32*units.MiB, 0, drop, direct
	var warnings []string
	o.Hooks.Warn = func(msg string) { warnings = append(warnings, msg) }
	res := &report.Result{}
	if err := Run(context.Background(), o, res); err != nil {
		t.Fatalf("bench on %s: %v", dir, err)
	}
	p := res.FindPhase("read-big")
	if p == nil || p.Origin == nil {
		t.Fatalf("read-big has no origin: %+v", p)
	}
	if w := res.FindPhase("write-big"); w == nil || w.Origin != nil {
		t.Errorf("write-big: %+v: a write phase has no origin", w)
	}
	return p.Origin, warnings
}

// cachedAttempts is how often a read meant to come from the page cache is
// run before its result counts.
const cachedAttempts = 3

// cacheWarning is the warning that names the page cache and the remedy.
func cacheWarning(warnings []string) string {
	for _, w := range warnings {
		if strings.HasPrefix(w, "read-big: ") && strings.Contains(w, "the page cache") && strings.Contains(w, "--direct") {
			return w
		}
	}
	return ""
}

// checkOrigin runs the three cases of the proof on dir: a file read back
// with the caches not dropped comes from the page cache (under 5% from the
// device, and a warning); with the caches dropped, or --direct, at least
// 95% comes from the device.
func checkOrigin(t *testing.T, dir string, direct bool) {
	t.Helper()
	var o *report.Origin
	var warnings []string
	// Another process may drop every cache between the write and the
	// read (fsbench bench does so as root): that run is taken again.
	for attempt := 1; attempt <= cachedAttempts; attempt++ {
		o, warnings = runOrigin(t, dir, DropNever, false)
		if !strings.HasPrefix(o.Source, "block device loop") {
			t.Fatalf("source %q (unknown: %s): want the loop device", o.Source, o.Unknown)
		}
		if o.FromStorage != nil && *o.FromStorage < 5 {
			break
		}
		t.Logf("caches not dropped, attempt %d: %+v: the caches were dropped from outside?", attempt, o)
	}
	if o.FromStorage == nil || *o.FromStorage >= 5 {
		t.Errorf("caches not dropped: %v%% from storage (%+v), want under 5%%", o.FromStorage, o)
	}
	if cacheWarning(warnings) == "" {
		t.Errorf("caches not dropped: no warning naming the page cache and the remedy in %q", warnings)
	}
	o, warnings = runOrigin(t, dir, DropAlways, false)
	if o.FromStorage == nil || *o.FromStorage < 95 {
		t.Errorf("caches dropped: %v%% from storage (%+v), want at least 95%%", o.FromStorage, o)
	}
	if o.PageCacheBytes != nil || o.PageCacheUnknown != origin.NotLooked {
		t.Errorf("caches dropped: page cache before %v (%q), want it not looked at", o.PageCacheBytes, o.PageCacheUnknown)
	}
	if w := cacheWarning(warnings); w != "" {
		t.Errorf("caches dropped: warned %q", w)
	}
	if !direct {
		return
	}
	o, _ = runOrigin(t, dir, DropNever, true)
	if o.FromStorage == nil || *o.FromStorage < 95 {
		t.Errorf("--direct: %v%% from storage (%+v), want at least 95%%", o.FromStorage, o)
	}
	if o.PageCacheBytes == nil || *o.PageCacheBytes > o.ReadBytes/20 {
		t.Errorf("--direct: page cache before %v of %d bytes, want under 5%%", o.PageCacheBytes, o.ReadBytes)
	}
}

func TestOriginOnLoopDevice(t *testing.T) {
	testenv.RequireRoot(t)
	checkOrigin(t, testenv.LoopExt4(t, "256M"), true)
}

func TestOriginOnFUSEOverLoopDevice(t *testing.T) {
	dir := testenv.Bindfs(t, testenv.LoopExt4(t, "256M"))
	checkOrigin(t, dir, false)
}
