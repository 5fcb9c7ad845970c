package train

import (
	"context"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// TestTrainOrigin trains on a loop device with the dataset dropped from
// the caches: one epoch reads it from the device; of three epochs, the
// later two are served by the page cache, and the run says so.
func TestTrainOrigin(t *testing.T) {
	dir := testenv.LoopExt4(t, "64M")
	for _, tc := range []struct {
		epochs int
		ok     func(pct float64) bool
		want   string
		warns  bool
	}{
		{1, func(p float64) bool { return p >= 95 }, "at least 95%", false},
		{3, func(p float64) bool { return p < 50 }, "under 50%", true},
	} {
		var res *report.Result
		var warnings []string
		// Another process may drop every cache between epochs (fsbench
		// does so as root): that run is taken again.
		for attempt := 1; attempt <= 3; attempt++ {
			o := small(dir)
			o.Epochs, o.DropCaches = tc.epochs, true
			warnings = nil
			o.Hooks.Warn = func(msg string) { warnings = append(warnings, msg) }
			res = &report.Result{}
			if err := Run(context.Background(), o, res); err != nil {
				t.Fatal(err)
			}
			if p := res.FindPhase("train"); p == nil || p.Origin == nil || p.Origin.FromStorage == nil || tc.ok(*p.Origin.FromStorage) {
				break
			}
		}
		p := res.FindPhase("train")
		if p == nil || p.Origin == nil || !strings.HasPrefix(p.Origin.Source, "block device loop") {
			t.Fatalf("%d epochs: train phase %+v: want an origin on the loop device", tc.epochs, p)
		}
		if o := p.Origin; o.FromStorage == nil || !tc.ok(*o.FromStorage) || o.ReadBytes != p.Bytes {
			t.Errorf("%d epochs: %v%% of %d bytes from storage (%+v), want %s", tc.epochs, o.FromStorage, p.Bytes, o, tc.want)
		}
		warned := strings.Contains(strings.Join(warnings, "\n"), "train: only ")
		if warned != tc.warns {
			t.Errorf("%d epochs: warned %v, want %v: %q", tc.epochs, warned, tc.warns, warnings)
		}
	}
}
