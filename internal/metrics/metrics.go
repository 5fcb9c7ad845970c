// Package metrics records operation latencies and counts. It is pure: no
// I/O, no clocks of its own. Each worker owns a Recorder and records into it
// without locks; recorders are merged when a phase ends.
package metrics

import (
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency bounds of the histogram: 100 ns resolution up to one hour, three
// significant digits (0.1% relative error) everywhere in between.
const (
	minLatency = int64(100 * time.Nanosecond)
	maxLatency = int64(time.Hour)
	sigFigs    = 3
)

// Histogram records latencies with bounded relative error and constant memory.
type Histogram struct {
	h *hdrhistogram.Histogram
}

// NewHistogram returns an empty latency histogram.
func NewHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(minLatency/100, maxLatency, sigFigs)}
}

// Record adds one observation. Values outside the range are clamped, so a
// stalled operation still counts as the slowest one rather than vanishing.
func (h *Histogram) Record(d time.Duration) {
	v := int64(d)
	if v < 1 {
		v = 1
	}
	if v > maxLatency {
		v = maxLatency
	}
	_ = h.h.RecordValue(v)
}

// Merge adds all observations of o into h.
func (h *Histogram) Merge(o *Histogram) {
	if o != nil {
		h.h.Merge(o.h)
	}
}

// Count is the number of observations.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Reset forgets every observation.
func (h *Histogram) Reset() { h.h.Reset() }

// Summary condenses the histogram into the figures fsbench reports.
func (h *Histogram) Summary() Summary {
	if h.h.TotalCount() == 0 {
		return Summary{}
	}
	us := func(v int64) float64 { return float64(v) / 1e3 }
	return Summary{
		Count: h.h.TotalCount(),
		Mean:  h.h.Mean() / 1e3,
		Min:   us(h.h.Min()),
		P50:   us(h.h.ValueAtQuantile(50)),
		P90:   us(h.h.ValueAtQuantile(90)),
		P99:   us(h.h.ValueAtQuantile(99)),
		P999:  us(h.h.ValueAtQuantile(99.9)),
		Max:   us(h.h.Max()),
	}
}

// Summary is a latency distribution in microseconds.
type Summary struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean_us"`
	Min   float64 `json:"min_us"`
	P50   float64 `json:"p50_us"`
	P90   float64 `json:"p90_us"`
	P99   float64 `json:"p99_us"`
	P999  float64 `json:"p999_us"`
	Max   float64 `json:"max_us"`
}

// Live holds counters that other goroutines (progress bars, the stats
// publisher) read while workers update them. Only atomics: cheap on the hot
// path and safe to read at any time.
type Live struct {
	Ops       atomic.Int64
	Bytes     atomic.Int64
	Errors    atomic.Int64
	LatencyNs atomic.Int64 // sum of latencies of Ops, for a mean over an interval
}

// Snapshot is a copy of Live's counters at one instant.
type Snapshot struct {
	Ops, Bytes, Errors, LatencyNs int64
}

// Snapshot reads all counters.
func (l *Live) Snapshot() Snapshot {
	return Snapshot{Ops: l.Ops.Load(), Bytes: l.Bytes.Load(), Errors: l.Errors.Load(), LatencyNs: l.LatencyNs.Load()}
}

// Add records one completed operation.
func (l *Live) Add(bytes int64, lat time.Duration) {
	l.Ops.Add(1)
	if bytes != 0 {
		l.Bytes.Add(bytes)
	}
	l.LatencyNs.Add(int64(lat))
}
