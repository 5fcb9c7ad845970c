//go:build linux

package checkpoint

import (
	"context"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/workload"
)

// TestReadBackOrigin reads a checkpoint back on a loop device: from the
// page cache when the caches stay, from the device when they are dropped.
func TestReadBackOrigin(t *testing.T) {
	dir := testenv.LoopExt4(t, "64M")
	for _, tc := range []struct {
		drop string
		ok   func(pct float64) bool
		want string
	}{
		{runenv.DropNever, func(p float64) bool { return p < 5 }, "under 5%"},
		{runenv.DropAlways, func(p float64) bool { return p >= 95 }, "at least 95%"},
	} {
		var res *report.Result
		var warnings []string
		// Another process may drop every cache between the write and the
		// read-back (fsbench's tests as root do, many times a second on a
		// shared machine): with the caches kept, the shards are pinned in
		// the page cache once written; a run is also taken again.
		for attempt := 1; attempt <= 3; attempt++ {
			o := testOptions(dir)
			o.DropCaches = tc.drop
			warnings = nil
			o.Hooks.Warn = func(msg string) { warnings = append(warnings, msg) }
			release := func() {}
			if tc.drop == runenv.DropNever {
				o.Hooks.PhaseEnd = func(_ *workload.Runner, p *workload.FilePhase) {
					if p.Name == "write" {
						release = testenv.PinPageCache(t, p.Targets.Paths...)
					}
				}
			}
			res = &report.Result{}
			err := Run(context.Background(), o, res)
			release()
			if err != nil {
				t.Fatal(err)
			}
			if p := res.FindPhase("read"); p == nil || p.Origin == nil || p.Origin.FromStorage == nil || tc.ok(*p.Origin.FromStorage) {
				break
			}
		}
		p := res.FindPhase("read")
		if p == nil || p.Origin == nil || !strings.HasPrefix(p.Origin.Source, "block device loop") {
			t.Fatalf("--drop-caches %s: read-back %+v: want an origin on the loop device", tc.drop, p)
		}
		if o := p.Origin; o.FromStorage == nil || !tc.ok(*o.FromStorage) {
			t.Errorf("--drop-caches %s: %v%% from storage (%+v), want %s", tc.drop, o.FromStorage, o, tc.want)
		}
		warned := strings.Contains(strings.Join(warnings, "\n"), "read: only ")
		if warned != (tc.drop == runenv.DropNever) {
			t.Errorf("--drop-caches %s: warnings %q", tc.drop, warnings)
		}
		for _, name := range []string{"seq-write", "write"} {
			if res.FindPhase(name).Origin != nil {
				t.Errorf("%s has an origin", name)
			}
		}
	}
}
