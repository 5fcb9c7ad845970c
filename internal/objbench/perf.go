package objbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/objstore"
	"github.com/fsbench/fsbench/internal/origin"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// item is one performance item: a phase of the engine whose tasks are
// objects (or listings), shared by the threads.
type item struct {
	name  string // stable metric name
	title string // JuiceFS's title
	// count is the tasks of one pass; with a duration the tasks repeat.
	count int
	// capability is "fs" for items that need file attributes.
	capability string
	// do runs task i of pass on a thread and returns the bytes it moved;
	// s is when its operation began, for the time to first byte.
	do func(ctx context.Context, w *engine.Worker, s engine.Start, i, pass int) (int64, error)
	// bytes: the value is MiB/s (data items), else objects/s.
	bytes bool
	// latencyOf says what one latency sample times.
	latencyOf string
	// objects is how many objects one task covers (a list covers many).
	objects int
	// once: the item cannot repeat (delete), so a duration does not apply.
	once  bool
	grade report.Ranges // JuiceFS's
	// writes records the keys the item made, for the items after it.
	writes *[]int
}

// thread is one worker's state for object operations.
type thread struct {
	buf  []byte
	rd   bytes.Reader
	keys []int // keys this thread put in the item in progress
	// Workloads: the objects this thread made that still exist, and how
	// many it made in all (the number of its next key).
	live []objRef
	made int
	// pick draws the mixed workload's gets and stats among live
	// (Options.Distribution); nil: alike.
	pick *skew.Sampler
}

// maxBuffer bounds a thread's buffer: objects larger than it are uploaded
// from a pattern.Reader straight into the connection's buffer and
// downloaded and checked a buffer at a time, so a thread's memory does not
// grow with --block-size.
const maxBuffer = 1 << 20

// readChunk bounds a download's reads: a socket seldom holds more at
// once, and the pages of the buffer past it are then never touched by a
// run that only reads (a thread's buffer is 1 MiB for puts from memory).
const readChunk = 256 << 10

// readBuf is the part of the thread's buffer downloads read into.
func (t *thread) readBuf() []byte { return t.buf[:min(len(t.buf), readChunk)] }

const maxSamples = 5

// newEngine makes the run's workers, one per thread. Workers, their
// buffers and their histograms live for the whole run: items reset them
// rather than allocate afresh.
func (r *run) newEngine() {
	r.eng = engine.New(r.o.Threads)
	r.eng.Seed(r.seed)
	r.eng.MaxErrorSamples = maxSamples
	size := min(max(r.o.BlockSize, r.o.SmallObjectSize), maxBuffer)
	for _, w := range r.eng.Workers() {
		w.State = &thread{buf: make([]byte, size)}
	}
}

// buf is thread i's buffer.
func (r *run) buf(i int) []byte { return r.eng.Workers()[i].State.(*thread).buf }

// JuiceFS's colour ranges: value fair above [0], good above [1]; cost good
// below [2], fair below [3].
var (
	gradeBig   = report.Ranges{Fair: 100, Good: 150, CostGood: 50, CostFair: 150}
	gradeSmall = report.Ranges{Fair: 10, Good: 30, CostGood: 30, CostFair: 100}
	gradeList  = report.Ranges{Fair: 1000, Good: 10000, CostGood: 100, CostFair: 200}
)

func bigKey(i int) string   { return "big/" + strconv.Itoa(i) }
func smallKey(i int) string { return "small/" + strconv.Itoa(i) }

// anyKey names task i of the items that touch every object: the small
// objects, then the blocks of the big one.
func (r *run) anyKey(i int) string {
	if i < len(r.small) {
		return smallKey(r.small[i])
	}
	return bigKey(r.big[i-len(r.small)])
}

// bigSize is the size of big object k: BlockSize, every one, as juicefs
// objbench uploads the big object in whole blocks (its size rounded up to
// a multiple of BlockSize), so that a juicefs command line moves the same
// bytes here.
func (r *run) bigSize(int) int64 { return r.o.BlockSize }

