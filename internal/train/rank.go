package train

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/pkg/object"
)

// chunk is the largest read of a sample: bigger samples are read in
// chunks into one buffer, so a reader's memory is bounded.
const chunk = 1 << 20

// trainer is what the ranks of one training run share.
type trainer struct {
	ds     *Dataset
	plan   Plan
	o      *Options
	fds    []int // the files of a packed dataset, open for all readers
	flags  int   // open flags of per-sample files
	bufLen int
	align  int
	ranks  []*rank        // this host's, by engine worker
	store  object.Storage // the dataset's prefix in an object store, or nil
}

// rank is one emulated accelerator with its readers.
type rank struct {
	id      int // across hosts
	t       *trainer
	acc     accelerator
	ld      *loader
	bufs    [][]byte
	samples atomic.Int64
	picks   skew.Counts // Options.Distribution's draws, after each epoch
}

func (t *trainer) newRank(id int) *rank {
	r := &rank{id: id, t: t, ld: newLoader(t.plan.Batch, t.o.Prefetch)}
	clk := t.o.Clock
	if clk == nil {
		clk = NewRealClock
	}
	r.acc = accelerator{clk: clk(), compute: t.o.ComputeTime, steps: t.plan.Steps, waits: metrics.NewHistogram()}
	for range t.o.ReadThreads {
		r.bufs = append(r.bufs, sysio.AlignedBuffer(t.bufLen, t.align))
	}
	return r
}

// run is the rank's task in the engine's train phase: every epoch.
func (r *rank) run(ctx context.Context, w *engine.Worker) error {
	r.acc.meter = &engineMeter{w: w}
	for e := 0; e < r.t.o.Epochs; e++ {
		if err := r.epoch(ctx, e); err != nil {
			return err
		}
	}
	return nil
}

// epoch runs the readers and the accelerator for one epoch.
func (r *rank) epoch(ctx context.Context, e int) error {
	r.ld.reset(r.t.plan.Steps)
	sh := NewShuffle(r.t.plan.Samples, r.t.o.Seed, e)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	unwatch := context.AfterFunc(ctx, func() { r.ld.stop(nil) })
	defer unwatch()
	var wg sync.WaitGroup
	picks := make([]*picker, len(r.bufs))
	for k, buf := range r.bufs {
		picks[k] = r.newPicker(e, k)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := r.read(ctx, sh, buf, picks[k]); err != nil {
				r.ld.stop(err)
			}
		}()
	}
	err := r.acc.epoch(ctx, r.ld)
	r.ld.stop(nil)
	wg.Wait()
	for _, p := range picks {
		if p != nil {
			r.picks.Add(p.s.Take())
		}
	}
	return err
}

// picker draws one reader's samples from Options.Distribution.
type picker struct {
	s   *skew.Sampler
	rnd *rand.Rand
}

// newPicker is reader k's picker in epoch e, nil without a distribution.
func (r *rank) newPicker(e, k int) *picker {
	d := r.t.o.Distribution
	if d.IsUniform() {
		return nil
	}
	seed := r.t.o.Seed ^ uint64(r.id+1)*0x9e3779b97f4a7c15
	return &picker{s: skew.NewSampler(d, r.t.plan.Samples), rnd: rand.New(rand.NewPCG(seed, uint64(e)<<32|uint64(k)))}
}

// read is one reader: it takes the epoch's slots in turn and reads their
// samples into its buffer.
func (r *rank) read(ctx context.Context, sh *Shuffle, buf []byte, pick *picker) error {
	for {
		slot, ok := r.ld.take()
		if !ok {
			return nil
		}
		i := r.t.plan.Sample(sh, r.id, int(slot))
		if pick != nil {
			i = pick.s.Pick(pick.rnd)
		}
		var n int64
		var err error
		if r.t.store != nil {
			n, err = r.t.getSample(ctx, i, buf)
		} else {
			n, err = r.t.readSample(i, buf)
		}
		if err != nil {
			return err
		}
		r.samples.Add(1)
		r.ld.done(slot, n)
	}
}

// readSample reads sample i whole, chunk by chunk, into buf.
func (t *trainer) readSample(i int, buf []byte) (int64, error) {
	f, off, size := t.ds.Locate(i)
	fd := -1
	if t.fds != nil {
		fd = t.fds[f]
	} else {
		var err error
		if fd, err = t.open(f); err != nil {
			return 0, fmt.Errorf("open %s: %w", t.ds.Path(f), err)
		}
		defer unix.Close(fd)
	}
	for done := int64(0); done < size; {
		n, err := unix.Pread(fd, buf[:min(int64(len(buf)), size-done)], off+done)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return done, fmt.Errorf("read %s at %d: %w", t.ds.Path(f), off+done, err)
		case n == 0:
			return done, fmt.Errorf("read %s at %d: %w (the file is shorter than the dataset says)", t.ds.Path(f), off+done, io.ErrUnexpectedEOF)
		}
		done += int64(n)
	}
	return size, nil
}

// figures is what the rank measured, for the result.
func (r *rank) figures() report.RankTrain {
	return report.RankTrain{Rank: r.id, Epochs: r.acc.epochs, Samples: r.samples.Load()}
}

// engineMeter times a step's wait as one operation of the engine.
type engineMeter struct {
	w  *engine.Worker
	st engine.Start
}

func (m *engineMeter) begin() bool {
	var ok bool
	m.st, ok = m.w.Begin()
	return ok
}

func (m *engineMeter) end(n int64) {
	m.w.End(m.st, n)
}
