package train

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/verdict"
)

// newTrainer readies the ranks of this host for a run of accel
// accelerators per host; close releases its files.
func (r *run) newTrainer(accel int) (*trainer, error) {
	plan, err := NewPlan(r.ds.Samples(), accel*max(r.o.Hosts, 1), r.o.BatchSize)
	if err != nil {
		return nil, err
	}
	t := &trainer{ds: r.ds, plan: plan, o: r.o, flags: unix.O_RDONLY | unix.O_CLOEXEC, align: 1, store: r.store}
	if r.o.Direct {
		if r.ds.Align < 512 {
			return nil, badf("--direct: the dataset in %s was not made for direct I/O (make it with --direct)", r.ds.Dir())
		}
		t.flags |= sysio.DirectFlag
		t.align = max(r.align.Mem, sysio.DefaultAlign)
	}
	t.bufLen = int(min(chunk, r.ds.MaxSample()))
	if r.ds.PerFile > 1 && r.store == nil {
		if err := t.openFiles(); err != nil {
			return nil, err
		}
	}
	for i := range accel {
		t.ranks = append(t.ranks, t.newRank(r.o.Host*accel+i))
	}
	return t, nil
}

// openFiles opens the record files of a packed dataset once, for every
// reader: a record reader keeps its files open and reads by offset.
func (t *trainer) openFiles() error {
	for f := 0; f < t.ds.Files; f++ {
		fd, err := t.open(f)
		if err != nil {
			t.close()
			return fmt.Errorf("open %s: %w", t.ds.Path(f), err)
		}
		t.fds = append(t.fds, fd)
	}
	return nil
}

// open opens file f of the dataset to read it: with O_NOATIME where the
// kernel allows it when the files are not fsbench's own, so that training
// on them leaves their access times alone.
func (t *trainer) open(f int) (int, error) {
	if t.ds.Existing() {
		return sysio.OpenNoAtime(t.ds.Path(f), t.flags)
	}
	return unix.Open(t.ds.Path(f), t.flags, 0)
}

func (t *trainer) close() {
	for _, fd := range t.fds {
		unix.Close(fd)
	}
	t.fds = nil
}

// train runs the train phase with accel accelerators on this host.
func (r *run) train(ctx context.Context, accel int) (report.PhaseResult, *report.Training, error) {
	t, err := r.newTrainer(accel)
	if err != nil {
		return report.PhaseResult{Name: "train", Title: "Train", Incomplete: true}, nil, err
	}
	defer t.close()
	if n := reliableSteps(r.o.Prefetch); t.plan.Steps < n && !r.o.FindMax && r.o.Capacity == nil {
		r.warn("each accelerator computes %d steps per epoch: the %d batches read ahead before the first (unmeasured) step flatter the AU; --dataset-files %d gives %d steps",
			t.plan.Steps, r.o.Prefetch, filesFor(r.ds, n*t.plan.Batch*t.plan.Ranks), n)
	}
	p := engine.Phase{Name: "train", Title: "Train " + r.o.Model, Tasks: accel, Rate: r.o.rate / float64(r.o.BatchSize),
		Do: func(w *engine.Worker, task, _ int) error { return t.ranks[task].runIn(ctx, w) }}
	total := int64(t.plan.Steps) * int64(r.o.Epochs) * int64(accel)
	reading := r.probe.Begin(ctx, r.ds.Paths(), r.res.CacheDrop == "drop_caches")
	res, err := r.runPhase(ctx, engine.New(accel), &p, total, "steps")
	tr, ferr := r.figures(t, res)
	err = errors.Join(err, ferr)
	out := res.Report()
	if w := reading.End(ctx, &out, out.Bytes); w != "" {
		r.warn("%s", w)
	}
	out.Items = tr.Samples
	if d := r.o.Distribution; !d.IsUniform() {
		var c skew.Counts
		for _, rk := range t.ranks {
			c.Add(rk.picks)
		}
		out.Access = append(out.Access, engine.AccessReport(d, "samples", c))
	}
	out.SetRates()
	out.Value = report.Measure{Value: out.ItemsPerSec, Unit: report.UnitSamplesPerSec}
	out.Cost = AUMeasure(tr)
	out.LatencyOf = fmt.Sprintf("accelerator wait for a batch of %d samples", r.o.BatchSize)
	tr.SamplesPerSec, tr.BytesPerSec = out.ItemsPerSec, out.BytesPerSec
	if o := tr.Overrun(); o > maxOverrun && !res.Incomplete {
		r.warn("the accelerators computed %.0f%% longer than asked (%s per step, not %s): this client is too busy to emulate %d accelerators on time; AU counts the time measured, as DLIO does",
			100*o, units.FormatLatency(tr.ComputeMeasured*1e6), units.FormatLatency(tr.ComputeSeconds*1e6), accel)
	}
	if err != nil {
		err = phaseError("train", err)
	}
	return out, tr, err
}

