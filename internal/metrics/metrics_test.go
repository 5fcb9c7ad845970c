package metrics

import (
	"math"
	"testing"
	"time"
)

func near(a, b, rel float64) bool { return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b)) }

func TestHistogramSummary(t *testing.T) {
	h := NewHistogram()
	if s := h.Summary(); s.Count != 0 || s.Max != 0 {
		t.Fatalf("empty summary = %+v", s)
	}
	// 1..1000 us: p50 = 500us, p90 = 900us, p99 = 990us, max = 1000us.
	for i := 1; i <= 1000; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	s := h.Summary()
	if s.Count != 1000 {
		t.Fatalf("count = %d", s.Count)
	}
	for name, c := range map[string][2]float64{
		"p50": {s.P50, 500}, "p90": {s.P90, 900}, "p99": {s.P99, 990}, "p999": {s.P999, 999},
		"max": {s.Max, 1000}, "min": {s.Min, 1}, "mean": {s.Mean, 500.5},
	} {
		if !near(c[0], c[1], 0.008) { // two significant digits: under 0.8%
			t.Errorf("%s = %v, want about %v", name, c[0], c[1])
		}
	}
}

func TestHistogramMergeAndClamp(t *testing.T) {
	a, b := NewHistogram(), NewHistogram()
	a.Record(time.Millisecond)
	b.Record(2 * time.Hour) // clamped to the maximum, still counted
	b.Record(-5)            // clamped to the minimum
	a.Merge(b)
	a.Merge(nil)
	s := a.Summary()
	if s.Count != 3 {
		t.Fatalf("count = %d, want 3", s.Count)
	}
	if !near(s.Max, float64(time.Hour/time.Microsecond), 0.008) {
		t.Errorf("max = %v us, want about one hour", s.Max)
	}
	a.Reset()
	if a.Count() != 0 {
		t.Errorf("count after reset = %d", a.Count())
	}
}

func TestLive(t *testing.T) {
	var l Live
	var b LiveBatch
	b.Add(4096, time.Millisecond)
	b.AddRead(4096)
	b.Add(0, time.Millisecond)
	l.Errors.Add(1)
	if s := l.Snapshot(); s.Ops != 0 || s.Bytes != 0 || b.Ops() != 2 {
		t.Fatalf("before the flush: snapshot %+v, %d in the batch", s, b.Ops())
	}
	l.Flush(&b)
	l.Flush(&b) // emptied by the first
	s := l.Snapshot()
	if s.Ops != 2 || s.Bytes != 4096 || s.ReadBytes != 4096 || s.Errors != 1 || s.LatencyNs != int64(2*time.Millisecond) || l.Buckets[10].Load() != 2 {
		t.Fatalf("snapshot = %+v, %d in the 1 ms bucket", s, l.Buckets[10].Load())
	}
}

// TestLiveBatchIsAdd: a batch flushed now and then counts what adding
// each operation to Live would have, bucket by bucket.
func TestLiveBatchIsAdd(t *testing.T) {
	var want, got Live
	var b LiveBatch
	for i := range 1000 {
		lat := time.Duration(i*i*37) * time.Nanosecond
		n := int64(i % 7)
		want.Ops.Add(1)
		want.Bytes.Add(n)
		want.LatencyNs.Add(int64(lat))
		want.Buckets[liveBucket(lat)].Add(1)
		b.Add(n, lat)
		if i%13 == 0 {
			got.Flush(&b)
		}
	}
	got.Flush(&b)
	if want.Snapshot() != got.Snapshot() {
		t.Fatalf("batched %+v, added %+v", got.Snapshot(), want.Snapshot())
	}
	for k := range want.Buckets {
		if want.Buckets[k].Load() != got.Buckets[k].Load() {
			t.Errorf("bucket %d: batched %d, added %d", k, got.Buckets[k].Load(), want.Buckets[k].Load())
		}
	}
}

func BenchmarkRecord(b *testing.B) {
	h := NewHistogram()
	for i := 0; i < b.N; i++ {
		h.Record(time.Duration(i%100000) * time.Microsecond)
	}
}

func TestLiveBuckets(t *testing.T) {
	cases := []struct {
		d    time.Duration
		want int
	}{
		{0, 0}, {time.Microsecond, 0}, {time.Microsecond + 1, 1}, {2 * time.Microsecond, 1},
		{2*time.Microsecond + 1, 2}, {time.Millisecond, 10}, {LiveBucketBound(24), 24},
		{LiveBucketBound(24) + 1, LiveBuckets - 1}, {time.Hour, LiveBuckets - 1},
	}
	for _, c := range cases {
		if got := liveBucket(c.d); got != c.want {
			t.Errorf("liveBucket(%v) = %d, want %d", c.d, got, c.want)
		}
		if c.want < LiveBuckets-1 && c.d > LiveBucketBound(c.want) {
			t.Errorf("%v above the bound of its bucket %d", c.d, c.want)
		}
	}
	var l Live
	var b LiveBatch
	b.Add(10, 3*time.Microsecond)
	b.Add(10, 3*time.Second)
	l.Flush(&b)
	if l.Buckets[2].Load() != 1 || l.Buckets[22].Load() != 1 {
		t.Fatalf("buckets after two adds: 3µs in %d, 3s in %d", l.Buckets[2].Load(), l.Buckets[22].Load())
	}
	l.Reset()
	if l.Buckets[2].Load() != 0 || l.Ops.Load() != 0 {
		t.Fatal("Reset left counts")
	}
}
