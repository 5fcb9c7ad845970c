package engine

import (
	"math"
	"math/bits"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
)

// Sample is the measurement of one interval of a phase.
type Sample struct {
	Start   time.Duration // since the measurement began (after the warm-up)
	Dur     time.Duration
	Ops     int64
	Bytes   int64
	Errors  int64
	Latency metrics.Summary // from log-linear buckets: percentiles within 1.6%
}

// Buckets of the interval histograms: values below 64 ns are exact, then
// 32 buckets per power of two (relative width 1/32) up to 2^42 ns (73
// minutes), where values are clamped.
const (
	subBits  = 5
	subCount = 1 << subBits
	maxShift = 42 - subBits - 1
	nBuckets = (maxShift+1)*subCount + 2*subCount
	maxValue = 1<<42 - 1
)

func bucketOf(v int64) int {
	if v < 2*subCount {
		return int(max(v, 0))
	}
	v = min(v, maxValue)
	shift := bits.Len64(uint64(v)) - subBits - 1
	return shift*subCount + int(v>>shift)
}

// bucketMid is a value representative of bucket i: its middle.
func bucketMid(i int) float64 {
	if i < 2*subCount {
		return float64(i)
	}
	shift := i/subCount - 1
	m := int64(i - shift*subCount)
	lo := m << shift
	return float64(lo) + float64(int64(1)<<shift)/2
}

// liveHist is a worker's histogram for intervals: only atomics, written by
// the worker without a lock and read by the series collector at any time.
type liveHist struct {
	counts [nBuckets]atomic.Int64
	sum    atomic.Int64 // ns
	bytes  atomic.Int64
	errs   atomic.Int64
	max    atomic.Int64 // since the collector last took it
}

func (h *liveHist) reset() {
	for i := range h.counts {
		h.counts[i].Store(0)
	}
	h.sum.Store(0)
	h.bytes.Store(0)
	h.errs.Store(0)
	h.max.Store(0)
}

func (h *liveHist) record(d time.Duration, n int64) {
	v := int64(d)
	h.counts[bucketOf(v)].Add(1)
	h.sum.Add(v)
	if n != 0 {
		h.bytes.Add(n)
	}
	for {
		m := h.max.Load()
		if v <= m || h.max.CompareAndSwap(m, v) {
			break
		}
	}
}

// seriesCollector cuts a phase into intervals: at the end of each it reads
// the workers' liveHists, subtracts what it read the time before, and
// reports the difference.
type seriesCollector struct {
	workers []*Worker
	p       *Phase
	c       *clock
	quit    chan struct{}
	done    chan struct{}
	once    sync.Once
	prev    [][nBuckets]int64
	prevSum []int64
	prevB   []int64
	prevE   []int64
	cur     [nBuckets]int64
	samples []Sample
	// endEarly stops the phase when p.EndEarly says the series allows.
	endEarly func()
}

// startSeries starts the collector of a phase with an Interval; it returns
// nil (whose stop does nothing) otherwise. early stops the phase, when its
// EndEarly says so.
func startSeries(workers []*Worker, p *Phase, c *clock, early func()) *seriesCollector {
	if p.Interval <= 0 {
		return nil
	}
	n := len(workers)
	s := &seriesCollector{
		workers: workers, p: p, c: c, quit: make(chan struct{}), done: make(chan struct{}),
		prev: make([][nBuckets]int64, n), prevSum: make([]int64, n), prevB: make([]int64, n), prevE: make([]int64, n),
	}
	if p.EndEarly != nil {
		s.endEarly = early
	}
	go s.run()
	return s
}

func (s *seriesCollector) run() {
	defer close(s.done)
	measure := s.c.at(s.c.measure)
	timer := time.NewTimer(time.Until(measure))
	defer timer.Stop()
	select {
	case <-timer.C:
	case <-s.quit:
		// Ended within the warm-up, or, when its end and the first timer
		// were both ready, before its first interval did: that one,
		// partial interval then holds all the phase measured.
		if now := time.Now(); !now.Before(measure) && s.pending() {
			s.take(measure, now)
		}
		return
	}
	last := measure
	for k := 1; ; k++ {
		timer.Reset(time.Until(measure.Add(time.Duration(k) * s.p.Interval)))
		select {
		case now := <-timer.C:
			if s.c.deadline > 0 && s.c.at(s.c.deadline).Sub(now) < s.p.Interval/10 {
				// The phase ends within a tenth of an interval: the
				// final take covers this interval and that sliver.
				<-s.quit
				s.take(last, time.Now())
				return
			}
			if s.take(last, now) {
				return // EndEarly ended the phase with this interval
			}
			last = now
		case <-s.quit:
			now := time.Now()
			// The last, partial interval, unless it is a sliver with
			// nothing in it.
			if now.Sub(last) > s.p.Interval/10 || s.pending() {
				s.take(last, now)
			}
			return
		}
	}
}