// paced is the run's Trainer: one training at rate, long enough for
// minSteps steps, its accelerators computing nothing.
func (r *run) paced(ctx context.Context, rate float64, minSteps int64) (report.PhaseResult, error) {
	if r.trained > 0 {
		r.dropCaches()
	}
	r.trained++
	saved := *r.o
	defer func() { *r.o = saved }()
	r.o.rate, r.o.ComputeTime = rate, 0
	if plan, err := NewPlan(r.ds.Samples(), r.o.ranks(), r.o.BatchSize); err == nil && minSteps > 0 {
		per := int64(plan.Steps) * int64(r.o.Accelerators)
		r.o.Epochs = max(r.o.Epochs, int((minSteps+per-1)/per))
	}
	p, _, err := r.train(ctx, r.o.Accelerators)
	// No AU: the accelerators computed nothing. The cost is the mean
	// wait for a batch, from when it was due.
	p.Cost = report.Measure{Value: p.Latency.Mean / 1000, Unit: report.UnitMsPerOp}
	return p, err
}

// maxOverrun is the share by which computing may overrun the time asked
// before the run says it was not emulated faithfully.
const maxOverrun = 0.1

// reliableSteps is the fewest steps per epoch whose AU the batches read
// ahead at the start do not flatter much: three times the window.
func reliableSteps(prefetch int) int { return 3 * (prefetch + 1) }

// filesFor is the files of ds's shape that hold n samples.
func filesFor(ds *Dataset, n int) int { return (n + ds.PerFile - 1) / ds.PerFile }

// AUMeasure is the cost column of a train phase: its AU, graded by its
// verdict (fair when too short to judge), or against the threshold when
// it was not judged.
func AUMeasure(t *report.Training) report.Measure {
	m := report.Measure{Value: t.AU, Unit: report.UnitAUPercent, Grade: report.Good}
	switch {
	case t.Verdict == report.VerdictTooShort:
		m.Grade = report.Fair
	case t.Verdict == report.VerdictFail, t.Verdict == "" && !t.Pass:
		m.Grade = report.Poor
	}
	return m
}

// runIn runs the rank in an engine worker, stopped with the phase.
func (rk *rank) runIn(ctx context.Context, w *engine.Worker) error {
	ctx, cancel := workerContext(ctx, w)
	defer cancel()
	return rk.run(ctx, w)
}

// workerContext is ctx, also cancelled when the engine stops w's phase.
func workerContext(ctx context.Context, w *engine.Worker) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-w.Cancelled():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// figures gathers the ranks' measurements into the training figures and
// judges the AU.
func (r *run) figures(t *trainer, res *engine.Result) (*report.Training, error) {
	tr := &report.Training{
		Model: r.o.Model, Accelerator: r.o.Accelerator, Accelerators: len(t.ranks), Epochs: r.o.Epochs,
		Steps: t.plan.Steps, BatchSize: t.plan.Batch, Dropped: t.plan.Dropped(),
		ComputeSeconds: r.o.ComputeTime.Seconds(), Threshold: r.o.AUThreshold,
		DatasetBytes: r.ds.Bytes, MemoryBytes: sysio.MemoryBytes(),
	}
	return tr, addRanks(tr, t.ranks)
}

// addRanks adds the ranks' figures and measured waits to tr, then
// computes its AU and judges it.
func addRanks(tr *report.Training, ranks []*rank) error {
	waits := metrics.NewHistogram()
	for _, rk := range ranks {
		f := rk.figures()
		tr.Ranks = append(tr.Ranks, f)
		tr.Samples += f.Samples
		waits.Merge(rk.acc.waits)
	}
	tr.Summarize()
	if err := tr.SetWaits(waits); err != nil {
		return err
	}
	return verdict.JudgeAU(tr)
}

