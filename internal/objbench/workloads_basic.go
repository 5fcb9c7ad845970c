package objbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// objRef is one object a workload made: its key under the run's prefix
// and its size.
type objRef struct {
	key  string
	size int64
}

// objPrefix holds every object of a workload, under the run's prefix.
const objPrefix = "obj/"

// objKey names the n-th object thread w made. The keys hold no further
// "/": on file systems they are files of one directory, so a listing
// holds the objects alone.
func objKey(w, n int) string { return objPrefix + strconv.Itoa(w) + "-" + strconv.Itoa(n) }

// The single-operation workloads: each repeats one operation, over the
// objects prepared before it (get, stat, delete, list) or on new ones
// (put). Without --ops or --duration, each does one pass: every prepared
// object once, or --objects puts.
var (
	getWorkload = &Workload{Name: "get", Help: "download the prepared objects, whole or --range at random offsets",
		Check: checkObjects(true), Prepare: (*run).prepareObjects, Phase: (*run).getPhase, Rows: (*run).classRows}
	putWorkload = &Workload{Name: "put", Help: "upload new objects of --obj-size or --obj-size-dist",
		Check: checkObjects(false), Phase: (*run).putPhase, Rows: (*run).classRows}
	statWorkload = &Workload{Name: "stat", Help: "head (stat) the prepared objects",
		Check: checkObjects(false), Prepare: (*run).prepareObjects, Phase: (*run).statPhase, Rows: (*run).classRows}
	deleteWorkload = &Workload{Name: "delete", Help: "delete the prepared objects, each once (--batch N: N a request): the phase ends when none is left",
		Check: checkObjects(false), Prepare: (*run).prepareDelete, Phase: (*run).deletePhase, Rows: (*run).deleteRows}
	listWorkload = &Workload{Name: "list", Unit: "pages", Help: "list the prepared objects, a page of up to 1000 per operation",
		Check: checkObjects(false), Prepare: (*run).prepareObjects, Phase: (*run).listPhase, Rows: (*run).listRows}
)

// checkObjects checks the options of the object workloads; ranges only
// apply where objects are read.
func checkObjects(reads bool) func(o *Options) error {
	return func(o *Options) error {
		switch {
		case o.Objects < 1 || o.Objects > maxObjects:
			return fmt.Errorf("--objects must be between 1 and %d (got %d)", maxObjects, o.Objects)
		case o.Sizes.Min <= 0 || o.Sizes.Max > maxObjectSize:
			return fmt.Errorf("object sizes must be more than 0 and at most %s", units.FormatBytes(maxObjectSize))
		case o.Range < 0:
			return errors.New("--range must not be negative")
		case o.Range > 0 && !reads:
			return fmt.Errorf("--range applies to the get and mixed workloads, not %s", o.Workload)
		case o.Range > o.Sizes.Min:
			return fmt.Errorf("--range %s is larger than the smallest object (%s)", units.FormatBytes(o.Range), units.FormatBytes(o.Sizes.Min))
		case o.Batch < 0 || o.Batch > object.MaxBatchDelete:
			return fmt.Errorf("--batch must be between 1 and %d (got %d)", object.MaxBatchDelete, o.Batch)
		case o.Batch > 0 && o.Workload != "delete":
			return fmt.Errorf("--batch applies to the delete workload, not %s", o.Workload)
		}
		return nil
	}
}

// prepareObjects puts --objects objects, untimed; each thread keeps the
// ones it made as its own live set, and r.objs holds them all, sorted by
// key.
func (r *run) prepareObjects(ctx context.Context) error {
	p := engine.Phase{Name: "prepare", Title: "prepare objects", Tasks: r.o.Objects, KeepGoing: true,
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, _ engine.Start, _ int) (int64, int, error) {
			return r.putNew(ctx, w)
		})}
	res, err := r.runPhase(ctx, p, 1)
	if err == nil && res.Errors > 0 {
		err = fmt.Errorf("%d of %d puts failed, e.g.: %s", res.Errors, r.o.Objects, strings.Join(res.Samples[:min(1, len(res.Samples))], ""))
	}
	if err != nil {
		return err
	}
	r.objs = r.objs[:0]
	for _, w := range r.eng.Workers() {
		r.objs = append(r.objs, w.State.(*thread).live...)
	}
	slices.SortFunc(r.objs, func(a, b objRef) int { return strings.Compare(a.key, b.key) })
	if r.o.Threads > len(r.objs) {
		r.warn("%s and %s: threads without objects of their own stay idle in get and stat", units.Count(r.o.Threads, "thread"), units.Count(len(r.objs), "object"))
	}
	return nil
}

// opFunc does one timed operation and returns the bytes it moved, the
// class of the phase it belongs to (see rowSpec) and its error.
type opFunc func(ctx context.Context, w *engine.Worker, s engine.Start, task int) (int64, int, error)

