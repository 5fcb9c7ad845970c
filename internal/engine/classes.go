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
}

// EndAs records the operation begun at s, which moved n bytes, as End
// does, and in class (0 <= class < Phase.Classes) too, with its time to
// first byte if FirstByte recorded one.
func (w *Worker) EndAs(s Start, n int64, class int) time.Time {
	firstByte, hasFirstByte := w.firstByte, w.hasFirstByte
	t, lat := w.finish(s, n)
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