// checkMemory warns when the dataset is under five times the clients'
// memory (MLPerf Storage's rule): the page cache may serve the reads.
func (r *run) checkMemory() {
	mem := sysio.MemoryBytes() * int64(max(r.o.Hosts, 1))
	if mem == 0 || r.ds.Bytes >= 5*mem {
		return
	}
	perFile := r.ds.Bytes / int64(r.ds.Files)
	need := (5*mem + perFile - 1) / max(perFile, 1)
	r.warn("the dataset (%s) is under 5x the client memory (%s): the page cache may serve reads, unlike MLPerf Storage's rule; --dataset-files %d would reach it",
		units.FormatBytes(r.ds.Bytes), units.FormatBytes(mem), need)
}

// params are the run's parameters; the dataset's ratios (--compress-ratio,
// --dedupe-ratio) are those it was written at, a kept one's too.
func (r *run) params() report.Params {
	o, ds := r.o, r.ds
	layout := "one sample per file"
	switch {
	case ds.PerFile > 1 && r.store != nil:
		layout = "record objects read by ranged GETs"
	case ds.PerFile > 1:
		layout = "record files read by offset"
	case r.store != nil:
		layout = "one sample per object"
	}
	itoa := strconv.Itoa
	return append(report.Params{
		{Key: "model", Label: "Model", Value: o.Model, Display: o.Model},
		{Key: "accelerator", Label: "Accelerator", Value: o.Accelerator, Display: o.Accelerator},
		{Key: "accelerators", Label: "Accelerators", Value: o.ranks(), Display: itoa(o.ranks())},
		{Key: "threads", Value: o.Accelerators, Display: itoa(o.Accelerators)},
		{Key: "files", Label: "Files", Value: ds.Files, Display: itoa(ds.Files)},
		{Key: "samples_per_file", Label: "SamplesPerFile", Value: ds.PerFile, Display: itoa(ds.PerFile)},
		{Key: "sample_size", Label: "SampleSize", Value: ds.Mean, Display: units.FormatBytes(ds.Mean)},
		{Key: "sample_size_stdev", Label: "Stdev", Value: ds.Stdev, Display: units.FormatBytes(ds.Stdev)},
		{Key: "dataset_bytes", Label: "Dataset", Value: ds.Bytes, Display: units.FormatBytes(ds.Bytes)},
		{Key: "layout", Value: layout, Display: layout},
		{Key: "batch_size", Label: "Batch", Value: o.BatchSize, Display: itoa(o.BatchSize)},
		{Key: "read_threads", Label: "ReadThreads", Value: o.ReadThreads, Display: itoa(o.ReadThreads)},
		{Key: "prefetch", Label: "Prefetch", Value: o.Prefetch, Display: itoa(o.Prefetch)},
		{Key: "epochs", Label: "Epochs", Value: o.Epochs, Display: itoa(o.Epochs)},
		compute(o),
		{Key: "au_threshold", Label: "AUThreshold", Value: o.AUThreshold, Display: strconv.FormatFloat(o.AUThreshold, 'g', -1, 64) + "%"},
		{Key: "seed", Value: o.Seed, Display: strconv.FormatUint(o.Seed, 10)},
		report.Switch("direct", "Direct", o.Direct),
		{Key: "storage", Label: flagLabel(o.Storage != "", "Storage"), Value: o.Storage, Display: o.Storage},
	}, report.DataParams(ds.Compress, ds.Dedupe)...)
}

// compute is the parameter of the accelerators' compute time: none when
// a schedule paces them (Options.Capacity).
func compute(o *Options) report.Param {
	if o.Capacity != nil {
		return report.Param{Key: "compute_time", Label: "Compute", Value: 0.0, Display: "none (a rate paces the accelerators)"}
	}
	return report.Param{Key: "compute_time", Label: "Compute", Value: o.ComputeTime.Seconds(), Display: o.ComputeTime.String()}
}

// flagLabel is label, or "" (off the parameter line) when not on.
func flagLabel(on bool, label string) string {
	if on {
		return label
	}
	return ""
}
