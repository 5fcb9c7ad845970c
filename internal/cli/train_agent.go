package cli

import (
	"context"
	"path/filepath"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/train"
)

// trainOnAgent is train on an agent: this host's ranks, and its share of
// the dataset, made in the run's directory that all hosts share (with
// --storage, under the run's key prefix: each host opens the store
// itself).
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
	return agentRun("train", func(res *report.Result) error { return train.Run(ctx, o.Options, res) })
}

// trainPrefix is the key prefix of a run's dataset in a store, shared by
// the hosts, as PATH/RUN/dataset is on a file system.
func trainPrefix(run string) string { return run + "/dataset/" }
