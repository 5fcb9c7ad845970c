package train

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

// fakeClock is a clock that moves only when told: Sleep moves it by the
// time slept.
type fakeClock struct{ now time.Duration }

func (c *fakeClock) Now() time.Duration { return c.now }

func (c *fakeClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now += d
	return ctx.Err()
}

// scripted hands out batches after a scripted wait each, on the fake
// clock.
type scripted struct {
	clk      *fakeClock
	waits    []time.Duration
	bytes    int64
	released []int
}

func (s *scripted) wait(_ context.Context, step int) (int64, error) {
	s.clk.now += s.waits[step]
	return s.bytes, nil
}

func (s *scripted) release(step int) { s.released = append(s.released, step) }

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestAcceleratorAU(t *testing.T) {
	cases := []struct {
		name    string
		compute time.Duration
		waits   []time.Duration
		wantAU  float64
		wall    time.Duration
	}{
		// The first step's wait (the readers starting) does not count.
		{"never waits after the first step", ms(100), []time.Duration{ms(900), 0, 0, 0}, 100, ms(300)},
		{"waits as long as it computes", ms(100), []time.Duration{0, ms(100), ms(100), ms(100)}, 50, ms(600)},
		{"uneven waits", ms(200), []time.Duration{ms(50), ms(50), 0, ms(150)}, 75, ms(800)},
		{"no compute", 0, []time.Duration{ms(1), ms(5), ms(5)}, 0, ms(10)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := &fakeClock{now: ms(1000)}
			src := &scripted{clk: clk, waits: c.waits, bytes: 7}
			a := accelerator{clk: clk, compute: c.compute, steps: len(c.waits), meter: nopMeter{}, waits: metrics.NewHistogram()}
			if err := a.epoch(context.Background(), src); err != nil {
				t.Fatal(err)
			}
			ep := a.epochs[0]
			if got := ep.AU(); math.Abs(got-c.wantAU) > 1e-9 {
				t.Errorf("AU %v, want %v", got, c.wantAU)
			}
			if ep.Wall != c.wall.Seconds() {
				t.Errorf("wall %v s, want %v", ep.Wall, c.wall.Seconds())
			}
			var whole time.Duration
			for _, w := range c.waits {
				whole += w + c.compute
			}
			if ep.Seconds != whole.Seconds() {
				t.Errorf("epoch %v s, want %v (first step included)", ep.Seconds, whole.Seconds())
			}
			if n := a.waits.Count(); n != int64(len(c.waits)-1) {
				t.Fatalf("%d waits kept, want %d", n, len(c.waits)-1)
			}
			longest := slices.Max(c.waits[1:])
			if got := a.waits.Summary().Max; math.Abs(got-float64(longest.Microseconds())) > 0.01*float64(longest.Microseconds())+0.001 {
				t.Errorf("longest measured wait %v us, want %v", got, longest)
			}
			if len(src.released) != len(c.waits) {
				t.Errorf("%d batches released, want %d", len(src.released), len(c.waits))
			}
		})
	}
}

// TestTrainingSummary: the epochs' AU is the mean over ranks, the run's
// the mean over epochs, and the deviations are those of the figures.
func TestTrainingSummary(t *testing.T) {
	tr := &report.Training{Epochs: 2, Threshold: 80, Ranks: []report.RankTrain{
		{Rank: 0, Epochs: []report.RankEpoch{{Compute: 9, Wall: 10, Seconds: 11}, {Compute: 6, Wall: 10, Seconds: 12}}},
		{Rank: 1, Epochs: []report.RankEpoch{{Compute: 7, Wall: 10, Seconds: 13}, {Compute: 10, Wall: 10, Seconds: 10}}},
	}}
	tr.Summarize()
	// Epoch 1: 90 and 70, mean 80, stdev 10; epoch 2: 60 and 100, mean 80, stdev 20.
	want := []report.EpochAU{{Epoch: 1, Mean: 80, Stdev: 10, Seconds: 13}, {Epoch: 2, Mean: 80, Stdev: 20, Seconds: 12}}
	for i, e := range tr.EpochAU {
		if math.Abs(e.Mean-want[i].Mean) > 1e-9 || math.Abs(e.Stdev-want[i].Stdev) > 1e-9 || e.Seconds != want[i].Seconds {
			t.Errorf("epoch %d: %+v, want %+v", i+1, e, want[i])
		}
	}
	if math.Abs(tr.AU-80) > 1e-9 || tr.AUStdev > 1e-9 || !tr.Pass {
		t.Errorf("AU %v stdev %v pass %v; want 80, 0, pass", tr.AU, tr.AUStdev, tr.Pass)
	}
	tr.Threshold = 80.5
	tr.Summarize()
	if tr.Pass {
		t.Errorf("AU 80 passes a threshold of 80.5")
	}
	tr.Steps, tr.ComputeSeconds = 11, 0.5
	tr.Summarize()
	// 32 s of computing over 4 epochs of ranks, 10 measured steps each.
	if math.Abs(tr.ComputeMeasured-0.8) > 1e-9 || math.Abs(tr.Overrun()-0.6) > 1e-9 {
		t.Errorf("compute measured %v, overrun %v; want 0.8 s, 0.6", tr.ComputeMeasured, tr.Overrun())
	}
	m, err := report.MergeTraining([]*report.Training{tr, tr})
	if err != nil {
		t.Fatal(err)
	}
	if m.Accelerators != 4 || len(m.Ranks) != 4 || math.Abs(m.AU-80) > 1e-9 {
		t.Errorf("merged: %d accelerators, %d ranks, AU %v; want 4, 4, 80", m.Accelerators, len(m.Ranks), m.AU)
	}
}

// TestAcceleratorStops: a cancelled context ends the epoch at once,
// whether it waits or computes.
func TestAcceleratorStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	clk := NewRealClock()
	a := accelerator{clk: clk, compute: time.Hour, steps: 3, meter: nopMeter{}, waits: metrics.NewHistogram()}
	l := newLoader(1, 0)
	l.reset(3)
	l.done(0, 1)
	t0 := time.Now()
	if err := a.epoch(ctx, l); err == nil {
		t.Fatal("a cancelled epoch returned no error")
	}
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("took %v to stop", d)
	}
}
