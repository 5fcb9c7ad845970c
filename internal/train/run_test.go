package train

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
)

// small is a model small enough for a test: 8 files of 10 samples of
// 4 KiB +- 1 KiB, batches of 4 for 3 accelerators (6 steps each), 1 ms
// of computation per batch.
func small(path string) Options {
	return Options{
		Path: path, Model: "small", Accelerator: "test", Accelerators: 3,
		Files: 8, SamplesPerFile: 10, SampleSize: 4096, SampleStdev: 1024,
		BatchSize: 4, ReadThreads: 2, Prefetch: 1, Epochs: 2, ComputeTime: time.Millisecond,
		AUThreshold: 1, Seed: 9, GenThreads: 2,
	}
}

// wantRead is the samples and bytes a run of o reads: the shards of every
// rank in every epoch, whole batches only.
func wantRead(t *testing.T, o Options, sizeSeed uint64) (samples, bytes int64) {
	t.Helper()
	d := NewDataset("", o.Files, o.SamplesPerFile, o.SampleSize, o.SampleStdev, sizeSeed, 1)
	p, err := NewPlan(d.Samples(), o.ranks(), o.BatchSize)
	if err != nil {
		t.Fatal(err)
	}
	for e := range o.Epochs {
		s := NewShuffle(p.Samples, o.Seed, e)
		for r := range p.Ranks {
			for j := range p.Steps * p.Batch {
				_, _, size := d.Locate(p.Sample(s, r, j))
				samples++
				bytes += size
			}
		}
	}
	return samples, bytes
}

// TestRunCounts: a run on a tmpfs reads exactly steps x batch x ranks
// samples per epoch, their bytes, and leaves nothing behind; both
// layouts.
func TestRunCounts(t *testing.T) {
	dir := testenv.Tmpfs(t, "64m")
	for _, perFile := range []int{10, 1} {
		o := small(dir)
		o.SamplesPerFile, o.DropCaches = perFile, true
		if perFile == 1 {
			o.Files = 80
		}
		var res report.Result
		if err := Run(context.Background(), o, &res); err != nil {
			t.Fatalf("%d per file: %v", perFile, err)
		}
		samples, bytes := wantRead(t, o, o.Seed)
		gen, tr := res.FindPhase("generate"), res.FindPhase("train")
		ds := NewDataset("", o.Files, o.SamplesPerFile, o.SampleSize, o.SampleStdev, o.Seed, 1)
		if gen == nil || gen.Items != int64(o.Files) || gen.Bytes != ds.Bytes || gen.Errors != 0 {
			t.Fatalf("%d per file: generate %+v, want %d files of %d bytes", perFile, gen, o.Files, ds.Bytes)
		}
		steps := int64(res.Training.Steps * o.Epochs * o.Accelerators)
		if tr.Items != samples || tr.Bytes != bytes || tr.Ops != steps || tr.Latency.Count != steps || tr.Incomplete {
			t.Errorf("%d per file: train read %d samples, %d bytes in %d steps (%d waits); want %d, %d, %d",
				perFile, tr.Items, tr.Bytes, tr.Ops, tr.Latency.Count, samples, bytes, steps)
		}
		f := res.Training
		if f.Samples != samples || samples != int64(f.Steps*f.BatchSize*f.Accelerators*f.Epochs) || f.Dropped != 80-int64(f.Steps*f.BatchSize*3) {
			t.Errorf("%d per file: figures %+v", perFile, f)
		}
		for _, r := range f.Ranks {
			if r.Samples != samples/3 || len(r.Epochs) != 2 {
				t.Errorf("rank %d read %d samples in %d epochs, want %d in 2", r.Rank, r.Samples, len(r.Epochs), samples/3)
			}
		}
		if f.AU <= 0 || f.AU > 100 || !f.Pass {
			t.Errorf("AU %v pass %v", f.AU, f.Pass)
		}
		checkEmpty(t, dir)
	}
}

func checkEmpty(t *testing.T, dir string) {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if e.Name() != "users-file" {
			t.Errorf("left behind in %s: %s", dir, e.Name())
		}
	}
}