func (r *run) items() []item {
	o := r.o
	listCount := func() int { return min(len(r.small)+len(r.big), object.DefaultListLimit) }
	fsOp := func(fn func(ctx context.Context, f object.FileSystem, key string) error) func(context.Context, *engine.Worker, engine.Start, int, int) (int64, error) {
		f := object.AsFileSystem(r.store)
		return func(ctx context.Context, _ *engine.Worker, _ engine.Start, i, _ int) (int64, error) {
			return 0, fn(ctx, f, r.anyKey(i))
		}
	}
	uid, gid := os.Getuid(), os.Getgid()
	return []item{
		{name: "put-small", title: "put small objects", count: o.SmallObjects, objects: 1, grade: gradeSmall, writes: &r.small,
			latencyOf: units.FormatBytes(o.SmallObjectSize) + " put",
			do: func(ctx context.Context, w *engine.Worker, _ engine.Start, i, pass int) (int64, error) {
				k := pass*o.SmallObjects + i
				return r.put(ctx, w, k, smallKey(k), o.SmallObjectSize)
			}},
		{name: "get-small", title: "get small objects", objects: 1, grade: gradeSmall,
			latencyOf: units.FormatBytes(o.SmallObjectSize) + " get",
			do: func(ctx context.Context, w *engine.Worker, s engine.Start, i, _ int) (int64, error) {
				return r.get(ctx, w, s, smallKey(r.small[i]), o.SmallObjectSize)
			}},
		{name: "upload", title: "upload objects", count: int(o.bigCount()), bytes: true, objects: 1, grade: gradeBig, writes: &r.big,
			latencyOf: units.FormatBytes(o.BlockSize) + " put",
			do: func(ctx context.Context, w *engine.Worker, _ engine.Start, i, pass int) (int64, error) {
				k := pass*int(o.bigCount()) + i
				return r.put(ctx, w, k, bigKey(k), r.bigSize(k))
			}},
		{name: "download", title: "download objects", bytes: true, objects: 1, grade: gradeBig,
			latencyOf: units.FormatBytes(o.BlockSize) + " get",
			do: func(ctx context.Context, w *engine.Worker, s engine.Start, i, _ int) (int64, error) {
				return r.get(ctx, w, s, bigKey(r.big[i]), r.bigSize(r.big[i]))
			}},
		{name: "list", title: "list objects", count: o.Threads, grade: gradeList,
			do: func(ctx context.Context, _ *engine.Worker, _ engine.Start, _, _ int) (int64, error) {
				n := listCount()
				page, err := r.store.List(ctx, object.ListOptions{Limit: n})
				if err == nil && len(page.Objects) < n {
					err = fmt.Errorf("list: %d objects, expected %d", len(page.Objects), n)
				}
				return 0, err
			}},
		{name: "head", title: "head objects", objects: 1, grade: gradeSmall, latencyOf: "head",
			do: func(ctx context.Context, _ *engine.Worker, _ engine.Start, i, _ int) (int64, error) {
				_, err := r.store.Head(ctx, r.anyKey(i))
				return 0, err
			}},
		{name: "chtimes", title: "update mtime", objects: 1, grade: gradeSmall, latencyOf: "chtimes", capability: "fs",
			do: fsOp(func(ctx context.Context, f object.FileSystem, key string) error {
				return f.Chtimes(ctx, key, time.Now())
			})},
		{name: "chmod", title: "change permissions", objects: 1, grade: gradeSmall, latencyOf: "chmod", capability: "fs",
			do: fsOp(func(ctx context.Context, f object.FileSystem, key string) error { return f.Chmod(ctx, key, 0o755) })},
		{name: "chown", title: "change owner/group", objects: 1, grade: gradeSmall, latencyOf: "chown", capability: "fs",
			do: fsOp(func(ctx context.Context, f object.FileSystem, key string) error { return f.Chown(ctx, key, uid, gid) })},
		{name: "delete", title: "delete objects", objects: 1, grade: gradeSmall, latencyOf: "delete", once: true,
			do: func(ctx context.Context, _ *engine.Worker, _ engine.Start, i, _ int) (int64, error) {
				return 0, r.store.Delete(ctx, r.anyKey(i))
			}},
	}
}

// tasks is an item's tasks of one pass: what it was given, else the
// objects the items before it made (all of them for head, delete, ...).
func (r *run) tasks(it *item) int {
	switch {
	case it.count > 0:
		return it.count
	case it.name == "download":
		return len(r.big)
	case it.name == "get-small":
		return len(r.small)
	}
	return len(r.small) + len(r.big)
}

// getKeys is the keys the gets of it read: the small objects or the
// blocks of the big one.
func (r *run) getKeys(it *item) []string {
	var keys []string
	if it.name == "get-small" {
		for _, k := range r.small {
			keys = append(keys, smallKey(k))
		}
		return keys
	}
	for _, k := range r.big {
		keys = append(keys, bigKey(k))
	}
	return keys
}

