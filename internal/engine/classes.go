package engine

import (
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
)

// Classes of operations: a phase whose operations are of several kinds
// (the operations of a mix, objects of several sizes) records each one in
// its class too, with Worker.EndAs, so that one phase yields a row per
// class beside its total.

// ClassResult is the measurement of one class of a phase's operations.
type ClassResult struct {
	Ops, Bytes, Errors int64
	Hist               *metrics.Histogram // latency, as Result.Hist
	TTFB               *metrics.Histogram // nil unless an operation recorded one
}

// ClassOp is the operation a class of operations belongs to: its name,
// as the result's rows name it, and whether the bytes it moves are read.
type ClassOp struct {
	Name string
	Read bool
}

// splitOps gives live a counter set per operation of the phase's classes
// (nil without Phase.ClassOps); a new set each phase, so that a watcher
// still reading the last phase's keeps its counts.
func (r *run) splitOps(live *metrics.Live) {
	live.ByOp, live.OpNames, r.classOp, r.opRead = nil, nil, nil, nil
	if len(r.p.ClassOps) == 0 {
		return
	}
	index := map[string]int{}
	for _, c := range r.p.ClassOps {
		k, ok := index[c.Name]
		if !ok {
			k = len(live.OpNames)
			index[c.Name] = k
			live.OpNames = append(live.OpNames, c.Name)
			live.ByOp = append(live.ByOp, new(metrics.Live))
			r.opRead = append(r.opRead, c.Read)
		}
		r.classOp = append(r.classOp, k)
	}
}

// countOp adds an operation of class to its operation's live counts.
func (w *Worker) countOp(class int, n int64, lat time.Duration) {
	if class < 0 || class >= len(w.r.classOp) {
		return
	}
	k := w.r.classOp[class]
	b := &w.opLive[k]
	b.Add(n, lat)
	if w.r.opRead[k] {
		b.AddRead(n)
		w.live.AddRead(n)
	}
}

// classStats is a worker's measurement of one class; its histograms are
// made on first use, so that classes no operation falls in cost nothing.
type classStats struct {
	ops, bytes, errs int64
	hist, ttfb       *metrics.Recorder
}

func (c *classStats) reset() {
	c.ops, c.bytes, c.errs = 0, 0, 0
	if c.hist != nil {
		c.hist.Reset()
	}
	if c.ttfb != nil {
		c.ttfb.Reset()
	}
}

// prepareClasses readies the worker's classes for a phase of n classes.
func (w *Worker) prepareClasses(n int) {
	if cap(w.classes) < n {
		w.classes = append(w.classes[:cap(w.classes)], make([]classStats, n-cap(w.classes))...)
	}
	w.classes = w.classes[:n]
	for i := range w.classes {
		w.classes[i].reset()
	}
	w.hasFirstByte = false
	ops := len(w.e.Live.ByOp)
	if cap(w.opLive) < ops {
		w.opLive = make([]metrics.LiveBatch, ops)
	}
	w.opLive = w.opLive[:ops]
}

// EndAs records the operation begun at s, which moved n bytes, as End
// does, and in class (0 <= class < Phase.Classes) too, with its time to
// first byte if FirstByte recorded one.
func (w *Worker) EndAs(s Start, n int64, class int) time.Time {
	firstByte, hasFirstByte := w.firstByte, w.hasFirstByte
	t, lat := w.finish(s, n)
	w.countOp(class, n, lat)
	if !w.measured || class < 0 || class >= len(w.classes) {
		return t
	}
	c := &w.classes[class]
	c.ops++
	c.bytes += n
	if c.hist == nil {
		c.hist = new(metrics.Recorder)
	}
	c.hist.Record(lat)
	if hasFirstByte {
		if c.ttfb == nil {
			c.ttfb = new(metrics.Recorder)
		}
		c.ttfb.Record(firstByte)
	}
	return t
}

// FailAs counts one failed task as Fail does, and in class too.
func (w *Worker) FailAs(err error, class int) {
	w.Fail(err)
	if class >= 0 && class < len(w.classes) {
		w.classes[class].errs++
	}
	if class >= 0 && class < len(w.r.classOp) {
		w.e.Live.ByOp[w.r.classOp[class]].Errors.Add(1)
	}
}

// mergeClasses adds the workers' classes into the phase's result.
func mergeClasses(res *Result, workers []*Worker, n int) {
	if n == 0 {
		return
	}
	res.Classes = make([]ClassResult, n)
	for i := range res.Classes {
		c := &res.Classes[i]
		c.Hist = metrics.NewHistogram()
		for _, w := range workers {
			wc := &w.classes[i]
			c.Ops += wc.ops
			c.Bytes += wc.bytes
			c.Errors += wc.errs
			if wc.hist != nil {
				c.Hist.Add(wc.hist)
			}
			if wc.ttfb != nil && wc.ttfb.Count() > 0 {
				if c.TTFB == nil {
					c.TTFB = metrics.NewHistogram()
				}
				c.TTFB.Add(wc.ttfb)
			}
		}
	}
}
