package metrics

import (
	"math/bits"
	"time"
)

// Recorder is one worker's latency histogram: the buckets of Histogram,
// with the counts of each power of two in a page of its own, made the
// first time a value falls in it. The latencies of one phase span a few of
// the 42 powers of two a Histogram covers, so a Recorder holds a few KiB
// where a Histogram holds 36, and a run keeps one per worker (9 MiB at
// -p 256 as Histograms). Pages are kept across Reset: once its phase has
// been seen, recording allocates nothing. Histogram.Add merges it.
type Recorder struct {
	pages [recPages]*[recPageLen]int64
	count int64
}

// HdrHistogram's layout at minLatency 1 and sigFigs 2: 256 sub-buckets in
// the first bucket, the upper 128 of them in every later one, each bucket
// twice as wide as the one before. Page p of 128 counts holds bucket p-1,
// and pages 0 and 1 the two halves of bucket 0; maxLatency (an hour) is in
// bucket 34, on page 35 (TestRecorderSameAsHistogram records it).
const (
	recHalfBits = 7 // log2 of the half count of sub-buckets
	recPageLen  = 1 << recHalfBits
	recPages    = 36
)

// recIndex is the index of v's count in HdrHistogram's counts array.
func recIndex(v int64) int {
	bucket := bits.Len64(uint64(v)|(2*recPageLen-1)) - (recHalfBits + 1)
	sub := int(v >> bucket)
	return (bucket+1)<<recHalfBits + sub - recPageLen
}

// recValue is the lowest value that counts index i holds.
func recValue(i int) int64 {
	bucket, sub := i>>recHalfBits-1, i&(recPageLen-1)+recPageLen
	if bucket < 0 {
		bucket, sub = 0, sub-recPageLen
	}
	return int64(sub) << bucket
}

// Record adds one observation, clamped as Histogram.Record clamps it.
func (r *Recorder) Record(d time.Duration) {
	i := recIndex(clamp(d))
	p := r.pages[i>>recHalfBits]
	if p == nil {
		p = new([recPageLen]int64)
		r.pages[i>>recHalfBits] = p
	}
	p[i&(recPageLen-1)]++
	r.count++
}

// Count is the number of observations.
func (r *Recorder) Count() int64 { return r.count }

// Reset forgets every observation and keeps the pages.
func (r *Recorder) Reset() {
	for _, p := range r.pages {
		if p != nil {
			*p = [recPageLen]int64{}
		}
	}
	r.count = 0
}

// Add adds every observation of r into h; a nil r adds nothing.
func (h *Histogram) Add(r *Recorder) {
	if r == nil || r.count == 0 {
		return
	}
	for n, p := range r.pages {
		if p == nil {
			continue
		}
		for j, c := range p {
			if c != 0 {
				_ = h.h.RecordValues(recValue(n<<recHalfBits+j), c)
			}
		}
	}
}
