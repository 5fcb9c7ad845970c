package objbench

import (
	"context"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/skew"
)

// mixedWorkload runs get, stat, put and delete in one timed phase, each
// operation drawn with the weights of --mix (warp's mixed benchmark). Each
// thread keeps the set of objects it made that still exist (its share of
// the prepared ones, and its puts): its gets and stats read only those,
// and its deletes remove one of them, so no operation meets an object
// another thread deleted, and nothing the run did not make is deleted.
var mixedWorkload = &Workload{Name: "mixed", Unit: "ops", Help: "get, stat, put and delete in one phase, weighted by --mix (warp's mix by default)",
	Check: checkObjects(true), Prepare: (*run).prepareObjects, Phase: (*run).mixedPhase, Rows: (*run).mixedRows}

func (r *run) mixedPhase(ctx context.Context) engine.Phase {
	nsz := len(r.o.Sizes.Classes())
	return engine.Phase{Name: "mixed", Title: "mixed operations", Tasks: r.o.Objects, Shared: true, Classes: numOps * nsz,
		ClassOps: mixOps(nsz),
		Setup: func(w *engine.Worker) error {
			t := w.State.(*thread)
			t.pick = nil
			if !r.o.Distribution.IsUniform() {
				t.pick = skew.NewSampler(r.o.Distribution, 1)
			}
			return nil
		},
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, s engine.Start, _ int) (int64, int, error) {
			op := r.o.Mix.draw(w.Rand)
			n, size, err := r.mixedOp(ctx, w, s, &op)
			return n, op*nsz + size, err
		})}
}

// mixOps names the operations of the mix's classes as its rows do
// (mixed-get, ...), for live metrics by operation.
func mixOps(nsz int) []engine.ClassOp {
	ops := make([]engine.ClassOp, numOps*nsz)
	for i := range ops {
		ops[i] = engine.ClassOp{Name: "mixed-" + opNames[i/nsz], Read: i/nsz == opGet}
	}
	return ops
}

// sameOp names every class of a phase of one operation, for the
// direction of its bytes.
func sameOp(name string, read bool, classes int) []engine.ClassOp {
	ops := make([]engine.ClassOp, classes)
	for i := range ops {
		ops[i] = engine.ClassOp{Name: name, Read: read}
	}
	return ops
}

// mixedOp does op on the thread's live objects. A thread whose live set is
// empty puts instead of reading or deleting (op then says so).
func (r *run) mixedOp(ctx context.Context, w *engine.Worker, s engine.Start, op *int) (int64, int, error) {
	t := w.State.(*thread)
	if len(t.live) == 0 {
		*op = opPut
	}
	switch *op {
	case opGet:
		return r.getObj(ctx, w, s, t.live[t.pickLive(w)])
	case opStat:
		return r.statObj(ctx, t.live[t.pickLive(w)])
	case opDelete:
		i := w.Rand.IntN(len(t.live))
		obj := t.live[i]
		t.live[i] = t.live[len(t.live)-1]
		t.live = t.live[:len(t.live)-1]
		return 0, r.o.Sizes.Class(obj.size), r.deleteObj(ctx, w.ID, obj.key)
	}
	return r.putNew(ctx, w)
}

// pickLive is the index in live of the object a get or stat reads: drawn
// from the distribution over the live objects as they stand (a delete
// moves the last into the gap), or alike.
func (t *thread) pickLive(w *engine.Worker) int {
	if t.pick == nil {
		return w.Rand.IntN(len(t.live))
	}
	t.pick.Reset(len(t.live))
	return t.pick.Pick(w.Rand)
}

// mixedRows are the rows of the mix, whose realised proportions are also
// told; the whole's row says how the gets' and stats' picks fell.
func (r *run) mixedRows(res *engine.Result) []report.PhaseResult {
	if !r.o.Distribution.IsUniform() {
		var c skew.Counts
		for _, w := range r.eng.Workers() {
			if t := w.State.(*thread); t.pick != nil {
				c.Add(t.pick.Take())
			}
		}
		res.Access = append(res.Access, engine.AccessReport(r.o.Distribution, "objects", c))
	}
	rows := r.classRows(res)
	r.info(proportions(rows))
	return rows
}
