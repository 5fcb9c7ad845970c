package train

import (
	"context"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/tick"
)

// Clock is the time an accelerator runs on: the real one in a run, a fake
// one in tests of the arithmetic.
type Clock interface {
	// Now is the time since an origin of the clock's own, monotonic.
	Now() time.Duration
	// Sleep waits d, or until ctx ends (then it returns ctx's error).
	Sleep(ctx context.Context, d time.Duration) error
}

// realClock is the monotonic clock, with one timer reused for every sleep.
type realClock struct {
	t0      time.Time
	sleeper tick.Sleeper
}

// NewRealClock returns a clock on the real time.
func NewRealClock() Clock { return &realClock{t0: time.Now()} }

func (c *realClock) Now() time.Duration { return time.Since(c.t0) }

func (c *realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	if !c.sleeper.Sleep(d, ctx.Done()) {
		return ctx.Err()
	}
	return nil
}

// batches is where an accelerator gets its batches from.
type batches interface {
	// wait blocks until batch step is complete and returns its bytes.
	wait(ctx context.Context, step int) (int64, error)
	// release gives the batch's place back to the readers.
	release(step int)
}

// stepMeter times each step's wait in the engine (a latency sample per
// step); begin returns false when the phase is stopped.
type stepMeter interface {
	begin() bool
	end(bytes int64)
}

// accelerator is one rank's compute loop and what it measured.
type accelerator struct {
	clk     Clock
	compute time.Duration
	steps   int
	meter   stepMeter
	epochs  []report.RankEpoch
	// waits holds the wait for a batch of each measured step (the first
	// of each epoch is not), for the AU's interval.
	waits *metrics.Histogram
}

// epoch runs one epoch: for each step, wait for the batch, then compute
// on it. AU counts from the end of the first step: compute time over
// the time from there to the end of the last step (DLIO's definition).
func (a *accelerator) epoch(ctx context.Context, src batches) error {
	var ep report.RankEpoch
	start := a.clk.Now()
	var from time.Duration
	for s := 0; s < a.steps; s++ {
		if !a.meter.begin() {
			return ctx.Err()
		}
		t0 := a.clk.Now()
		n, err := src.wait(ctx, s)
		if err != nil {
			return err
		}
		a.meter.end(n)
		t1 := a.clk.Now()
		t2 := t1
		if a.compute > 0 {
			// Without compute, none is counted: the time of a sleep of
			// nothing is the machine's scheduling, and on a busy one it
			// made the AU of accelerators that never compute 20 to 60%.
			if err := a.clk.Sleep(ctx, a.compute); err != nil {
				return err
			}
			t2 = a.clk.Now()
		}
		src.release(s)
		if s == 0 {
			from = t2
			continue
		}
		ep.Compute += (t2 - t1).Seconds()
		a.waits.Record(t1 - t0)
	}
	end := a.clk.Now()
	ep.Wall, ep.Seconds = (end - from).Seconds(), (end - start).Seconds()
	a.epochs = append(a.epochs, ep)
	return nil
}

// nopMeter measures nothing (tests).
type nopMeter struct{}

func (nopMeter) begin() bool { return true }
func (nopMeter) end(int64)   {}
