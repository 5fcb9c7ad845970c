package objbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// item is one performance item: count tasks shared by the threads.
type item struct {
	name  string // stable metric name
	title string // JuiceFS's title
	count int
	// capability is "fs" for items that need file attributes.
	capability string
	// do runs task i on thread w and returns the bytes it moved.
	do func(ctx context.Context, w *worker, i int) (int64, error)
	// bytes: the value is MiB/s (data items), else objects/s.
	bytes bool
	// latencyOf says what one latency sample times.
	latencyOf string
	// objects is how many objects one task covers (a list covers many).
	objects int
	grade   [4]float64 // value fair/good, cost good/fair (JuiceFS's ranges)
}

// worker is one thread's state: its buffer and its own measurements,
// merged when the item ends.
type worker struct {
	id        int
	buf       []byte
	hist      *metrics.Histogram
	ttfb      *metrics.Histogram
	ops       int64
	bytes     int64
	errs      int64
	throttled int64
	samples   []string
	ttfbStart time.Time // when the current task began
}

const maxSamples = 5

// newWorkers makes one worker per thread. Workers, their buffers and their
// histograms live for the whole run: items reset them rather than
// allocate afresh, so a run makes little garbage.
func (r *run) newWorkers() {
	bufSize := max(r.o.BlockSize, r.o.SmallObjectSize)
	for i := range r.o.Threads {
		r.workers = append(r.workers, &worker{id: i, buf: make([]byte, bufSize), hist: metrics.NewHistogram(), ttfb: metrics.NewHistogram()})
	}
	r.hist, r.ttfb = metrics.NewHistogram(), metrics.NewHistogram()
}

func (w *worker) reset() {
	w.hist.Reset()
	w.ttfb.Reset()
	w.ops, w.bytes, w.errs, w.throttled = 0, 0, 0, 0
	w.samples = w.samples[:0]
}

// JuiceFS's colour ranges: value fair above [0], good above [1]; cost good
// below [2], fair below [3].
var (
	gradeBig   = [4]float64{100, 150, 50, 150}
	gradeSmall = [4]float64{10, 30, 30, 100}
	gradeList  = [4]float64{1000, 10000, 100, 200}
)

func bigKey(i int) string   { return "big/" + strconv.Itoa(i) }
func smallKey(i int) string { return "small/" + strconv.Itoa(i) }

// anyKey names task i of the items that touch every object: the small
// objects, then the blocks of the big one.
func (r *run) anyKey(i int) string {
	if i < r.o.SmallObjects {
		return smallKey(i)
	}
	return bigKey(i - r.o.SmallObjects)
}

func (r *run) items() []item {
	o := r.o
	nBig := int(o.bigCount())
	all := o.SmallObjects + nBig
	lastBig := o.BigObjectSize - int64(nBig-1)*o.BlockSize
	bigSize := func(i int) int64 {
		if i == nBig-1 {
			return lastBig
		}
		return o.BlockSize
	}
	listCount := min(all, object.DefaultListLimit)
	fsOp := func(fn func(ctx context.Context, f object.FileSystem, key string) error) func(ctx context.Context, w *worker, i int) (int64, error) {
		f := object.AsFileSystem(r.store)
		return func(ctx context.Context, w *worker, i int) (int64, error) {
			return 0, fn(ctx, f, r.anyKey(i))
		}
	}
	uid, gid := os.Getuid(), os.Getgid()
	return []item{
		{name: "upload", title: "upload objects", count: nBig, bytes: true, objects: 1, grade: gradeBig,
			latencyOf: units.FormatBytes(o.BlockSize) + " put",
			do: func(ctx context.Context, w *worker, i int) (int64, error) {
				return r.put(ctx, w, bigKey(i), bigSize(i))
			}},
		{name: "download", title: "download objects", count: nBig, bytes: true, objects: 1, grade: gradeBig,
			latencyOf: units.FormatBytes(o.BlockSize) + " get",
			do: func(ctx context.Context, w *worker, i int) (int64, error) {
				return r.get(ctx, w, bigKey(i), bigSize(i))
			}},
		{name: "put-small", title: "put small objects", count: o.SmallObjects, objects: 1, grade: gradeSmall,
			latencyOf: units.FormatBytes(o.SmallObjectSize) + " put",
			do: func(ctx context.Context, w *worker, i int) (int64, error) {
				return r.put(ctx, w, smallKey(i), o.SmallObjectSize)
			}},
		{name: "get-small", title: "get small objects", count: o.SmallObjects, objects: 1, grade: gradeSmall,
			latencyOf: units.FormatBytes(o.SmallObjectSize) + " get",
			do: func(ctx context.Context, w *worker, i int) (int64, error) {
				return r.get(ctx, w, smallKey(i), o.SmallObjectSize)
			}},
		{name: "list", title: "list objects", count: o.Threads, objects: listCount, grade: gradeList,
			latencyOf: "list of " + strconv.Itoa(listCount) + " objects",
			do: func(ctx context.Context, w *worker, i int) (int64, error) {
				page, err := r.store.List(ctx, object.ListOptions{Limit: listCount})
				if err == nil && len(page.Objects) < listCount {
					err = fmt.Errorf("list: %d objects, expected %d", len(page.Objects), listCount)
				}
				return 0, err
			}},
		{name: "head", title: "head objects", count: all, objects: 1, grade: gradeSmall, latencyOf: "head",
			do: func(ctx context.Context, w *worker, i int) (int64, error) {
				_, err := r.store.Head(ctx, r.anyKey(i))
				return 0, err
			}},
		{name: "chmod", title: "change permissions", count: all, objects: 1, grade: gradeSmall, latencyOf: "chmod", capability: "fs",
			do: fsOp(func(ctx context.Context, f object.FileSystem, key string) error { return f.Chmod(ctx, key, 0o755) })},
		{name: "chown", title: "change owner/group", count: all, objects: 1, grade: gradeSmall, latencyOf: "chown", capability: "fs",
			do: fsOp(func(ctx context.Context, f object.FileSystem, key string) error { return f.Chown(ctx, key, uid, gid) })},
		{name: "chtimes", title: "update mtime", count: all, objects: 1, grade: gradeSmall, latencyOf: "chtimes", capability: "fs",
			do: fsOp(func(ctx context.Context, f object.FileSystem, key string) error {
				return f.Chtimes(ctx, key, time.Now())
			})},
		{name: "delete", title: "delete objects", count: all, objects: 1, grade: gradeSmall, latencyOf: "delete",
			do: func(ctx context.Context, w *worker, i int) (int64, error) {
				return 0, r.store.Delete(ctx, r.anyKey(i))
			}},
	}
}

