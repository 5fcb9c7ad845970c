// Package metrics records operation latencies and counts. It is pure: no
// I/O, no clocks of its own. Each worker records latencies into its own
// Histogram without locks, and the histograms are merged when a phase ends;
// Live counters are atomics that workers share with readers.
//
// It imports no package of fsbench's.
package metrics

import (
	"fmt"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Latency bounds of the histogram: nanosecond values up to one hour, with two
// significant digits: HdrHistogram then keeps 128 sub-buckets per power of
// two, so a recorded value is off by less than 0.8% (fio's latency bins are
// 1.6% wide). Three digits would cost 270 KiB of counts per histogram, and
// a run keeps one per worker; two cost 36 KiB.
const (
	minLatency = int64(1)
	maxLatency = int64(time.Hour)
	sigFigs    = 2
)

// Histogram records latencies with bounded relative error and constant memory.
type Histogram struct {
	h *hdrhistogram.Histogram
}

// NewHistogram returns an empty latency histogram.
func NewHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(minLatency, maxLatency, sigFigs)}
}

// Encode returns the histogram in HdrHistogram's standard encoded form
// (V2, compressed, base64), which every HdrHistogram library reads.
func (h *Histogram) Encode() (string, error) {
	return encodeV2(h.h), nil
}

// Decode reads a histogram written by Encode. A histogram of another
// geometry (written by another tool) is accepted: Merge adds it value by
// value.
func Decode(s string) (*Histogram, error) {
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return &Histogram{h: h}, nil
}

// Distribution returns the histogram's populated buckets in increasing
// order of value: each with the range of values it holds (From, the
// lowest, to To, the highest equivalent value) and its count.
func (h *Histogram) Distribution() []Bar {
	var out []Bar
	for _, b := range h.h.Distribution() {
		if b.Count > 0 {
			out = append(out, Bar{From: time.Duration(b.From), To: time.Duration(b.To), Count: b.Count})
		}
	}
	return out
}

// Bar is one populated bucket of a histogram.
type Bar struct {
	From, To time.Duration
	Count    int64
}

// Quantile returns the latency at quantile q (0..100).
func (h *Histogram) Quantile(q float64) time.Duration {
	return time.Duration(h.h.ValueAtQuantile(q))
}

// Record adds one observation. Values outside the range are clamped, so a
// stalled operation still counts as the slowest one rather than vanishing.
func (h *Histogram) Record(d time.Duration) {
	_ = h.h.RecordValue(clamp(d))
}

// clamp brings d into the histogram's range.
func clamp(d time.Duration) int64 {
	return min(max(int64(d), minLatency), maxLatency)
}

// Merge adds all observations of o into h.
func (h *Histogram) Merge(o *Histogram) {
	if o != nil {
		h.h.Merge(o.h)
	}
}

// Count is the number of observations.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// StdDev is the standard deviation of the observations.
func (h *Histogram) StdDev() time.Duration { return time.Duration(h.h.StdDev()) }

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
	// ReadBytes is the part of Bytes that was read, counted after Bytes,
	// so that a phase mixing reads and writes can be split; WriteBytes
	// the rest. Each only grows, as a counter of each direction must.
	ReadBytes  atomic.Int64
	WriteBytes atomic.Int64
	// Buckets counts the latencies of Ops by power of two of
	// microseconds: Buckets[k] those above LiveBucketBound(k-1) and at most
	// LiveBucketBound(k), the last one every latency above that. One
	// atomic add per operation, for live latency histograms (Prometheus).
	Buckets [LiveBuckets]atomic.Int64
	// Measured and MeasuredNs are, once the phase has ended, its
	// operations and its time as its result counts them (the warm-up left
	// out); 0 while it runs. A progress line ends with them, so that its
	// rate is the result's.
	Measured   atomic.Int64
	MeasuredNs atomic.Int64
	// ByOp holds the counts of each operation of a phase that runs
	// several (an object store's mix), named by OpNames; nil otherwise.
	// The engine sets both before the phase starts and leaves them.
	ByOp    []*Live
	OpNames []string
}