// TestRunKeepReuse: a kept dataset trains again with --dataset, without
// being generated or removed.
func TestRunKeepReuse(t *testing.T) {
	dir := testenv.Tmpfs(t, "64m")
	o := small(dir)
	o.Keep = true
	var first report.Result
	if err := Run(context.Background(), o, &first); err != nil {
		t.Fatal(err)
	}
	m, _ := filepath.Glob(filepath.Join(dir, "fsbench-*"))
	if len(m) != 1 {
		t.Fatalf("kept: %v", m)
	}
	again := small(dir)
	again.Dataset, again.Seed = m[0], 5 // the sizes are the dataset's own; the order is the new seed's
	var res report.Result
	if err := Run(context.Background(), again, &res); err != nil {
		t.Fatal(err)
	}
	o.Seed = 5
	samples, bytes := wantRead(t, o, 9) // sizes of seed 9: the first run's
	if res.FindPhase("generate") != nil || res.FindPhase("train").Items != samples || res.FindPhase("train").Bytes != bytes {
		t.Errorf("reuse: phases %v", res.Phases)
	}
	if _, err := OpenDataset(m[0]); err != nil {
		t.Errorf("the dataset did not survive its reuse: %v", err)
	}
}

// TestRunInterrupt: a cancel in each phase stops the run, marks it
// interrupted, and removes everything it made.
func TestRunInterrupt(t *testing.T) {
	dir := testenv.Tmpfs(t, "256m")
	if err := os.WriteFile(filepath.Join(dir, "users-file"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, phase := range []string{"generate", "train"} {
		t.Run(phase, func(t *testing.T) {
			o := small(dir)
			o.Files, o.SamplesPerFile, o.SampleSize, o.SampleStdev = 2000, 1, 16384, 0
			o.ComputeTime = 20 * time.Millisecond
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var in atomic.Bool
			o.Hooks.PhaseStart = func(name string, e *engine.Engine, _ int64, _ string) {
				if name != phase {
					return
				}
				go func() {
					for e.Live.Ops.Load() < 2 {
						time.Sleep(time.Millisecond)
					}
					in.Store(e.Current() != nil)
					cancel()
				}()
			}
			var res report.Result
			err := Run(ctx, o, &res)
			if !errors.Is(err, context.Canceled) || !res.Interrupted || !in.Load() {
				t.Fatalf("err %v, interrupted %v, cancelled in the phase %v", err, res.Interrupted, in.Load())
			}
			last := res.Phases[len(res.Phases)-1]
			if last.Name != phase || !last.Incomplete {
				t.Errorf("last phase %s incomplete %v, want %s incomplete", last.Name, last.Incomplete, phase)
			}
			checkEmpty(t, dir)
			if b, _ := os.ReadFile(filepath.Join(dir, "users-file")); string(b) != "mine" {
				t.Errorf("the user's file changed")
			}
		})
	}
}

// TestRunFindMax: the search ends on the largest count that passed, and
// names its phase train.
func TestRunFindMax(t *testing.T) {
	dir := testenv.Tmpfs(t, "64m")
	o := small(dir)
	o.Accelerators, o.FindMax, o.Epochs = 1, true, 1
	var res report.Result
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	tr := res.Training
	if tr == nil || len(tr.FindMax) < 2 {
		t.Fatalf("figures %+v", tr)
	}
	if tr.Steps < reliableSteps(o.Prefetch) {
		t.Errorf("the search tried a count with %d steps per epoch", tr.Steps)
	}
	best := 0
	for _, x := range tr.FindMax {
		if x.Pass {
			best = max(best, x.Accelerators)
		}
	}
	if p := res.FindPhase("train"); p == nil || tr.Accelerators != best || !strings.HasSuffix(p.Title, "x"+strconv.Itoa(best)) {
		t.Errorf("train phase %v, figures of %d accelerators; want the best, %d", p, tr.Accelerators, best)
	}
	checkEmpty(t, dir)
}

// TestRunDirect: with O_DIRECT, sample sizes are rounded up to the
// alignment and every sample is still read whole.
func TestRunDirect(t *testing.T) {
	o := small(t.TempDir())
	o.Direct = true
	var res report.Result
	err := Run(context.Background(), o, &res)
	if errors.Is(err, sysio.ErrDirectUnsupported) {
		testenv.Unavailable(t, "a file system with O_DIRECT: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	f, gen := res.Training, res.FindPhase("generate")
	plain := NewDataset("", o.Files, o.SamplesPerFile, o.SampleSize, o.SampleStdev, o.Seed, 1)
	if f.Samples != int64(f.Steps*f.BatchSize*f.Accelerators*f.Epochs) || gen.Bytes%512 != 0 || gen.Bytes <= plain.Bytes {
		t.Errorf("read %d samples; generated %d bytes (%d unaligned)", f.Samples, gen.Bytes, plain.Bytes)
	}
	checkEmpty(t, o.Path)
}

// TestMemoryBounded: a rank's memory is its readers' buffers, at most a
// chunk each, and a counter per batch of the window: neither grows with
// the batch size or the prefetch depth.
func TestMemoryBounded(t *testing.T) {
	for _, c := range []struct{ batch, prefetch int }{{1, 0}, {1000, 0}, {1000, 5000}} {
		o := small("/x")
		o.Files, o.SamplesPerFile, o.SampleSize, o.SampleStdev = 4000, 1, 8<<20, 0
		o.BatchSize, o.Prefetch, o.Accelerators, o.ReadThreads = c.batch, c.prefetch, 2, 3
		r := &run{o: &o, ds: NewDataset("/x", o.Files, 1, o.SampleSize, 0, 1, 1)}
		tr, err := r.newTrainer(2)
		if err != nil {
			t.Fatal(err)
		}
		for _, rk := range tr.ranks {
			var n int
			for _, b := range rk.bufs {
				n += cap(b)
			}
			if len(rk.bufs) != 3 || n != 3*chunk || len(rk.ld.filled) != c.prefetch+1 {
				t.Errorf("batch %d prefetch %d: %d buffers of %d bytes in all, window %d", c.batch, c.prefetch, len(rk.bufs), n, len(rk.ld.filled))
			}
		}
	}
}

// TestRunKeepOnlyComplete: --keep interrupted during the generation keeps
// nothing (a partial dataset that --dataset would refuse), and says so;
// interrupted during training, the dataset is complete, kept, and opens.
func TestRunKeepOnlyComplete(t *testing.T) {
	dir := testenv.Tmpfs(t, "256m")
	for _, phase := range []string{"generate", "train"} {
		t.Run(phase, func(t *testing.T) {
			o := small(dir)
			o.Keep = true
			o.Files, o.SamplesPerFile, o.SampleSize, o.SampleStdev = 2000, 1, 16384, 0
			o.ComputeTime = 20 * time.Millisecond
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o.Hooks.PhaseStart = func(name string, e *engine.Engine, _ int64, _ string) {
				if name == phase {
					go func() {
						for e.Live.Ops.Load() < 2 {
							time.Sleep(time.Millisecond)
						}
						cancel()
					}()
				}
			}
			var res report.Result
			if err := Run(ctx, o, &res); !errors.Is(err, context.Canceled) {
				t.Fatalf("err %v, want cancelled", err)
			}
			kept, _ := filepath.Glob(filepath.Join(dir, "fsbench-*"))
			warnings := strings.Join(res.Warnings, "\n")
			if phase == "generate" {
				if len(kept) != 0 || !strings.Contains(warnings, "not keeping the dataset in ") {
					t.Errorf("kept %v, warnings %q; want nothing kept and a warning", kept, warnings)
				}
				return
			}
			if len(kept) != 1 || !strings.Contains(warnings, "keeping the dataset in "+kept[0]) {
				t.Fatalf("kept %v, warnings %q", kept, warnings)
			}
			if _, err := OpenDataset(kept[0]); err != nil {
				t.Errorf("the kept dataset does not open: %v", err)
			}
			if err := os.RemoveAll(kept[0]); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestRunNoRoom: a dataset larger than the free space is refused before
// anything is written, naming both sizes.
func TestRunNoRoom(t *testing.T) {
	dir := testenv.Tmpfs(t, "16m")
	o := small(dir)
	o.Files, o.SamplesPerFile, o.SampleSize, o.SampleStdev = 2000, 1, 16384, 0 // 31.25 MiB
	var res report.Result
	err := Run(context.Background(), o, &res)
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "the dataset needs 31.25 MiB and "+dir+" has 16 MiB free") ||
		!strings.Contains(err.Error(), "free; give fewer --dataset-files") {
		t.Errorf("err %v", err)
	}
	if res.FindPhase("generate") != nil {
		t.Errorf("generated: %+v", res.Phases)
	}
	checkEmpty(t, dir)
}

// TestRunDistribution: with a distribution, the readers of every rank
// draw their samples from it over the whole dataset, as many as without
// one, and the train phase says how they fell.
func TestRunDistribution(t *testing.T) {
	o := small(t.TempDir())
	o.Distribution = skew.Spec{Kind: skew.Zoned, Zones: []skew.Zone{{Access: 90, Size: 10}, {Access: 10, Size: 90}}}
	var res report.Result
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	tr := res.FindPhase("train")
	samples, _ := wantRead(t, o, o.Seed)
	if tr == nil || tr.Items != samples || len(tr.Access) != 1 {
		t.Fatalf("train %+v", tr)
	}
	a := tr.Access[0]
	if a.Of != "samples" || a.Items != 80 || a.Picks != samples || a.Want10Pct != 90 || a.Top10Pct < 75 {
		t.Errorf("access %+v", a)
	}
}