// timed makes a phase's Do from one operation: begin, the operation
// (tried again after throttling), end, each recorded in the operation's
// class too.
func (r *run) timed(ctx context.Context, op opFunc) func(w *engine.Worker, task, pass int) error {
	return func(w *engine.Worker, task, _ int) error {
		s, ok := w.Begin()
		if !ok {
			return nil
		}
		var n int64
		class := -1
		err := attempt(ctx, w, &s, func() (err error) {
			n, class, err = op(ctx, w, s, task)
			return err
		})
		switch err {
		case nil:
			w.EndAs(s, n, class)
			w.Item()
		case errInterrupted:
		default:
			w.FailAs(err, class)
		}
		return nil
	}
}

// putNew uploads a new object of a size drawn from the distribution and
// adds it to the thread's live set.
func (r *run) putNew(ctx context.Context, w *engine.Worker) (int64, int, error) {
	t := w.State.(*thread)
	size := r.o.Sizes.Draw(w.Rand)
	key := objKey(w.ID, t.made)
	t.made++
	if err := r.store.Put(ctx, key, r.pat.Reader(r.pat.ID(key), size)); err != nil {
		return 0, 0, err
	}
	r.journalPut(w.ID, key, size)
	t.live = append(t.live, objRef{key, size})
	return size, r.o.Sizes.Class(size), nil
}

// getObj downloads obj, whole or a --range at a random offset, into the
// thread's buffer a piece at a time, records the time to its first byte
// and checks every byte (unless verifying is off).
func (r *run) getObj(ctx context.Context, w *engine.Worker, s engine.Start, obj objRef) (int64, int, error) {
	off, want, limit := int64(0), obj.size, int64(-1)
	if r.o.Range > 0 {
		off, want, limit = rangeOffset(w, obj.size, r.o.Range), r.o.Range, r.o.Range
	}
	rc, err := r.store.Get(ctx, obj.key, off, limit)
	if err != nil {
		return 0, 0, err
	}
	defer rc.Close()
	n, err := r.readChecked(w, s, rc, obj.key, off)
	switch {
	case err != nil:
	case n != want:
		err = fmt.Errorf("get %s at %d: %d bytes, expected %d", obj.key, off, n, want)
	}
	return n, r.o.Sizes.Class(obj.size), err
}

// rangeOffset draws the offset of a range of n bytes in an object of size
// bytes: a multiple of 4 KiB (of the largest power of two up to n, for
// smaller ranges) when the object leaves room for one.
func rangeOffset(w *engine.Worker, size, n int64) int64 {
	align := min(int64(4096), int64(1)<<log2Floor(n))
	slots := (size-n)/align + 1
	return w.Rand.Int64N(slots) * align
}

// readChecked reads rc to its end, checking it against the content of key
// from off on, and records the time to the first byte.
func (r *run) readChecked(w *engine.Worker, s engine.Start, rc io.Reader, key string, off int64) (int64, error) {
	buf := w.State.(*thread).readBuf()
	id := r.pat.ID(key)
	var n int64
	for {
		m, err := rc.Read(buf)
		if n == 0 && m > 0 {
			w.FirstByte(s)
		}
		if r.o.Verify && m > 0 {
			if bad := r.pat.Check(buf[:m], id, off+n); bad >= 0 {
				return n, fmt.Errorf("get %s: downloaded content differs from the upload at byte %d", key, off+n+int64(bad))
			}
		}
		n += int64(m)
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("get %s: %w", key, err)
		}
	}
}

// pick is the prepared object of a task.
func (r *run) pick(task int) objRef { return r.objs[task%len(r.objs)] }

func (r *run) getPhase(ctx context.Context) engine.Phase {
	nsz := len(r.o.Sizes.Classes())
	return engine.Phase{Name: "get", Title: "get objects", Tasks: len(r.objs), Random: true, Skew: r.o.Distribution, SkewOf: "objects",
		Classes: nsz, ClassOps: sameOp("get", true, nsz),
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, s engine.Start, task int) (int64, int, error) {
			return r.getObj(ctx, w, s, r.pick(task))
		})}
}

func (r *run) putPhase(ctx context.Context) engine.Phase {
	nsz := len(r.o.Sizes.Classes())
	return engine.Phase{Name: "put", Title: "put objects", Tasks: r.o.Objects, Shared: true, Classes: nsz, ClassOps: sameOp("put", false, nsz),
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, _ engine.Start, _ int) (int64, int, error) {
			return r.putNew(ctx, w)
		})}
}

func (r *run) statPhase(ctx context.Context) engine.Phase {
	return engine.Phase{Name: "stat", Title: "stat objects", Tasks: len(r.objs), Random: true, Skew: r.o.Distribution, SkewOf: "objects",
		Classes: len(r.o.Sizes.Classes()),
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, _ engine.Start, task int) (int64, int, error) {
			return r.statObj(ctx, r.pick(task))
		})}
}

// statObj heads obj and checks the size the store reports.
func (r *run) statObj(ctx context.Context, obj objRef) (int64, int, error) {
	info, err := r.store.Head(ctx, obj.key)
	if err == nil && info.Size != obj.size {
		err = fmt.Errorf("head %s: size %d, expected %d", obj.key, info.Size, obj.size)
	}
	return 0, r.o.Sizes.Class(obj.size), err
}

