package compare

import (
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
)

// single is a result of one run at t0+minutes: phase "write" at value
// MiB/s, without latency samples, on a machine of that load.
func single(minutes int, value, load float64) *report.Result {
	r := res(phaseN("write", value, "MiB/s", 0, 0, 0))
	r.StartedAt = time.Date(2026, 12, 8, 1, minutes, 0, 0, time.UTC)
	r.Host.Load = load
	r.Usage.Seconds, r.Usage.CPUPercent = 10, value
	return r
}

// TestGather: results of one job made at different times become one
// result whose runs are theirs in the order they started, summarised as
// --repeat summarises.
func TestGather(t *testing.T) {
	two := repeated(60, 80) // a --repeat 2 result, started between the others
	two.StartedAt = time.Date(2026, 12, 8, 1, 2, 0, 0, time.UTC)
	for i := range two.Runs {
		two.Runs[i].StartedAt = two.StartedAt.Add(time.Duration(i) * time.Second)
		two.Runs[i].Phases[0].Latency.Count = 0
	}
	parts := []*report.Result{single(5, 100, 3), two, single(1, 50, 1)}
	for _, p := range parts {
		p.Warnings = []string{"the target is on tmpfs"}
	}
	g, err := Gather(parts, []string{"c.json", "b.json", "a.json"})
	if err != nil {
		t.Fatal(err)
	}
	var got []float64
	for i, r := range g.Runs {
		if r.Index != i+1 {
			t.Errorf("run %d has index %d", i+1, r.Index)
		}
		got = append(got, r.Phases[0].Value.Value)
	}
	if want := []float64{50, 60, 80, 100}; len(got) != 4 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] || got[3] != want[3] {
		t.Errorf("runs in order of start: %v, want %v", got, want)
	}
	p := g.FindPhase("write")
	if p == nil || p.Spread == nil || p.Spread.Runs != 4 || p.Value.Value != 70 {
		t.Fatalf("summary: %+v", p)
	}
	if !g.StartedAt.Equal(time.Date(2026, 12, 8, 1, 1, 0, 0, time.UTC)) || g.Runs[0].Load != 1 || g.Runs[3].Load != 3 {
		t.Errorf("started %v, loads %v and %v", g.StartedAt, g.Runs[0].Load, g.Runs[3].Load)
	}
	if len(g.Warnings) != 1 {
		t.Errorf("warnings %q: each once", g.Warnings)
	}
	if g.Usage.Seconds != 20 || g.Usage.CPUPercent != 75 { // two has no usage
		t.Errorf("usage %+v, want 20 s at 75%% CPU", g.Usage)
	}
	if len(parts[0].Runs) != 0 || len(two.Runs) != 2 {
		t.Error("gathering changed the results it was given")
	}

	// A gathered side against another is judged over all its runs.
	r, err := Compare(g, g, "old", "new", Options{})
	if err != nil || r.OldRuns != 4 || r.NewRuns != 4 {
		t.Errorf("compare of gathered sides: %v, %d and %d runs", err, r.OldRuns, r.NewRuns)
	}

	// One result is itself.
	if g1, err := Gather(parts[:1], []string{"c.json"}); err != nil || g1 != parts[0] {
		t.Errorf("one result: %v", err)
	}
}

// TestGatherRefuses: results of other commands or other parameters are
// not runs of one job.
func TestGatherRefuses(t *testing.T) {
	obj := single(2, 10, 0)
	obj.Command = "objbench"
	threads := single(2, 10, 0)
	threads.Parameters = report.Params{{Key: "threads", Value: 8}}
	for _, tt := range []struct {
		other *report.Result
		want  string
	}{
		{obj, "a.json and b.json are not runs of one job: a.json is from fsbench bench, b.json from fsbench objbench"},
		{threads, "a.json and b.json are not runs of one job: parameter threads differs (4 and 8)"},
	} {
		_, err := Gather([]*report.Result{single(1, 10, 0), tt.other}, []string{"a.json", "b.json"})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("got %v, want %q", err, tt.want)
		}
	}
	if _, err := Gather(nil, nil); err == nil {
		t.Error("nothing gathered without an error")
	}
}
