package stats

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Source reads one kind of metric into a sample.
type Source interface {
	// Name says what the source reads, for error messages.
	Name() string
	// Collect adds the source's values to s. An error leaves the values it
	// could not read out of s (they show as gaps) and is reported once.
	Collect(ctx context.Context, s *Sample) error
}

// Clock is the time the runner sees; tests give it a fake one.
type Clock interface {
	Now() time.Time
	// After returns a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

type realClock struct{}

func (realClock) Now() time.Time                         { return time.Now() }
func (realClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// RealClock is the wall clock.
var RealClock Clock = realClock{}

// Runner samples its sources every Interval and renders one row per
// interval, plus in-place partial rows each second when the renderer shows
// them.
type Runner struct {
	Sources  []Source
	Sections []*Section
	Interval time.Duration // > 0
	Count    int           // stop after this many full rows; 0: until ctx is done
	Render   Renderer
	Clock    Clock // nil: the wall clock
	// Warn is told of a source's error the first time it fails and again
	// when it recovers; nil ignores them.
	Warn func(format string, args ...any)
	// First, when set, is used as the first sample instead of collecting one.
	First *Sample

	failing map[string]bool
}

// partialTick is how often partial rows are refreshed.
const partialTick = time.Second

// Collect takes one sample from every source.
func (r *Runner) Collect(ctx context.Context) *Sample {
	clock := r.clock()
	s := NewSample(clock.Now())
	for _, src := range r.Sources {
		err := safeCollect(ctx, src, s)
		if ctx.Err() != nil {
			return s
		}
		name := src.Name()
		if r.failing == nil {
			r.failing = map[string]bool{}
		}
		switch {
		case err != nil && !r.failing[name]:
			r.failing[name] = true
			r.warn("%v (shown as -)", err)
		case err == nil && r.failing[name]:
			r.failing[name] = false
			r.warn("%s: reading again", name)
		}
	}
	return s
}

// safeCollect runs one source; a panic in a parser (one of a library's,
// on a file the kernel should never write) is an error of that source, not
// the end of the view.
func safeCollect(ctx context.Context, src Source, s *Sample) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%s: %v", src.Name(), p)
		}
	}()
	return src.Collect(ctx, s)
}

func (r *Runner) warn(format string, args ...any) {
	if r.Warn != nil {
		r.Warn(format, args...)
	}
}

func (r *Runner) clock() Clock {
	if r.Clock == nil {
		return RealClock
	}
	return r.Clock
}

// Run renders rows until Count rows are out or ctx is done; a cancelled
// context is a normal end (nil), as Ctrl-C is the usual way to stop.
func (r *Runner) Run(ctx context.Context) error {
	if r.Interval <= 0 {
		return errors.New("stats: interval must be positive")
	}
	if err := r.Render.Start(r.Sections); err != nil {
		return fmt.Errorf("write stats: %w", err)
	}
	clock := r.clock()
	tick := r.Interval
	partial := r.Render.Partial() && r.Interval > partialTick && r.Interval%partialTick == 0
	if partial {
		tick = partialTick
	}
	last := r.First
	if last == nil {
		last = r.Collect(ctx)
	}
	start := last.Time
	rows := 0
	for n := 1; ; n++ {
		// Sleep until the next tick of a fixed grid, so that the
		// collection time does not accumulate as drift.
		next := start.Add(time.Duration(n) * tick)
		now := clock.Now()
		for now.Sub(next) >= tick {
			// A slow source made us miss ticks: skip them rather than
			// print a burst of rows. Rates use the real times, so they
			// stay right.
			n++
			next = next.Add(tick)
		}
		wait := max(next.Sub(now), 0)
		select {
		case <-ctx.Done():
			return r.Render.Close()
		case <-clock.After(wait):
		}
		cur := r.Collect(ctx)
		if ctx.Err() != nil {
			return r.Render.Close()
		}
		full := time.Duration(n)*tick%r.Interval == 0
		row := Compute(r.Sections, last, cur)
		row.Partial = !full
		if err := r.Render.Row(row); err != nil {
			return fmt.Errorf("write stats: %w", err)
		}
		if full {
			last = cur
			rows++
			if r.Count > 0 && rows >= r.Count {
				return r.Render.Close()
			}
		}
	}
}