// LiveBuckets is the number of latency buckets of Live: up to 2^24 µs
// (16.8 s), and one for everything slower.
const LiveBuckets = 26

// LiveBucketBound is the upper bound of Live's latency bucket k
// (k < LiveBuckets-1): 2^k µs.
func LiveBucketBound(k int) time.Duration { return time.Duration(1<<k) * time.Microsecond }

// liveBucket is the index of the bucket of latency d: the smallest k with
// d <= 2^k µs.
func liveBucket(d time.Duration) int {
	if d <= time.Microsecond {
		return 0
	}
	return min(bits.Len64(uint64(d-1)/uint64(time.Microsecond)), LiveBuckets-1)
}

// Reset zeroes every counter (the engine does at the start of a phase).
func (l *Live) Reset() {
	l.Ops.Store(0)
	l.Bytes.Store(0)
	l.Errors.Store(0)
	l.LatencyNs.Store(0)
	l.ReadBytes.Store(0)
	l.WriteBytes.Store(0)
	l.Measured.Store(0)
	l.MeasuredNs.Store(0)
	for i := range l.Buckets {
		l.Buckets[i].Store(0)
	}
}

// Snapshot is a copy of Live's counters at one instant.
type Snapshot struct {
	Ops, Bytes, Errors, LatencyNs, ReadBytes int64
}

// Snapshot reads all counters (ReadBytes before Bytes, so that it never
// exceeds it in the copy).
func (l *Live) Snapshot() Snapshot {
	r := l.ReadBytes.Load()
	return Snapshot{Ops: l.Ops.Load(), Bytes: l.Bytes.Load(), Errors: l.Errors.Load(), LatencyNs: l.LatencyNs.Load(), ReadBytes: r}
}

// LiveBatch gathers one worker's operations for Live, which Flush adds
// at once: an atomic add per counter for many operations, where Add makes
// three or four for each, on cache lines every worker's CPU writes and
// that move between the CPUs at every operation. Not safe for concurrent
// use: a worker has its own.
type LiveBatch struct {
	ops, bytes, readBytes, latencyNs int64
	buckets                          [LiveBuckets]int64
	used                             uint32 // the buckets with counts, a bit each
}

// LiveBatch.used has a bit for each of Live's buckets: this fails to
// compile when there are more buckets than bits.
var _ [32 - LiveBuckets]struct{}

// Add records one completed operation in the batch.
func (b *LiveBatch) Add(bytes int64, lat time.Duration) {
	b.ops++
	b.bytes += bytes
	b.latencyNs += int64(lat)
	k := liveBucket(lat)
	b.buckets[k]++
	b.used |= 1 << k
}

// AddRead records bytes read, part of the bytes of operations added.
func (b *LiveBatch) AddRead(n int64) { b.readBytes += n }

// Ops is the operations in the batch.
func (b *LiveBatch) Ops() int64 { return b.ops }

// Flush adds the batch to l and empties it. ReadBytes is added after
// Bytes, as Add's callers do.
func (l *Live) Flush(b *LiveBatch) {
	if b.ops != 0 {
		l.Ops.Add(b.ops)
		if b.bytes != 0 {
			l.Bytes.Add(b.bytes)
		}
		l.LatencyNs.Add(b.latencyNs)
		for u := b.used; u != 0; u &= u - 1 {
			k := bits.TrailingZeros32(u)
			l.Buckets[k].Add(b.buckets[k])
			b.buckets[k] = 0
		}
	}
	if b.readBytes != 0 {
		l.ReadBytes.Add(b.readBytes)
	}
	if w := b.bytes - b.readBytes; w > 0 {
		l.WriteBytes.Add(w)
	}
	b.ops, b.bytes, b.readBytes, b.latencyNs, b.used = 0, 0, 0, 0, 0
}
