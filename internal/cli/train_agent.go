package cli

import (
	"context"
	"path/filepath"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/train"
)

// trainJob is train on an agent: this host's ranks, and its share of the
// dataset, made in the run's directory that all hosts share.
type trainJob struct {
	o   *TrainOptions
	job *cluster.Job
}

func (j *trainJob) Target() string { return j.o.Path }

func (j *trainJob) Run(ctx context.Context, gate cluster.Gate) (*report.Result, error) {
	o, job := j.o, j.job
	abs, err := filepath.Abs(o.Path)
	if err != nil {
		return nil, err
	}
	o.RunDir = filepath.Join(abs, job.RunName, "dataset")
	o.Host, o.Hosts = job.Index, job.Hosts
	o.Hooks = train.Hooks{
		PhaseStart: func(name string, _ *engine.Engine, _ int64, _ string) { _ = gate(ctx, name) },
		Finished:   func() { _ = gate(ctx, cluster.FinishPhase) },
	}
	return agentRun("train", func(res *report.Result) error { return train.Run(ctx, o.Options, res) })
}