// pending reports whether operations were recorded since the last take.
func (s *seriesCollector) pending() bool {
	for i, w := range s.workers {
		if w.intervals.sum.Load() != s.prevSum[i] || w.intervals.errs.Load() != s.prevE[i] {
			return true
		}
	}
	return false
}

// take records the interval from..to. It reports whether that interval was
// the phase's last: EndEarly ended the phase, and the interval runs on to
// the workers' stop.
func (s *seriesCollector) take(from, to time.Time) (last bool) {
	clear(s.cur[:])
	var a intervalTotals
	s.gather(&a)
	smp := s.sample(from, to, &a)
	if s.endEarly != nil && s.p.EndEarly(append(s.samples, smp)) {
		s.endEarly()
		s.endEarly = nil
		// What the workers finish between this decision and their stop
		// belongs to this, the last interval: a sliver of an interval of
		// its own would show a rate from a few operations.
		<-s.quit
		s.gather(&a)
		smp = s.sample(from, time.Now(), &a)
		last = true
	}
	s.samples = append(s.samples, smp)
	if s.p.OnInterval != nil {
		s.p.OnInterval(smp)
	}
	return last
}

// intervalTotals are the sums of the workers' counters over an interval.
type intervalTotals struct{ sum, bytes, errs, max int64 }

// gather adds to s.cur and a what the workers recorded since the last
// gather.
func (s *seriesCollector) gather(a *intervalTotals) {
	for i, w := range s.workers {
		h := w.intervals
		for j := range h.counts {
			v := h.counts[j].Load()
			s.cur[j] += v - s.prev[i][j]
			s.prev[i][j] = v
		}
		v := h.sum.Load()
		a.sum += v - s.prevSum[i]
		s.prevSum[i] = v
		v = h.bytes.Load()
		a.bytes += v - s.prevB[i]
		s.prevB[i] = v
		v = h.errs.Load()
		a.errs += v - s.prevE[i]
		s.prevE[i] = v
		a.max = max(a.max, h.max.Swap(0))
	}
}

// sample is the interval from..to of the totals a and the buckets s.cur.
func (s *seriesCollector) sample(from, to time.Time, a *intervalTotals) Sample {
	smp := Sample{Start: from.Sub(s.c.at(s.c.measure)), Dur: to.Sub(from), Bytes: a.bytes, Errors: a.errs}
	smp.Latency, smp.Ops = summarize(&s.cur, a.sum, a.max)
	return smp
}

// summarize turns bucket counts into a latency summary in microseconds.
func summarize(counts *[nBuckets]int64, sumNs, maxNs int64) (metrics.Summary, int64) {
	var n int64
	for _, c := range counts {
		n += c
	}
	if n == 0 {
		return metrics.Summary{}, 0
	}
	s := metrics.Summary{Count: n, Mean: float64(sumNs) / float64(n) / 1e3, Max: float64(maxNs) / 1e3}
	qs := []struct {
		q   float64
		dst *float64
	}{{0, &s.Min}, {0.5, &s.P50}, {0.9, &s.P90}, {0.99, &s.P99}, {0.999, &s.P999}}
	for _, q := range qs {
		rank := int64(math.Ceil(q.q * float64(n)))
		rank = max(rank, 1)
		var seen int64
		for i, c := range counts {
			seen += c
			if seen >= rank {
				*q.dst = min(bucketMid(i)/1e3, s.Max)
				break
			}
		}
	}
	return s, n
}

// stop ends the collector after its last interval. It may be called more
// than once, and on nil.
func (s *seriesCollector) stop() {
	if s == nil {
		return
	}
	s.once.Do(func() {
		close(s.quit)
		<-s.done
	})
}
