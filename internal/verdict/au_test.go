package verdict

import (
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

func TestMinSteps(t *testing.T) {
	for _, c := range []struct {
		threshold float64
		want      int64
	}{{90, 100}, {70, 34}, {99, 1000}, {50, 20}, {0, 10}, {100, 10000}, {99.99, 10000}} {
		if got := MinSteps(c.threshold); got != c.want {
			t.Errorf("MinSteps(%g) = %d, want %d", c.threshold, got, c.want)
		}
	}
}

// tinyRun is the training figures of one run of two ranks with five
// measured steps each, computing 224 ms a step and waiting as given
// (rank 0's five steps, then rank 1's).
func tinyRun(t *testing.T, waits ...time.Duration) *report.Training {
	t.Helper()
	tr := &report.Training{Epochs: 1, Steps: 6, Threshold: 90, Accelerators: 2}
	h := metrics.NewHistogram()
	for r := range 2 {
		e := report.RankEpoch{Compute: 5 * 0.224, Wall: 5 * 0.224}
		for _, w := range waits[5*r : 5*r+5] {
			e.Wall += w.Seconds()
			h.Record(w)
		}
		tr.Ranks = append(tr.Ranks, report.RankTrain{Rank: r, Epochs: []report.RankEpoch{e}})
	}
	tr.Summarize()
	if err := tr.SetWaits(h); err != nil {
		t.Fatal(err)
	}
	if err := JudgeAU(tr); err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestJudgeAURepeats: each run of ten measured steps is too short to
// judge; the runs of --repeat 10 together hold the 100 steps an AU
// against 90% needs, and are judged over all of them, the same from the
// same figures.
func TestJudgeAURepeats(t *testing.T) {
	quiet := make([]time.Duration, 10)
	stall := make([]time.Duration, 10)
	stall[3] = 271 * time.Millisecond
	res := &report.Result{}
	for i := range 10 {
		w := quiet
		if i == 4 {
			w = stall
		}
		run := tinyRun(t, w...)
		if run.Verdict != report.VerdictTooShort || !strings.Contains(run.VerdictReason, "10 measured steps") {
			t.Fatalf("run %d: %s (%s); want too short to judge", i+1, run.Verdict, run.VerdictReason)
		}
		res.Runs = append(res.Runs, report.Run{Index: i + 1, Training: run})
	}
	if err := SummarizeRuns(res); err != nil {
		t.Fatal(err)
	}
	tr := res.Training
	if tr.MeasuredSteps != 100 || tr.Verdict != report.VerdictPass || tr.AULow == nil || *tr.AULow < 90 {
		t.Fatalf("10 runs: %d steps, AU %.2f%%: %s (%s); want PASS over 100 steps", tr.MeasuredSteps, tr.AU, tr.Verdict, tr.VerdictReason)
	}
	if *tr.AULow > tr.AU || *tr.AUHigh < tr.AU || *tr.AULow == *tr.AUHigh {
		t.Errorf("interval %.3f-%.3f%% around AU %.3f%%: want it to hold the AU and the stall to widen it", *tr.AULow, *tr.AUHigh, tr.AU)
	}
	lo, hi := *tr.AULow, *tr.AUHigh
	if err := JudgeAU(tr); err != nil || *tr.AULow != lo || *tr.AUHigh != hi {
		t.Errorf("judged again: %.6f-%.6f%%, first %.6f-%.6f%% (%v); the bootstrap's seed is fixed", *tr.AULow, *tr.AUHigh, lo, hi, err)
	}
}

// TestJudgeAUNoWaits: figures without measured waits (an older result)
// are too short to judge, without an interval.
func TestJudgeAUNoWaits(t *testing.T) {
	tr := &report.Training{Epochs: 1, Threshold: 90,
		Ranks: []report.RankTrain{{Epochs: []report.RankEpoch{{Compute: 9, Wall: 10}}}}}
	tr.Summarize()
	if err := JudgeAU(tr); err != nil {
		t.Fatal(err)
	}
	if tr.Verdict != report.VerdictTooShort || tr.AULow != nil {
		t.Errorf("no waits: %s, interval %v; want too short to judge, none", tr.Verdict, tr.AULow)
	}
	tr.WaitHistogram, tr.MeasuredSteps = "not a histogram", 5
	if err := JudgeAU(tr); err == nil {
		t.Error("a broken histogram gave no error")
	}
}

// TestJudgeAURunsDisagree: runs of --repeat whose own AUs lie on both
// sides of the threshold (five never wait, five wait 100 ms every step)
// are too short to judge, although their steps pooled would fail.
func TestJudgeAURunsDisagree(t *testing.T) {
	quiet := make([]time.Duration, 10)
	slow := make([]time.Duration, 10)
	for i := range slow {
		slow[i] = 100 * time.Millisecond
	}
	res := &report.Result{}
	for i := range 10 {
		w := quiet
		if i%2 == 1 {
			w = slow
		}
		res.Runs = append(res.Runs, report.Run{Index: i + 1, Training: tinyRun(t, w...)})
	}
	if err := SummarizeRuns(res); err != nil {
		t.Fatal(err)
	}
	tr := res.Training
	if tr.Verdict != report.VerdictTooShort || !strings.Contains(tr.VerdictReason, "the 10 runs' AUs (69.") ||
		*tr.AULow > 69.2 || *tr.AUHigh < 100 {
		t.Errorf("AU %.2f%% (%.2f-%.2f%%): %s (%s); want too short to judge, the interval holding every run's AU",
			tr.AU, *tr.AULow, *tr.AUHigh, tr.Verdict, tr.VerdictReason)
	}
	pooled := *tr
	if err := JudgeAU(&pooled); err != nil || pooled.Verdict != report.VerdictFail {
		t.Errorf("the steps alone: %s (%v); want FAIL", pooled.Verdict, err)
	}
}
