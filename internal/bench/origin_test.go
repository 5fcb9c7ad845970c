//go:build linux

package bench

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/origin"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// runOrigin runs a big-file bench of 32 MiB (it fits in the page cache) on
// dir and returns the read phase's origin and the warnings. With backing,
// the files written are pinned in the page cache (see
// testenv.PinPageCache) once written, before the read phase looks at the
// cache: backing names the file that holds a written file's pages (under
// a FUSE mount, the one below it).
func runOrigin(t *testing.T, dir, drop string, direct bool, backing func(string) string) (*report.Origin, []string) {
	t.Helper()
	o := Defaults()
	o.Path, o.BigFileSize, o.SmallFileCount, o.DropCaches, o.Direct = dir, 32*units.MiB, 0, drop, direct
	var warnings []string
	o.Hooks.Warn = func(msg string) { warnings = append(warnings, msg) }
	release := func() {}
	if backing != nil {
		o.Hooks.PhaseEnd = func(_ *workload.Runner, p *workload.FilePhase) {
			if p.Name == "write-big" {
				var files []string
				for _, f := range p.Targets.Paths {
					files = append(files, backing(f))
				}
				release = testenv.PinPageCache(t, files...)
			}
		}
	}
	res := &report.Result{}
	err := Run(context.Background(), o, res)
	release()
	if err != nil {
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
func checkOrigin(t *testing.T, dir string, direct bool, backing func(string) string) {
	t.Helper()
	// Another process may drop every cache between the write and the
	// read (fsbench's tests as root do, many times a second on a shared
	// machine): the files written are pinned in the page cache.
	o, warnings := runOrigin(t, dir, runenv.DropNever, false, backing)
	if !strings.HasPrefix(o.Source, "block device loop") {
		t.Fatalf("source %q (unknown: %s): want the loop device", o.Source, o.Unknown)
	}
	if o.FromStorage == nil || *o.FromStorage >= 5 {
		t.Errorf("caches not dropped: %s from storage (unknown: %q), want under 5%%", pct(o.FromStorage), o.Unknown)
	}
	if cacheWarning(warnings) == "" {
		t.Errorf("caches not dropped: no warning naming the page cache and the remedy in %q", warnings)
	}
	o, warnings = runOrigin(t, dir, runenv.DropAlways, false, nil)
	if o.FromStorage == nil || *o.FromStorage < 95 {
		t.Errorf("caches dropped: %s from storage (unknown: %q), want at least 95%%", pct(o.FromStorage), o.Unknown)
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
	o, _ = runOrigin(t, dir, runenv.DropNever, true, nil)
	if o.FromStorage == nil || *o.FromStorage < 95 {
		t.Errorf("--direct: %s from storage (unknown: %q), want at least 95%%", pct(o.FromStorage), o.Unknown)
	}
	if o.PageCacheBytes == nil || *o.PageCacheBytes > o.ReadBytes/20 {
		t.Errorf("--direct: page cache before %v of %d bytes, want under 5%%", o.PageCacheBytes, o.ReadBytes)
	}
}

func TestOriginOnLoopDevice(t *testing.T) {
	testenv.RequireRoot(t)
	checkOrigin(t, testenv.LoopExt4(t, "256M"), true, func(f string) string { return f })
}

func TestOriginOnFUSEOverLoopDevice(t *testing.T) {
	loop := testenv.LoopExt4(t, "256M")
	dir := testenv.Bindfs(t, loop)
	checkOrigin(t, dir, false, func(f string) string { return filepath.Join(loop, strings.TrimPrefix(f, dir)) })
}

// pct shows a percentage that may be unknown.
func pct(p *float64) string {
	if p == nil {
		return "unknown"
	}
	return fmt.Sprintf("%.1f%%", *p)
}
