package engine

import (
	"context"
	"math"
	"sync"
	"testing"

	"github.com/fsbench/fsbench/internal/skew"
)

// TestSkewedTasks: with a zipf distribution each worker's picks of its own
// tasks fall mostly on its first ones, one pass is as many picks as tasks,
// and the result states the distribution and the measured hot share.
func TestSkewedTasks(t *testing.T) {
	e := New(2)
	e.Seed(7)
	spec, _ := skew.Parse("zipf:1.2")
	var mu sync.Mutex
	seen := make([]int, 20_000)
	p := Phase{Name: "p", Tasks: len(seen), Random: true, Skew: spec, SkewOf: "files",
		Do: func(w *Worker, task, pass int) error {
			mu.Lock()
			seen[task]++
			mu.Unlock()
			return op(1)(w, task, pass)
		}}
	r, err := e.Run(context.Background(), p)
	if err != nil || r.Ops != int64(len(seen)) {
		t.Fatalf("%d ops, %v", r.Ops, err)
	}
	// The hottest 1% of each worker's 10,000 tasks: its first 100.
	hot := 0
	for _, lo := range []int{0, 10_000} {
		for _, n := range seen[lo : lo+100] {
			hot += n
		}
	}
	if len(r.Access) != 1 {
		t.Fatalf("access %+v", r.Access)
	}
	a := r.Report().Access[0]
	if a.Distribution != "zipf:1.2" || a.Of != "files" || a.Picks != int64(len(seen)) || a.Items != 10_000 {
		t.Errorf("access %+v", a)
	}
	if got := 100 * float64(hot) / float64(len(seen)); math.Abs(got-a.Top1Pct) > 0.01 || math.Abs(a.Top1Pct-a.Want1Pct) > 2 {
		t.Errorf("hottest 1%%: %.2f%% of the picks, reported %.2f%%, the distribution's %.2f%%", got, a.Top1Pct, a.Want1Pct)
	}
	// Uniform picks report nothing; a shared phase is never skewed.
	for _, q := range []Phase{{Name: "u", Tasks: 100, Random: true, Do: op(1)},
		{Name: "s", Tasks: 100, Shared: true, Random: true, Skew: spec, Do: op(1)}} {
		if r, err := e.Run(context.Background(), q); err != nil || len(r.Access) != 0 || r.Ops != 100 {
			t.Errorf("%s: %d ops, access %+v, %v", q.Name, r.Ops, r.Access, err)
		}
	}
}