// displayOrder is JuiceFS's order of the table. Items run in the order of
// items(), which is the order juicefs objbench runs them in: the small
// objects first, then the big one (so a store still writing back the big
// object does not slow the small puts), delete last, as it removes what
// the others use.
var displayOrder = []string{"upload", "download", "put-small", "get-small", "list", "head", "delete", "chmod", "chown", "chtimes"}

// performance runs the items and records them in display order.
func (r *run) performance(ctx context.Context) {
	byName := map[string]report.PhaseResult{}
	for _, it := range r.items() {
		if ctx.Err() != nil {
			break
		}
		if it.capability == "fs" && object.AsFileSystem(r.store) == nil {
			byName[it.name] = report.PhaseResult{Name: it.name, Title: it.title,
				Value: report.Measure{Unit: report.UnitNotSupported}, Cost: report.Measure{Unit: report.UnitNotSupported}}
			continue
		}
		if it.name == "list" {
			it.objects = min(len(r.small)+len(r.big), object.DefaultListLimit)
			it.latencyOf = "list of " + strconv.Itoa(it.objects) + " objects"
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
	maxThrottleRetries = objstore.MaxThrottleRetries
	throttleBase       = objstore.ThrottleBase
	throttleMax        = objstore.ThrottleMax
)

// runItem runs one item as a phase of the engine: the threads start
// together and take tasks until none are left (or the time is up).
func (r *run) runItem(ctx context.Context, it item) report.PhaseResult {
	n := r.tasks(&it)
	if n == 0 {
		r.warn("%s: skipped, no objects to work on", it.title)
		return report.PhaseResult{Name: it.name, Title: it.title, Incomplete: true}
	}
	p := engine.Phase{Name: it.name, Title: it.title, Tasks: n, Shared: true, KeepGoing: true,
		Ops: r.o.Ops, Duration: r.o.Duration, Warmup: r.o.Warmup, Rate: r.o.Rate, Interval: r.o.Interval,
		Do: r.task(ctx, &it)}
	if it.once {
		p.Ops, p.Duration, p.Warmup = 0, 0, 0
	}
	before := r.endpointStats()
	var reading *origin.Reading
	if it.name == "get-small" || it.name == "download" {
		reading = r.beforeGets(ctx, it.title, r.getKeys(&it))
	}
	res, err := r.runPhase(ctx, p, max(it.objects, 1))
	if err != nil && ctx.Err() == nil {
		r.warn("%s: %v", it.title, err)
	}
	if it.writes != nil {
		*it.writes = r.collectKeys()
	}
	ph := r.toPhase(it, res)
	ph.Endpoints = r.endpointRows(before, ph.Seconds)
	r.afterGets(ctx, reading, &ph)
	return ph
}

// runPhase runs a phase on the engine, telling the hooks of its start,
// intervals and end; objects is how many objects one operation covers.
func (r *run) runPhase(ctx context.Context, p engine.Phase, objects int) (*engine.Result, error) {
	return r.runPhaseOf(ctx, p, objects, "objects")
}

// runPhaseOf is runPhase for a phase whose progress counts unit (the
// pages of a listing, the operations of a mix) rather than objects.
func (r *run) runPhaseOf(ctx context.Context, p engine.Phase, objects int, unit string) (*engine.Result, error) {
	if h := r.o.Hooks.Interval; h != nil && p.Interval > 0 {
		p.OnInterval = func(s engine.Sample) { h(p.Title, s.Report()) }
	}
	if h := r.o.Hooks.ItemStart; h != nil {
		total := int64(p.Tasks * objects)
		if p.Duration > 0 || p.Ops > 0 {
			total = -1
		}
		h(p.Title, unit, total, func() int64 { return r.eng.Live.Ops.Load() * int64(objects) })
	}
	res, err := r.eng.Run(ctx, p)
	if h := r.o.Hooks.ItemMeasured; h != nil && res != nil {
		h(p.Title, res.Ops*int64(objects), res.Elapsed)
	}
	if r.o.Hooks.ItemEnd != nil {
		r.o.Hooks.ItemEnd(p.Title)
	}
	return res, err
}

// collectKeys gathers and sorts the keys the threads put in the item that
// just ran.
func (r *run) collectKeys() []int {
	var keys []int
	for _, w := range r.eng.Workers() {
		t := w.State.(*thread)
		keys = append(keys, t.keys...)
		t.keys = t.keys[:0]
	}
	slices.Sort(keys)
	return keys
}

// task runs one task of an item, trying it again after throttling; only
// the successful attempt is timed.
func (r *run) task(ctx context.Context, it *item) func(w *engine.Worker, i, pass int) error {
	return func(w *engine.Worker, i, pass int) error {
		s, ok := w.Begin()
		if !ok {
			return nil
		}
		var n int64
		err := attempt(ctx, w, &s, func() (err error) {
			n, err = it.do(ctx, w, s, i, pass)
			return err
		})
		switch err {
		case nil:
			w.End(s, n)
		case errInterrupted:
			return nil
		}
		return err
	}
}

// errInterrupted stands for an operation cut short by the end of the
// phase: neither a success nor a failure.
var errInterrupted = errors.New("interrupted")

// attempt runs op, trying it again after the store asked to slow down,
// with a growing pause; the time of the operation (s) then counts from the
// last attempt. It returns op's last error, or errInterrupted when the
// phase was stopped meanwhile.
func attempt(ctx context.Context, w *engine.Worker, s *engine.Start, op func() error) error {
	backoff := throttleBase
	for try := 0; ; try++ {
		err := op()
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return errInterrupted
		case !errors.Is(err, object.ErrThrottled) || try >= maxThrottleRetries:
			return err
		}
		w.Throttled()
		select {
		case <-w.Cancelled():
			return errInterrupted
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, throttleMax)
		w.Retime(s)
	}
}

// put uploads size bytes as key k: from the thread's buffer when it
// fits, else streamed from the pattern.
func (r *run) put(ctx context.Context, w *engine.Worker, k int, key string, size int64) (int64, error) {
	t := w.State.(*thread)
	id := r.pat.ID(key)
	var body io.ReadSeeker
	if size <= int64(len(t.buf)) {
		buf := t.buf[:size]
		r.pat.Fill(buf, id, 0)
		t.rd.Reset(buf)
		body = &t.rd
	} else {
		body = r.pat.Reader(id, size)
	}
	if err := r.store.Put(ctx, key, body); err != nil {
		return 0, err
	}
	t.keys = append(t.keys, k)
	return size, nil
}

// get downloads key a buffer at a time, records the time to its first
// byte, and checks every byte against what was uploaded (unless verifying
// is off) and the length.
func (r *run) get(ctx context.Context, w *engine.Worker, s engine.Start, key string, size int64) (int64, error) {
	rc, err := r.store.Get(ctx, key, 0, -1)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	n, err := r.readChecked(w, s, rc, key, 0)
	switch {
	case err != nil:
		return n, err
	case n < size:
		return n, fmt.Errorf("get %s: %d bytes, expected %d", key, n, size)
	case n > size:
		return size, fmt.Errorf("get %s: longer than the %d bytes uploaded", key, size)
	}
	return n, nil
}

// toPhase turns an item's measurement into the result model, with
// JuiceFS's value and cost: MiB/s or objects/s, and the mean time one
// thread spent per object (per listing for list), by the operations'
// latencies.
func (r *run) toPhase(it item, res *engine.Result) report.PhaseResult {
	p := res.Report()
	p.LatencyOf = it.latencyOf
	p.Items = p.Ops * int64(it.objects)
	p.SetRates()
	perOp := p.PerUnit(p.Ops) * 1000 // ms: an operation's mean latency
	if it.bytes {
		p.Value = p.ThroughputValue()
	} else {
		p.Value = report.Measure{Value: p.ItemsPerSec, Unit: report.UnitObjectsPerSec}
	}
	p.Cost = report.Measure{Value: perOp, Unit: report.UnitMsPerObject}
	if it.name == "list" {
		p.Cost.Unit = report.UnitMsPerList
	}
	if !p.Incomplete && p.Ops > 0 {
		it.grade.Grade(&p)
	}
	if p.Errors > 0 {
		r.warn("%s: %d of %d operations failed, e.g.: %s", it.title, p.Errors, p.Errors+p.Ops, p.ErrorSamples[0])
	}
	if p.Throttled > 0 {
		r.warn("%s: the store throttled %d requests (503 SlowDown / 429); they were retried after a pause", it.title, p.Throttled)
	}
	return p
}
