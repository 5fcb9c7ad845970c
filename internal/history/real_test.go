package history

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
)

// readSeries reads the results in testdata/dir into one series each, in
// file order.
func readSeries(t *testing.T, dir string) ([]*report.Result, *Series) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", dir, "r*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no results in testdata/%s (%v)", dir, err)
	}
	var rs []*report.Result
	var es []Entry
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		r, err := report.ReadJSON(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rs = append(rs, r)
		es = append(es, EntryOf(r, filepath.Base(f)))
	}
	all := group(es)
	if len(all) != 1 {
		t.Fatalf("testdata/%s: %d series", dir, len(all))
	}
	return rs, all[0]
}

// A real series of one job (4 KiB O_DIRECT random reads for 2 s on ext4 on
// a loop device, 32 runs on a loaded machine; benchmarks/records/history.md)
// has no change point in its throughput and no run judged outside the runs
// before it, although its runs differ by far more than 10%.
func TestRealStationarySeries(t *testing.T) {
	rs, s := readSeries(t, "loop-flat")
	a := Analyse(s, "randread", ChangeOptions{})
	lo, hi := a.Values[0], a.Values[0]
	for _, v := range a.Values {
		lo, hi = min(lo, v), max(hi, v)
	}
	if hi < lo*1.1 {
		t.Fatalf("the runs differ by %.0f%% at most: not the series this test is about", (hi/lo-1)*100)
	}
	if len(a.Changes) != 0 {
		t.Errorf("change points in a series without a change: %+v", a.Changes)
	}
	for i := MinRuns; i < len(rs); i++ {
		before := &Series{ID: s.ID, Key: s.Key, Entries: s.Entries[:i]}
		if c := CheckResult([]*Series{before}, rs[i], Options{}); c.Outside != 0 {
			t.Errorf("run %d judged outside the %d runs before it: %s", i+1, i, c.Verdict())
		}
	}
}