// prepareDelete checks that the store deletes in batches when --batch
// asks for it, before preparing anything, then prepares the objects.
func (r *run) prepareDelete(ctx context.Context) error {
	if r.o.Batch > 0 && object.AsBatchDeleter(r.store) == nil {
		return fmt.Errorf("%s: --batch: multi-object delete: %w", r.base.String(), object.ErrNotSupported)
	}
	return r.prepareObjects(ctx)
}

// deletePhase deletes each prepared object once: its operations are at
// most the prepared objects, whatever --ops and --duration say.
func (r *run) deletePhase(ctx context.Context) engine.Phase {
	if r.o.Batch > 0 {
		return r.batchDeletePhase(ctx)
	}
	n := int64(len(r.objs))
	p := engine.Phase{Name: "delete", Title: "delete objects", Tasks: len(r.objs), Shared: true, Classes: len(r.o.Sizes.Classes()),
		Ops: min(r.o.Ops, n), Duration: r.o.Duration,
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, _ engine.Start, task int) (int64, int, error) {
			obj := r.pick(task)
			return 0, r.o.Sizes.Class(obj.size), r.deleteObj(ctx, w.ID, obj.key)
		})}
	if p.Ops == 0 {
		p.Ops = n
	}
	return p
}

// batchDeletePhase deletes the prepared objects --batch at a time, one
// request each: task i is the i-th run of --batch keys, and --ops counts
// requests.
func (r *run) batchDeletePhase(ctx context.Context) engine.Phase {
	b, del := r.o.Batch, object.AsBatchDeleter(r.store)
	keys := make([]string, len(r.objs)) // once, not per request
	for i, o := range r.objs {
		keys[i] = o.key
	}
	tasks := (len(keys) + b - 1) / b
	ops := int64(tasks)
	if r.o.Ops > 0 {
		ops = min(r.o.Ops, ops)
	}
	return engine.Phase{Name: "delete", Title: "delete objects", Tasks: tasks, Shared: true,
		Ops: ops, Duration: r.o.Duration,
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, _ engine.Start, task int) (int64, int, error) {
			batch := keys[task*b : min((task+1)*b, len(keys))]
			err := del.DeleteKeys(ctx, batch)
			r.journalDeleted(w.ID, err, batch...)
			return 0, -1, err
		})}
}

// deleteObj deletes the run's object key and records it in the journal.
func (r *run) deleteObj(ctx context.Context, worker int, key string) error {
	err := r.store.Delete(ctx, key)
	r.journalDeleted(worker, err, key)
	return err
}

// deleteRows is the row of the delete workload: per size class, or with
// --batch one row of objects deleted per second, each operation a
// request of --batch objects (the last may hold fewer).
func (r *run) deleteRows(res *engine.Result) []report.PhaseResult {
	if r.o.Batch == 0 {
		return r.classRows(res)
	}
	p := r.phaseRow("delete", "delete objects", res)
	p.Items = min(res.Ops*int64(r.o.Batch), int64(len(r.objs)))
	p.SetRates()
	p.Value = report.Measure{Value: p.ItemsPerSec, Unit: report.UnitObjectsPerSec}
	p.LatencyOf = fmt.Sprintf("delete of %d objects in one request", r.o.Batch)
	return []report.PhaseResult{p}
}

// listPage is how many objects one list operation asks for.
const listPage = object.DefaultListLimit

// listPhase lists the prepared objects page by page: task i is the i-th
// page, and its count is checked.
func (r *run) listPhase(ctx context.Context) engine.Phase {
	pages := (len(r.objs) + listPage - 1) / listPage
	return engine.Phase{Name: "list", Title: "list objects", Tasks: pages, Shared: true,
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, _ engine.Start, task int) (int64, int, error) {
			return 0, 0, r.listPageOf(ctx, task)
		})}
}

func (r *run) listPageOf(ctx context.Context, page int) error {
	opt := object.ListOptions{Prefix: objPrefix, Limit: listPage}
	if page > 0 {
		opt.StartAfter = r.objs[page*listPage-1].key
	}
	got, err := r.store.List(ctx, opt)
	if err != nil {
		return err
	}
	if want := min(listPage, len(r.objs)-page*listPage); len(got.Objects) != want {
		return fmt.Errorf("list %s after %q: %d objects, expected %d", objPrefix, opt.StartAfter, len(got.Objects), want)
	}
	return nil
}

// listRows is the row of the list workload: objects listed per second.
func (r *run) listRows(res *engine.Result) []report.PhaseResult {
	p := r.phaseRow("list", "list objects", res)
	pages := (len(r.objs) + listPage - 1) / listPage
	p.Items = res.Ops * int64(len(r.objs)) / int64(max(pages, 1))
	p.SetRates()
	p.Value = report.Measure{Value: p.ItemsPerSec, Unit: report.UnitObjectsPerSec}
	p.LatencyOf = fmt.Sprintf("list of up to %d objects", min(listPage, len(r.objs)))
	return []report.PhaseResult{p}
}
