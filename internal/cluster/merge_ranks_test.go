package cluster

import (
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
)

// A checkpoint phase of two hosts: the ranks of both, in host order, each
// naming its host; the cost is the aggregate time (the slowest rank's end
// after the first start).
func TestMergeCheckpointRanks(t *testing.T) {
	t0 := time.Unix(1000, 0)
	part := func(first int, secs float64) *report.Result {
		p := hostPhase(t, 64, secs, time.Millisecond)
		p.Name, p.Cost = "write", report.Measure{Unit: "s", Value: secs}
		for i := range 2 {
			p.Ranks = append(p.Ranks, report.RankPhase{Rank: first + i, Shard: first + i, Bytes: 32 << 20, Seconds: secs})
		}
		return &report.Result{Phases: []report.PhaseResult{p}}
	}
	base := &report.Result{}
	err := Merge(base, []HostResult{
		{Address: "a:1", Result: part(0, 1), Starts: map[string]time.Time{"write": t0}},
		{Address: "b:1", Result: part(2, 2), Starts: map[string]time.Time{"write": t0.Add(time.Second)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	p := base.Phases[0]
	if len(p.Ranks) != 4 || p.Cost.Value != 3 || p.Cost.Unit != "s" {
		t.Fatalf("%d ranks, cost %+v; want 4 ranks and 3 s", len(p.Ranks), p.Cost)
	}
	for i, r := range p.Ranks {
		want := map[bool]string{true: "a:1", false: "b:1"}[i < 2]
		if r.Rank != i || r.Host != want {
			t.Errorf("rank row %d: %+v, want rank %d on %s", i, r, i, want)
		}
	}
}
