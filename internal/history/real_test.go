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

// Real series of one job (4 KiB O_DIRECT random reads on ext4 on a loop
// device; benchmarks/records/history.md): 32 runs of 2 s within minutes on
// a loaded machine (loop-flat), and 32 runs of 5 s under a blkio limit
// spread over an hour while the machine went from busy to quiet
// (loop-hour). Each has no change point in its throughput and no run
// judged outside the runs before it, although its runs differ by more
// than 10%.
func TestRealStationarySeries(t *testing.T) {
	for _, dir := range []string{"loop-flat", "loop-hour"} {
		t.Run(dir, func(t *testing.T) { stationary(t, dir) })
	}
}

func stationary(t *testing.T, dir string) {
	rs, s := readSeries(t, dir)
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

// The same job limited by a blkio throttle on the loop device to 3 MiB/s,
// and to 0.9 of that from run 20 on (benchmarks/records/history.md): the
// change point is found at run 20 plus or minus 2, and runs after it are
// judged outside the 19 runs before.
func TestRealPlantedStep(t *testing.T) {
	rs, s := readSeries(t, "loop-step")
	a := Analyse(s, "randread", ChangeOptions{})
	if len(a.Changes) != 1 || a.Changes[0].Run < 18 || a.Changes[0].Run > 22 {
		t.Fatalf("change points %+v, want one at run 20±2", a.Changes)
	}
	if c := a.Changes[0]; c.ShiftLow > -5 || c.Shift > -5 {
		t.Errorf("shift %.1f%% (%.1f%% to %.1f%%), want about -10%%", c.Shift, c.ShiftLow, c.ShiftHigh)
	}
	before := []*Series{{ID: s.ID, Key: s.Key, Entries: s.Entries[:19]}}
	outside := 0
	for _, r := range rs[19:] {
		outside += CheckResult(before, r, Options{}).Outside
	}
	if outside == 0 {
		t.Errorf("no run after the step judged outside the runs before it")
	}
	t.Logf("%d of %d runs after the step outside the 19 before", outside, len(rs)-19)
}

// A real series whose limit falls by 0.4% of itself at every run from run
// 20 on (about 3% a week at a run a day; benchmarks/records/history.md):
// a history growing a run at a time finds the decline within 10 runs of
// its start, and nothing before it.
func TestRealSlowDecline(t *testing.T) {
	_, s := readSeries(t, "loop-decline")
	found := 0
	for k := 20; k <= len(s.Entries); k++ {
		part := &Series{ID: s.ID, Key: s.Key, Entries: s.Entries[:k]}
		for _, c := range Analyse(part, "randread", ChangeOptions{}).Changes {
			switch {
			case c.Run < 18:
				t.Errorf("with %d runs: a change point at run %d, before the decline", k, c.Run)
			case c.Shift < 0 && found == 0:
				found = k
			}
		}
	}
	if found == 0 || found-19 > 10 {
		t.Fatalf("the decline from run 20 found with %d runs, want within 10 runs of its start", found)
	}
	t.Logf("found with %d runs, %d into the decline", found, found-19)
}
