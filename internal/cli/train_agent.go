package cli

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/train"
)

// trainOnAgent is train on an agent: this host's ranks, and its share of
// the dataset, made in the run's directory that all hosts share (with
// --storage, under the run's key prefix: each host opens the store
// itself). A probe of a search or curve (job.Pace) trains once at its
// rate, on the dataset the probes share; the last removes it.
func trainOnAgent(ctx context.Context, gate cluster.Gate, o *TrainOptions, job *cluster.Job) (*report.Result, error) {
	if o.Storage != "" {
		o.RunDir = trainPrefix(job.RunName)
	} else {
		base, err := runBase(o.Path, job)
		if err != nil {
			return nil, err
		}
		o.RunDir = filepath.Join(base, "dataset")
	}
	o.Host, o.Hosts = job.Index, job.Hosts
	switch p := job.Pace; {
	case p == nil:
	case p.Dataset == cluster.DatasetReuse:
		o.Dataset = o.RunDir
	case p.Dataset == cluster.DatasetRemove:
		return agentRun("train", func(*report.Result) error {
			return train.RemoveShare(o.Options, func() { _ = gate(ctx, cluster.FinishPhase) })
		})
	}
	o.Hooks = train.Hooks{
		PhaseStart: func(name string, e *engine.Engine, total int64, unit string) {
			_ = gate(ctx, name)
			cluster.Meter(ctx, name, total, unit, func() int64 { return e.Live.Ops.Load() })
		},
		// No host opens the dataset to train until every host has made
		// its share of it: the train phase's readers open every file
		// before its start's barrier.
		PhaseEnd: endGate(ctx, gate),
		Finished: func() { _ = gate(ctx, cluster.FinishPhase) },
	}
	return agentRun("train", func(res *report.Result) error {
		if job.Pace != nil {
			o.Capacity = trainPaced(job, res)
		}
		return train.Run(ctx, o.Options, res)
	})
}

// paceTrain readies a probe of a capacity search or curve on an agent
// (job.Pace): the dataset the probes share, made by the first and kept,
// or trained on by the others.
func paceTrain(o *TrainOptions, job *cluster.Job) error {
	p := job.Pace
	if p == nil {
		return nil
	}
	switch p.Dataset {
	case "":
	case cluster.DatasetKeep:
		o.Hold = true
	case cluster.DatasetReuse, cluster.DatasetRemove:
		if o.Dataset != "" || o.Storage != "" {
			return fmt.Errorf("a probe's dataset %q is of a new dataset on a file system", p.Dataset)
		}
	default:
		return fmt.Errorf("unknown probe dataset %q", p.Dataset)
	}
	return nil
}

// trainPaced is train.Options.Capacity on an agent: one training at this
// host's share of the probe's samples per second, long enough for its
// part of the probe's fewest steps; its train phase goes into res.
func trainPaced(job *cluster.Job, res *report.Result) func(context.Context, train.Trainer) error {
	return func(ctx context.Context, trainAt train.Trainer) error {
		_, minSteps := pacedLength(job.Pace, job.Hosts, 0, 0)
		p, err := trainAt(ctx, hostShare(job.Pace.Rate, job.Index, job.Hosts), minSteps)
		res.Phases = append(res.Phases, p)
		return err
	}
}

// trainPrefix is the key prefix of a run's dataset in a store, shared by
// the hosts, as PATH/RUN/dataset is on a file system.
func trainPrefix(run string) string { return run + "/dataset/" }
