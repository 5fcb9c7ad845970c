package engine

import (
	"math"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/skew"
)

// Result is the raw measurement of one phase.
type Result struct {
	Name, Title string
	Workers     int
	Ops         int64 // latency samples
	Items       int64 // files or objects completed
	Bytes       int64
	Errors      int64
	Throttled   int64
	// Missed counts the operations an open loop scheduled before its
	// deadline and never began: the rate was more than the target kept
	// up with.
	Missed int64
	// Elapsed runs from the end of the warm-up (the start barrier without
	// one) to the last worker's end.
	Elapsed    time.Duration
	Hist       *metrics.Histogram
	TTFB       *metrics.Histogram // nil unless an operation recorded one
	Incomplete bool
	Samples    []string // the first error messages
	// Service is the service time of each operation (from its actual
	// start) in an open-loop phase, where Hist is the response time (from
	// its scheduled start); nil otherwise.
	Service *metrics.Histogram
	Series  []Sample // per Interval, when the phase asked for it
	// Classes holds each class's measurement, when the phase has classes.
	Classes []ClassResult
	// EndedEarly is set when the phase's EndEarly ended it before its
	// limits.
	EndedEarly bool
	// Access is how the phase's picks fell when they were drawn from a
	// distribution (Phase.Skew, and the blocks of files, see workload).
	Access []report.Access
}

// AccessReport states the picks c of items of kind of, drawn from spec.
func AccessReport(spec skew.Spec, of string, c skew.Counts) report.Access {
	m1, w1 := c.Share(1)
	m10, w10 := c.Share(10)
	return report.Access{Distribution: spec.String(), Of: of, Items: c.Items, Picks: c.Draws,
		Top1Pct: pct(m1), Top10Pct: pct(m10), Want1Pct: pct(w1), Want10Pct: pct(w10)}
}

// pct is a share as a percentage, to two decimals.
func pct(share float64) float64 { return math.Round(share*10000) / 100 }

// Report turns the measurement into the result model's phase: counters,
// rates, latency percentiles with their histograms, and the interval
// series. What the table shows as value and cost is the caller's.
func (r *Result) Report() report.PhaseResult {
	p := report.PhaseResult{
		Name: r.Name, Title: r.Title,
		Ops: r.Ops, Items: r.Items, Bytes: r.Bytes, Errors: r.Errors, Throttled: r.Throttled, Missed: r.Missed,
		Seconds:    r.Elapsed.Seconds(),
		Incomplete: r.Incomplete,
	}
	p.ErrorSamples = append(p.ErrorSamples, r.Samples...)
	p.Access = append(p.Access, r.Access...)
	p.SetRates()
	// Encoding a histogram fails only for geometry it was not made with.
	_ = report.SetLatency(&p, r.Hist)
	_ = report.SetTTFB(&p, r.TTFB)
	_ = report.SetService(&p, r.Service)
	for _, s := range r.Series {
		p.Series = append(p.Series, s.Report())
	}
	return p
}

// Report turns an interval into the result model's sample.
func (s Sample) Report() report.Sample {
	out := report.Sample{
		Start: s.Start.Seconds(), Seconds: s.Dur.Seconds(),
		Ops: s.Ops, Bytes: s.Bytes, Errors: s.Errors, Latency: s.Latency,
	}
	if out.Seconds > 0 {
		out.OpsPerSec = float64(s.Ops) / out.Seconds
		out.BytesPerSec = float64(s.Bytes) / out.Seconds
	}
	return out
}
