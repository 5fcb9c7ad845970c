package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/capacity"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/train"
)

// resolveCapacity checks --slo and --curve against the rest of train's
// command line.
func (o *TrainOptions) resolveCapacity(cmd *cobra.Command) error {
	if err := o.Cap.resolve(cmd, o.CI.Exprs); err != nil || !o.Cap.active() {
		return err
	}
	switch {
	case o.FindMax:
		return Usagef("--find-max searches accelerator counts and --slo or --curve sample rates: give one of them")
	case o.Cluster.active() && o.Storage != "":
		return Usagef("--slo and --curve on train with --hosts share a dataset on a file system: with --storage, run them on one host")
	}
	return nil
}

// capacityRun is the search or curve of --slo or --curve; nil without.
// Its rates are samples per second: each step of an accelerator, the
// latency sample, is a batch.
func (o *TrainOptions) capacityRun() *capacityRun {
	if !o.Cap.active() {
		return nil
	}
	return &capacityRun{flags: &o.Cap, phase: "train", repeat: o.Repeat, unit: "samples", per: float64(o.BatchSize)}
}

// trainCapacity is train.Options.Capacity: the search or curve c, each
// probe a training on the one dataset; its steps, and the answer's or
// every step's train phase, go into res after the dataset's generation.
func trainCapacity(app *App, c *capacityRun, res *report.Result) func(context.Context, train.Trainer) error {
	return func(ctx context.Context, trainAt train.Trainer) error {
		out := &report.Result{}
		err := c.run(ctx, app, trainProbe(c, trainAt), out)
		res.Phases = append(res.Phases, out.Phases...)
		res.Capacity = out.Capacity
		return err
	}
}

// trainProbe trains at a rate of steps per second (0: as fast as the
// readers go), as samples per second, long enough for minOps steps.
func trainProbe(c *capacityRun, trainAt train.Trainer) capacity.Probe {
	return func(ctx context.Context, rate float64, minOps int64) (capacity.Measurement, error) {
		p, err := trainAt(ctx, rate*c.scale(), minOps)
		r := &report.Result{Phases: []report.PhaseResult{p}}
		if err != nil {
			c.last = r
			return capacity.Measurement{}, err
		}
		return c.measurement(r)
	}
}
