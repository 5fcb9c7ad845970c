package train

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

// judged runs ranks accelerators on fake clocks for epochs of steps each,
// the batch of a step arriving after wait(rank, epoch, step), and returns
// the training figures judged as a run judges them.
func judged(t *testing.T, ranks, epochs, steps int, threshold float64, wait func(r, e, s int) time.Duration) *report.Training {
	t.Helper()
	compute := ms(224)
	tr := &report.Training{Epochs: epochs, Steps: steps, Threshold: threshold, ComputeSeconds: compute.Seconds()}
	var rs []*rank
	for r := range ranks {
		clk := &fakeClock{}
		rk := &rank{id: r, acc: accelerator{clk: clk, compute: compute, steps: steps, meter: nopMeter{}, waits: metrics.NewHistogram()}}
		for e := range epochs {
			ws := make([]time.Duration, steps)
			for s := range ws {
				ws[s] = wait(r, e, s)
			}
			if err := rk.acc.epoch(context.Background(), &scripted{clk: clk, waits: ws}); err != nil {
				t.Fatal(err)
			}
		}
		rs = append(rs, rk)
	}
	if err := addRanks(tr, rs); err != nil {
		t.Fatal(err)
	}
	return tr
}

// firstOnly is a run whose readers keep up after the first batch.
func firstOnly(_, _, s int) time.Duration {
	if s == 0 {
		return ms(300)
	}
	return 0
}

// TestAUOneStallTooShort: the shape of `train --model resnet50
// -p 2 --dataset-files 4 --epochs 1` (two ranks, 6 steps, 10 measured)
// is too short to judge whether one step stalls or none does, wherever
// the stall falls and however long it is: never FAIL, never PASS.
func TestAUOneStallTooShort(t *testing.T) {
	for _, stall := range []time.Duration{ms(30), ms(271), time.Second, 10 * time.Second} {
		for rank := range 2 {
			for step := 1; step < 6; step++ {
				tr := judged(t, 2, 1, 6, 90, func(r, e, s int) time.Duration {
					if r == rank && s == step {
						return stall
					}
					return firstOnly(r, e, s)
				})
				if tr.Verdict != report.VerdictTooShort || tr.MeasuredSteps != 10 {
					t.Errorf("stall of %v at rank %d step %d: AU %.2f%%, %d measured steps: %s (%s); want too short to judge",
						stall, rank, step, tr.AU, tr.MeasuredSteps, tr.Verdict, tr.VerdictReason)
				}
			}
		}
	}
	tr := judged(t, 2, 1, 6, 90, firstOnly)
	if tr.Verdict != report.VerdictTooShort || tr.AU != 100 {
		t.Errorf("no stall: AU %.2f%%: %s; want 100%%, too short to judge", tr.AU, tr.Verdict)
	}
	if !strings.Contains(tr.VerdictReason, "10 measured steps, an AU against 90% needs 100") {
		t.Errorf("reason %q does not say how many steps are needed", tr.VerdictReason)
	}
	// Too few steps to pass, but every step stalled: the whole interval is
	// below the threshold, and more steps could not lift it: FAIL.
	all := judged(t, 2, 1, 6, 90, func(int, int, int) time.Duration { return time.Second })
	if all.Verdict != report.VerdictFail || all.AU > 20 || !strings.Contains(all.VerdictReason, "wholly below") {
		t.Errorf("every step stalled, 10 measured: AU %.2f%%: %s (%s); want FAIL, the interval wholly below", all.AU, all.Verdict, all.VerdictReason)
	}
}

// TestAUAllStalledFails: when every one of many steps waits, the whole
// interval is under the threshold: FAIL.
func TestAUAllStalledFails(t *testing.T) {
	tr := judged(t, 2, 2, 60, 90, func(int, int, int) time.Duration { return ms(100) })
	if tr.Verdict != report.VerdictFail || tr.MeasuredSteps != 236 {
		t.Fatalf("AU %.2f%% over %d steps: %s (%s); want FAIL over 236", tr.AU, tr.MeasuredSteps, tr.Verdict, tr.VerdictReason)
	}
	if *tr.AUHigh >= 90 || *tr.AULow > tr.AU || *tr.AUHigh < tr.AU {
		t.Errorf("interval %.2f-%.2f%% around AU %.2f%%; want it below 90%%, holding the AU", *tr.AULow, *tr.AUHigh, tr.AU)
	}
}

// TestAUNoStallsPass: no waits over enough steps: PASS, the interval
// at 100%.
func TestAUNoStallsPass(t *testing.T) {
	tr := judged(t, 2, 2, 60, 90, firstOnly)
	if tr.Verdict != report.VerdictPass || *tr.AULow < 99.9 {
		t.Fatalf("AU %.2f%% (%.2f-%.2f%%): %s (%s); want PASS", tr.AU, *tr.AULow, *tr.AUHigh, tr.Verdict, tr.VerdictReason)
	}
	// One stall as long as the tiny run's does not fail a run of 118
	// measured steps, nor leave it undecided.
	one := judged(t, 2, 1, 60, 90, func(r, e, s int) time.Duration {
		if r == 1 && s == 30 {
			return ms(271)
		}
		return firstOnly(r, e, s)
	})
	if one.Verdict != report.VerdictPass {
		t.Errorf("one stall in 118 steps: AU %.2f%% (%.2f-%.2f%%): %s (%s); want PASS", one.AU, *one.AULow, *one.AUHigh, one.Verdict, one.VerdictReason)
	}
}

// TestAUStraddles: a tenth of the steps wait as long as they compute: the
// AU (90.8%) is near the threshold, and the steps cannot tell on which
// side it lies.
func TestAUStraddles(t *testing.T) {
	tr := judged(t, 2, 2, 60, 90, func(r, e, s int) time.Duration {
		if s%10 == 5 {
			return ms(224)
		}
		return firstOnly(r, e, s)
	})
	if tr.Verdict != report.VerdictTooShort || !strings.Contains(tr.VerdictReason, "straddles the threshold") {
		t.Fatalf("AU %.2f%% (%.2f-%.2f%%): %s (%s); want too short to judge", tr.AU, *tr.AULow, *tr.AUHigh, tr.Verdict, tr.VerdictReason)
	}
	if *tr.AULow >= 90 || *tr.AUHigh < 90 {
		t.Errorf("interval %.2f-%.2f%% does not hold 90%%", *tr.AULow, *tr.AUHigh)
	}
}

// steady hands out every batch after the same wait, keeping nothing.
type steady struct {
	clk   *fakeClock
	delay time.Duration
}

func (s steady) wait(context.Context, int) (int64, error) {
	s.clk.now += s.delay
	return 1, nil
}

func (steady) release(int) {}

// TestWaitsNoAllocation: keeping the measured steps' waits allocates
// nothing per step: an epoch of 1,000 steps allocates as much as one of
// ten.
func TestWaitsNoAllocation(t *testing.T) {
	allocs := func(steps int) float64 {
		clk := &fakeClock{}
		a := accelerator{clk: clk, compute: ms(1), steps: steps, meter: nopMeter{}, waits: metrics.NewHistogram()}
		return testing.AllocsPerRun(5, func() {
			a.epochs = a.epochs[:0]
			if err := a.epoch(context.Background(), steady{clk: clk, delay: ms(3)}); err != nil {
				t.Fatal(err)
			}
		})
	}
	if few, many := allocs(10), allocs(1000); many > few {
		t.Errorf("an epoch of 1000 steps allocates %v times, one of 10 %v times", many, few)
	}
}
