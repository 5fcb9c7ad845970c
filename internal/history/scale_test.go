package history

import (
	"bytes"
	"context"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
)

// A history of 10,000 results in a directory loads, is analysed (every
// figure's change points) and checked, and the planted step at run 5,000
// is found. Time and memory are logged, not asserted (see
// benchmarks/records/history.md).
func TestTenThousandResults(t *testing.T) {
	const n = 10000
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir, object.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(9, 9))
	for i := range n {
		v := 100 + rng.NormFloat64()*3
		if i >= n/2 {
			v -= 10
		}
		if i == 0 {
			if _, err := st.Add(ctx, result(i, v, 4096), ""); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// The entries alone, as Add writes them: Load reads nothing else.
		e := EntryOf(result(i, v, 4096), "")
		if err := st.putJSON(ctx, "series/"+e.Series+"/"+e.name(), e); err != nil {
			t.Fatal(err)
		}
	}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	start := time.Now()
	all, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	loaded := time.Since(start)
	as := Analyses(all, ChangeOptions{})
	analysed := time.Since(start)
	var b bytes.Buffer
	if err := Show(&b, all, ShowOptions{Last: 60}); err != nil {
		t.Fatal(err)
	}
	c := CheckResult(all, result(n, 70, 4096), Options{})
	total := time.Since(start)
	runtime.ReadMemStats(&m1)
	t.Logf("%d results: load %v, analyse %v, show and check %v; allocated %.1f MiB, heap in use %.1f MiB, from the OS %.1f MiB",
		n, loaded, analysed-loaded, total-analysed, float64(m1.TotalAlloc-m0.TotalAlloc)/(1<<20), float64(m1.HeapInuse)/(1<<20), float64(m1.Sys)/(1<<20))
	if len(as) != 1 || as[0].Runs != n {
		t.Fatalf("loaded %d series", len(as))
	}
	found := false
	for _, ch := range as[0].Figures[0].Changes {
		found = found || ch.Index == n/2
	}
	if !found || c.Outside != 1 {
		t.Errorf("step at %d: changes %v; a run at 70: outside %d", n/2, as[0].Figures[0].Changes, c.Outside)
	}
}
