package metrics

import (
	"math/rand/v2"
	"testing"
	"time"
)

// recorderValues are the edges of HdrHistogram's buckets, the clamped
// ends, and values spread over every power of two up to an hour.
func recorderValues() []time.Duration {
	v := []time.Duration{-5, 0, 1, 2, 127, 128, 129, 255, 256, 257, 511, 512, 513, 1000,
		1 << 20, 1<<20 + 1, time.Duration(maxLatency) - 1, time.Duration(maxLatency), 2 * time.Hour}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		v = append(v, time.Duration(r.Int64N(1<<uint(r.IntN(43)))))
	}
	return v
}

// A Recorder added into a Histogram gives the histogram that recording
// the same values straight into it gives: the same encoding, byte for byte.
func TestRecorderSameAsHistogram(t *testing.T) {
	direct, rec := NewHistogram(), new(Recorder)
	for _, d := range recorderValues() {
		direct.Record(d)
		rec.Record(d)
	}
	check := func(what string) {
		t.Helper()
		merged := NewHistogram()
		merged.Add(rec)
		merged.Add(nil)
		want, err := direct.Encode()
		if err != nil {
			t.Fatal(err)
		}
		got, err := merged.Encode()
		if err != nil {
			t.Fatal(err)
		}
		if got != want || merged.Count() != rec.Count() || merged.Summary() != direct.Summary() {
			t.Fatalf("%s: recorder added gives %+v (count %d), recorded directly %+v", what, merged.Summary(), rec.Count(), direct.Summary())
		}
	}
	check("first pass")
	direct.Reset()
	rec.Reset()
	if rec.Count() != 0 {
		t.Fatalf("count after reset = %d", rec.Count())
	}
	for _, d := range []time.Duration{3 * time.Microsecond, 40 * time.Millisecond} {
		direct.Record(d)
		rec.Record(d)
	}
	check("after reset")
}

// A worker's recorder holds the powers of two its latencies fall in, not
// all 36 KiB of a Histogram, and once they have been seen it records
// without allocating.
func TestRecorderFootprint(t *testing.T) {
	rec := new(Recorder)
	// 10 us to 10 ms: about ten powers of two.
	for d := 10 * time.Microsecond; d <= 10*time.Millisecond; d += 997 * time.Nanosecond {
		rec.Record(d)
	}
	pages := 0
	for _, p := range rec.pages {
		if p != nil {
			pages++
		}
	}
	if kib := pages * recPageLen * 8 / 1024; pages > 11 || kib > 11 {
		t.Errorf("a recorder of 10 us to 10 ms holds %d pages (%d KiB), want at most 11", pages, kib)
	}
	if full := NewHistogram().h.ByteSize(); full < 36*1024 {
		t.Errorf("a Histogram holds %d bytes: the comparison above is moot", full)
	}
	rec.Reset()
	if n := testing.AllocsPerRun(1000, func() { rec.Record(500 * time.Microsecond) }); n != 0 {
		t.Errorf("Record after warm-up: %v allocations, want 0", n)
	}
}

func BenchmarkRecorderRecord(b *testing.B) {
	r := new(Recorder)
	for i := 0; i < b.N; i++ {
		r.Record(time.Duration(i%100000) * time.Microsecond)
	}
}
