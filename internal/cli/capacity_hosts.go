package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/capacity"
	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/report"
)

// probeHooks are a command's own part in the probes of a search or curve
// on hosts (train's, replay's); bench and objbench need none.
type probeHooks interface {
	// oneRun reports whether every probe runs in one run's directory
	// (train's shared dataset) rather than each in its own.
	oneRun() bool
	// pace completes the job of a probe, whose Pace holds the runner's
	// rate, total across the hosts.
	pace(job *cluster.Job)
	// probed sees each probe's merged result, failed or not.
	probed(res *report.Result)
	// end is called once the search or curve is over, with its result
	// and error; it returns the run's error.
	end(ctx context.Context, d *clusterDriver, res *report.Result, err error) error
}

// capacity runs the search or curve (--slo, --curve) on the hosts, each
// probe a run on all of them, and fills res as on one host.
func (d *clusterDriver) capacity(ctx context.Context, res *report.Result) error {
	err := d.c.capacity.run(ctx, d.app, d.probe(), res)
	if h := d.c.probes; h != nil {
		err = h.end(ctx, d, res, err)
	}
	return err
}

// probe is a probe of the capacity search or curve on the hosts: the
// phase at a rate (0: closed loop), total across them, long enough for
// minOps operations of all of them, as benchProbe does on one host.
func (d *clusterDriver) probe() capacity.Probe {
	cr := d.c.capacity
	return func(ctx context.Context, rate float64, minOps int64) (capacity.Measurement, error) {
		pace := &cluster.Pace{Rate: rate}
		if rate > 0 && minOps > 0 {
			if cr.duration > 0 {
				pace.Duration = stretched(cr.duration, rate, minOps)
			} else {
				pace.MinOps = minOps
			}
		}
		res := newResult(d.c.command)
		err := d.run(ctx, res, pace)
		if h := d.c.probes; h != nil {
			h.probed(res)
		}
		if err != nil {
			cr.last = res
			return capacity.Measurement{}, err
		}
		return cr.measurement(res)
	}
}

// trainProbes are train's part in the probes on hosts: the rates are of
// samples, and, as on one host, the dataset is made once, by the first
// probe (which keeps it), and trained on by every probe after; the last
// step removes it unless --keep. With --dataset, every probe trains on
// that one.
type trainProbes struct {
	// samples is the samples per step (the batch), share makes the
	// dataset (no --dataset), keep is --keep.
	samples     float64
	share, keep bool
	// path is PATH, asked records the first probe's asking to make the
	// dataset, generate is its generate phase, held that the hosts hold
	// a complete dataset.
	path     string
	asked    bool
	generate []report.PhaseResult
	held     bool
}

func (t *trainProbes) oneRun() bool { return t.share }

func (t *trainProbes) pace(job *cluster.Job) {
	job.Pace.Rate *= t.samples
	switch {
	case !t.share:
	case !t.asked:
		t.asked, job.Pace.Dataset = true, cluster.DatasetKeep
	default:
		job.Pace.Dataset, job.Need = cluster.DatasetReuse, 0 // made already
	}
}

func (t *trainProbes) probed(res *report.Result) {
	if p := res.FindPhase("generate"); p != nil && t.generate == nil {
		t.generate = []report.PhaseResult{*p}
		t.held = t.share && !p.Incomplete
	}
}

func (t *trainProbes) end(ctx context.Context, d *clusterDriver, res *report.Result, err error) error {
	if res.FindPhase("generate") == nil {
		res.Phases = append(append([]report.PhaseResult{}, t.generate...), res.Phases...)
	}
	if !t.held {
		return err
	}
	dir := filepath.Join(t.path, d.c.job.RunName, "dataset")
	if t.keep { // the hosts said so on stderr as they kept it
		res.Warnings = append(res.Warnings, fmt.Sprintf("keeping the dataset in %s", dir))
		return err
	}
	if rerr := t.remove(ctx, d); rerr != nil {
		msg := fmt.Sprintf("the dataset the probes shared may be left in %s: %v", dir, rerr)
		d.app.Warnf("%s", msg)
		res.Warnings = append(res.Warnings, msg)
	}
	return err
}

// remove has every host remove its share of the dataset the probes
// shared, even once the run is interrupted.
func (t *trainProbes) remove(ctx context.Context, d *clusterDriver) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	defer cancel()
	job := d.c.job
	job.Pace, job.Need = &cluster.Pace{Dataset: cluster.DatasetRemove}, 0
	parts, err := d.coord.Run(ctx, job)
	d.bars.end()
	var failed []string
	for _, p := range parts {
		if p.Err != "" {
			failed = append(failed, p.Address+": "+p.Err)
		}
	}
	if err == nil && len(failed) > 0 {
		err = fmt.Errorf("%s", strings.Join(failed, "; "))
	}
	return err
}

// replayProbes are replay's part in the probes on hosts: each probe's
// rate is a speed, the same on every host, over the recorded operations
// per second of the logs together; each host replays its log, or its
// share of the one log, whole at it.
type replayProbes struct{ recorded float64 }

func (*replayProbes) oneRun() bool { return false }

func (r *replayProbes) pace(job *cluster.Job) { job.Pace.Speed = job.Pace.Rate / r.recorded }

func (*replayProbes) probed(*report.Result) {}

func (*replayProbes) end(_ context.Context, _ *clusterDriver, _ *report.Result, err error) error {
	return err
}