// displayOrder is JuiceFS's order of the table; items run in the order of
// items() (delete last, as it removes what the others use).
var displayOrder = []string{"upload", "download", "put-small", "get-small", "list", "head", "delete", "chmod", "chown", "chtimes"}

// performance runs the items and records them in display order.
func (r *run) performance(ctx context.Context) {
	byName := map[string]report.Phase{}
	for _, it := range r.items() {
		if ctx.Err() != nil {
			break
		}
		if it.capability == "fs" && object.AsFileSystem(r.store) == nil {
			byName[it.name] = report.Phase{Name: it.name, Title: it.title,
				Value: report.Measure{Unit: report.CheckNotSupport}, Cost: report.Measure{Unit: report.CheckNotSupport}}
			continue
		}
		byName[it.name] = r.runItem(ctx, it)
	}
	for _, n := range displayOrder {
		if p, ok := byName[n]; ok {
			r.res.Phases = append(r.res.Phases, p)
		}
	}
}

// throttle backs off after a store asked to slow down, then the task is
// tried again; a task throttled this often counts as an error.
const (
	maxThrottleRetries = 10
	throttleBase       = 50 * time.Millisecond
	throttleMax        = 2 * time.Second
)

// runItem runs one item: the threads start together and take tasks until
// none are left; the item's time is from the start to the last thread's
// end.
func (r *run) runItem(ctx context.Context, it item) report.Phase {
	workers := r.workers
	for _, w := range workers {
		w.reset()
	}
	var next atomic.Int64
	var done atomic.Int64
	if r.o.Hooks.ItemStart != nil {
		r.o.Hooks.ItemStart(it.title, int64(it.count*it.objects), func() int64 { return done.Load() * int64(it.objects) })
	}
	start := make(chan struct{})
	var ready sync.WaitGroup
	ready.Add(len(workers))
	g := new(errgroup.Group)
	for _, w := range workers {
		g.Go(func() error {
			ready.Done()
			<-start
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= it.count {
					return nil
				}
				r.task(ctx, it, w, i)
				done.Add(1)
			}
			return nil
		})
	}
	ready.Wait()
	t0 := time.Now()
	close(start)
	_ = g.Wait()
	elapsed := time.Since(t0)
	if r.o.Hooks.ItemEnd != nil {
		r.o.Hooks.ItemEnd(it.title)
	}
	return r.toPhase(it, workers, elapsed, ctx.Err() != nil)
}

// task runs task i, retrying it after throttling.
func (r *run) task(ctx context.Context, it item, w *worker, i int) {
	backoff := throttleBase
	for attempt := 0; ; attempt++ {
		t0 := time.Now()
		w.ttfbStart = t0
		n, err := it.do(ctx, w, i)
		d := time.Since(t0)
		if err == nil {
			w.ops++
			w.bytes += n
			w.hist.Record(d)
			return
		}
		if ctx.Err() != nil {
			return // interrupted: neither a success nor a failure
		}
		if errors.Is(err, object.ErrThrottled) && attempt < maxThrottleRetries {
			w.throttled++
			select {
			case <-ctx.Done():
				return
			case <-time.After(backoff):
			}
			backoff = min(2*backoff, throttleMax)
			continue
		}
		w.errs++
		if len(w.samples) < maxSamples {
			w.samples = append(w.samples, err.Error())
		}
		return
	}
}

