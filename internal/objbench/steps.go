package objbench

import (
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// steps records the requests inside one worker's timed operations (the
// parts of a multipart upload; the put, get and delete of a versioned
// cycle), each kind of step in its own histogram and counters. Only its
// worker's goroutine records into it.
type steps struct {
	hist             []*metrics.Histogram
	ops, bytes, errs []int64
	samples          [][]string // the first errors of each kind
}

func newSteps(kinds int) *steps {
	s := &steps{ops: make([]int64, kinds), bytes: make([]int64, kinds), errs: make([]int64, kinds),
		samples: make([][]string, kinds)}
	for range kinds {
		s.hist = append(s.hist, metrics.NewHistogram())
	}
	return s
}

func (s *steps) reset() {
	for k := range s.hist {
		s.hist[k].Reset()
		s.ops[k], s.bytes[k], s.errs[k] = 0, 0, 0
		s.samples[k] = s.samples[k][:0]
	}
}

// record counts one step of a kind that took d and moved n bytes; a
// failed step counts as an error only.
func (s *steps) record(kind int, d time.Duration, n int64, err error) {
	if err != nil {
		s.errs[kind]++
		if len(s.samples[kind]) < maxSamples {
			s.samples[kind] = append(s.samples[kind], err.Error())
		}
		return
	}
	s.ops[kind]++
	s.bytes[kind] += n
	s.hist[kind].Record(d)
}

// stepsSetup is a phase's Setup that gives every worker empty steps of
// the given number of kinds.
func (r *run) stepsSetup(kinds int) func(w *engine.Worker) error {
	for len(r.x.steps) < len(r.eng.Workers()) {
		r.x.steps = append(r.x.steps, nil)
	}
	return func(w *engine.Worker) error {
		if s := r.x.steps[w.ID]; s == nil || len(s.hist) != kinds {
			r.x.steps[w.ID] = newSteps(kinds)
		}
		r.x.steps[w.ID].reset()
		return nil
	}
}

// stepRow is the result row of one kind of step, over every worker, in
// the phase res measured: MiB/s (or steps/s when no bytes moved) and the
// mean time of a step.
func (r *run) stepRow(kind int, name, title, latencyOf string, res *engine.Result) report.PhaseResult {
	h := metrics.NewHistogram()
	p := report.PhaseResult{Name: name, Title: title, LatencyOf: latencyOf,
		Seconds: res.Elapsed.Seconds(), Incomplete: res.Incomplete}
	for _, s := range r.x.steps {
		h.Merge(s.hist[kind])
		p.Ops += s.ops[kind]
		p.Bytes += s.bytes[kind]
		p.Errors += s.errs[kind]
		p.ErrorSamples = append(p.ErrorSamples, s.samples[kind]...)
	}
	p.ErrorSamples = p.ErrorSamples[:min(len(p.ErrorSamples), maxSamples)]
	p.Items = p.Ops
	p.SetRates()
	_ = report.SetLatency(&p, h)
	p.Cost = report.Measure{Value: p.Latency.Mean / 1000, Unit: report.UnitMsPerOp}
	if p.Bytes > 0 {
		p.Value = report.Measure{Value: p.BytesPerSec / float64(units.MiB), Unit: report.UnitMiBPerSec}
	} else {
		p.Value = report.Measure{Value: p.OpsPerSec, Unit: report.UnitOpsPerSec}
	}
	return p
}
