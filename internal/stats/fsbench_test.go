package stats

import (
	"context"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/live"
)

func TestFSBenchSource(t *testing.T) {
	var now []*live.Snapshot
	src := &FSBenchSource{Mount: "/data", Path: "/data/x", List: func(time.Time) []*live.Snapshot { return now }}
	run := func(pid int, target, mount, phase string, ops, w int64) *live.Snapshot {
		return &live.Snapshot{Version: live.Version, PID: pid, Target: target, Mount: mount, Phase: phase, Ops: ops, WriteBytes: w, LatencyNs: ops * 1000}
	}
	steps := []struct {
		runs      []*live.Snapshot
		ops, w    float64
		n         float64
		phase     string
		comment   string
		wantOther bool
	}{
		{[]*live.Snapshot{run(1, "/data/x", "/data", "write-big", 100, 1000)}, 0, 0, 1, "write-big", "running before the first sample: the baseline", false},
		{[]*live.Snapshot{run(1, "/data/x", "/data", "write-big", 150, 1500)}, 50, 500, 1, "write-big", "", false},
		{[]*live.Snapshot{run(1, "/data/x", "/data", "read-big", 170, 1500), run(2, "/data/y", "/data", "stat", 5, 0)},
			75, 500, 2, "read-big,stat", "a second run on the mount starts: all it did counts", false},
		{[]*live.Snapshot{run(2, "/data/y", "/data", "stat", 9, 0), run(3, "/other", "/other", "write-big", 1e6, 1e9)},
			79, 500, 1, "stat", "run 1 ended: nothing goes backwards; a run elsewhere is not ours", false},
		{[]*live.Snapshot{run(2, "/data/y", "/data", "", 4, 0)}, 79, 500, 1, "", "a counter that went backwards adds nothing", false},
		{nil, 79, 500, 0, "", "all ended", false},
	}
	for i, st := range steps {
		now = st.runs
		sm := NewSample(t0)
		if err := src.Collect(context.Background(), sm); err != nil {
			t.Fatal(err)
		}
		if sm.Values["fsbench.ops"] != st.ops || sm.Values["fsbench.write_bytes"] != st.w || sm.Values["fsbench.runs"] != st.n ||
			sm.Text["fsbench.phase"] != st.phase || sm.Values["fsbench.latency_ns"] != st.ops*1000 {
			t.Errorf("step %d (%s): %v %q", i, st.comment, sm.Values, sm.Text["fsbench.phase"])
		}
	}
	// The system-wide view takes every run.
	all := &FSBenchSource{List: func(time.Time) []*live.Snapshot { return now }}
	now = []*live.Snapshot{run(1, "/a", "/a", "x", 1, 1), run(2, "/b", "/b", "y", 1, 1)}
	sm := NewSample(t0)
	_ = all.Collect(context.Background(), sm)
	if sm.Values["fsbench.runs"] != 2 {
		t.Errorf("system-wide: %v", sm.Values)
	}
}
