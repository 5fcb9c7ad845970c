package cli

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/capacity"
	"github.com/fsbench/fsbench/internal/replay"
	"github.com/fsbench/fsbench/internal/report"
)

// resolveCapacity checks --slo and --curve against the rest of replay's
// command line.
func (o *ReplayOptions) resolveCapacity(cmd *cobra.Command) error {
	if err := o.Cap.resolve(cmd, o.CI.Exprs); err != nil || !o.Cap.active() {
		return err
	}
	switch {
	case cmd.Flags().Changed("speed"):
		return Usagef("--speed sets one pace; --slo and --curve choose the pace themselves: give one or the other")
	}
	return nil
}

// capacityRun is the search or curve of --slo or --curve; nil without.
// Its rates are operations per second, each run the whole log at the
// speed that gives that rate.
func (o *ReplayOptions) capacityRun() *capacityRun {
	if !o.Cap.active() {
		return nil
	}
	return &capacityRun{flags: &o.Cap, phase: "replay", repeat: 1}
}

// replayCapacity is replay.Options.Capacity: the search or curve c over
// the loaded log, each probe a replay of it; the result goes into res.
func replayCapacity(app *App, c *capacityRun, res *report.Result) func(context.Context, *replay.Trace, replay.Player) error {
	return func(ctx context.Context, t *replay.Trace, play replay.Player) error {
		if err := c.replayable(t.Ops(), t.Span); err != nil {
			return err
		}
		return c.run(ctx, app, replayProbe(c, play, float64(t.Ops())/t.Span.Seconds()), res)
	}
}

// replayable checks that logs of ops operations over span (the longest
// log's, with one per host) can be replayed at rates judged by the
// objective, and sets the lowest rate tried: none at which the replay
// would last longer than minProbe.
func (c *capacityRun) replayable(ops int64, span time.Duration) error {
	switch need := c.flags.SLO.MinOps(); {
	case span <= 0:
		return Usagef("the log records no time between its operations: --slo and --curve pace a replay by its recorded times")
	case len(c.flags.SLO) > 0 && ops < need:
		return Usagef("the log holds %d operations and judging %s at a rate needs %d: replay a longer log, or judge a lower percentile",
			ops, c.flags.SLO, need)
	}
	c.minRate = float64(ops) / minProbe.Seconds()
	return nil
}

// replayProbe replays the whole log at a rate of operations per second
// (0: as fast as possible): at the speed that is that rate over recorded,
// the log's operations per second of its span.
func replayProbe(c *capacityRun, play replay.Player, recorded float64) capacity.Probe {
	return func(ctx context.Context, rate float64, _ int64) (capacity.Measurement, error) {
		r := newResult("replay")
		if err := play(ctx, rate/recorded, r); err != nil {
			c.last = r
			return capacity.Measurement{}, err
		}
		return c.measurement(r)
	}
}