// put uploads size bytes of key from the thread's buffer.
func (r *run) put(ctx context.Context, w *worker, key string, size int64) (int64, error) {
	buf := w.buf[:size]
	r.src.fill(buf, r.src.id(key), 0)
	if err := r.store.Put(ctx, key, bytes.NewReader(buf)); err != nil {
		return 0, err
	}
	return size, nil
}

// get downloads key into the thread's buffer, records the time to its first
// byte, and checks every byte against what was uploaded.
func (r *run) get(ctx context.Context, w *worker, key string, size int64) (int64, error) {
	rc, err := r.store.Get(ctx, key, 0, -1)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	buf := w.buf[:size]
	n := 0
	for n < len(buf) {
		m, err := rc.Read(buf[n:])
		if n == 0 && m > 0 {
			w.ttfb.Record(time.Since(w.ttfbStart))
		}
		n += m
		if err == io.EOF {
			break
		}
		if err != nil {
			return int64(n), err
		}
	}
	if n < len(buf) {
		return int64(n), fmt.Errorf("get %s: %d bytes, expected %d", key, n, size)
	}
	var one [1]byte
	if m, _ := io.ReadFull(rc, one[:]); m > 0 {
		return int64(n), fmt.Errorf("get %s: longer than the %d bytes uploaded", key, size)
	}
	if bad := r.src.check(buf, r.src.id(key), 0); bad >= 0 {
		return int64(n), fmt.Errorf("get %s: downloaded content differs from the upload at byte %d", key, bad)
	}
	return int64(n), nil
}

// toPhase turns the threads' measurements into the result model, with
// JuiceFS's value and cost: MiB/s or objects/s, and the mean time one
// thread spent per object (per listing for list).
func (r *run) toPhase(it item, workers []*worker, elapsed time.Duration, interrupted bool) report.Phase {
	p := report.Phase{Name: it.name, Title: it.title, LatencyOf: it.latencyOf, Seconds: elapsed.Seconds(), Incomplete: interrupted}
	hist, ttfb := r.hist, r.ttfb
	hist.Reset()
	ttfb.Reset()
	for _, w := range workers {
		p.Ops += w.ops
		p.Bytes += w.bytes
		p.Errors += w.errs
		p.Throttled += w.throttled
		hist.Merge(w.hist)
		ttfb.Merge(w.ttfb)
		for _, s := range w.samples {
			if len(p.ErrorSamples) < maxSamples {
				p.ErrorSamples = append(p.ErrorSamples, s)
			}
		}
	}
	p.Items = p.Ops * int64(it.objects)
	_ = report.SetLatency(&p, hist)
	_ = report.SetTTFB(&p, ttfb)
	p.SetRates()
	perOp := 0.0 // ms one thread spent per task
	if p.Ops > 0 {
		perOp = p.Seconds * 1000 * float64(len(workers)) / float64(p.Ops)
	}
	if it.bytes {
		p.Value = report.Measure{Value: p.BytesPerSec / float64(units.MiB), Unit: "MiB/s"}
	} else {
		p.Value = report.Measure{Value: p.ItemsPerSec, Unit: "objects/s"}
	}
	p.Cost = report.Measure{Value: perOp, Unit: "ms/object"}
	if it.name == "list" {
		p.Cost = report.Measure{Value: p.Seconds * 1000 * float64(len(workers)) / float64(max(p.Ops, 1)), Unit: "ms/list"}
	}
	if !p.Incomplete && p.Ops > 0 {
		g := it.grade
		switch {
		case p.Value.Value > g[1]:
			p.Value.Grade = report.Good
		case p.Value.Value > g[0]:
			p.Value.Grade = report.Fair
		default:
			p.Value.Grade = report.Poor
		}
		switch {
		case p.Cost.Value < g[2]:
			p.Cost.Grade = report.Good
		case p.Cost.Value < g[3]:
			p.Cost.Grade = report.Fair
		default:
			p.Cost.Grade = report.Poor
		}
	}
	if p.Errors > 0 {
		r.warn("%s: %d of %d operations failed, e.g.: %s", it.title, p.Errors, it.count, p.ErrorSamples[0])
	}
	if p.Throttled > 0 {
		r.warn("%s: the store throttled %d requests (503 SlowDown / 429); they were retried after a pause", it.title, p.Throttled)
	}
	return p
}

// parallel runs fn(0..n-1) on at most threads goroutines and returns the
// first error.
func parallel(ctx context.Context, threads, n int, fn func(i int) error) error {
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(threads)
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}
