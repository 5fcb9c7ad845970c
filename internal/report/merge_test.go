package report

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
)

// phaseOf builds a phase whose latency histogram holds the given values.
func phaseOf(t *testing.T, name string, secs float64, bytesEach int64, lat ...time.Duration) PhaseResult {
	t.Helper()
	h := metrics.NewHistogram()
	for _, d := range lat {
		h.Record(d)
	}
	p := PhaseResult{Name: name, Title: name, Ops: int64(len(lat)), Items: int64(len(lat)), Bytes: bytesEach * int64(len(lat)), Seconds: secs}
	p.SetRates()
	if err := SetLatency(&p, h); err != nil {
		t.Fatal(err)
	}
	return p
}

// Two results written to JSON and read back merge to counts that add up,
// and to percentiles of the merged distribution: one host saw 90 fast
// operations, the other 10 slow ones; the merged p50 is fast and the p99
// slow, which no average of the two hosts' percentiles gives.
func TestMergeResultsThroughJSON(t *testing.T) {
	var fast, slow []time.Duration
	for range 90 {
		fast = append(fast, time.Millisecond)
	}
	for range 10 {
		slow = append(slow, 100*time.Millisecond)
	}
	a := &Result{SchemaVersion: SchemaVersion, Tool: "fsbench", Command: "bench", Phases: []PhaseResult{phaseOf(t, "write-big", 2, 1<<20, fast...)}}
	b := &Result{SchemaVersion: SchemaVersion, Tool: "fsbench", Command: "bench", Phases: []PhaseResult{phaseOf(t, "write-big", 4, 1<<20, slow...)}}
	var parts []PhaseResult
	for _, r := range []*Result{a, b} {
		var buf bytes.Buffer
		if err := WriteJSON(&buf, r); err != nil {
			t.Fatal(err)
		}
		back, err := ReadJSON(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if back.Phases[0].Histogram == "" {
			t.Fatal("the histogram was not stored in JSON")
		}
		parts = append(parts, back.Phases[0])
	}
	m, err := MergePhases(parts)
	if err != nil {
		t.Fatal(err)
	}
	if m.Ops != 100 || m.Bytes != 100<<20 || m.Latency.Count != 100 {
		t.Fatalf("merged ops %d bytes %d latency count %d, want 100, 100 MiB, 100", m.Ops, m.Bytes, m.Latency.Count)
	}
	if m.Seconds != 4 || m.OpsPerSec != 25 {
		t.Errorf("merged seconds %v ops/s %v, want 4 and 25", m.Seconds, m.OpsPerSec)
	}
	if !near(m.Latency.P50, 1000, 0.01) {
		t.Errorf("merged p50 = %v us, want about 1000", m.Latency.P50)
	}
	if !near(m.Latency.P99, 100000, 0.01) {
		t.Errorf("merged p99 = %v us, want about 100000", m.Latency.P99)
	}
	avg := (parts[0].Latency.P99 + parts[1].Latency.P99) / 2
	if near(m.Latency.P99, avg, 0.05) {
		t.Errorf("merged p99 %v equals the average of percentiles %v", m.Latency.P99, avg)
	}
	h, err := m.LatencyHistogram()
	if err != nil || h.Count() != 100 {
		t.Fatalf("merged histogram: %v, count %v", err, h)
	}
}

func TestMergeRefusesVersion1WithoutHistogram(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "compare", "old.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := ReadJSON(f)
	if err != nil {
		t.Fatalf("a version-1 result must still be read: %v", err)
	}
	if r.SchemaVersion != 1 || len(r.Phases) == 0 {
		t.Fatalf("read %d phases of version %d", len(r.Phases), r.SchemaVersion)
	}
	_, err = MergePhases([]PhaseResult{r.Phases[0], r.Phases[0]})
	if !errors.Is(err, ErrNoHistogram) {
		t.Fatalf("merging version-1 phases: %v, want ErrNoHistogram", err)
	}
}

func TestMergeNamesMismatch(t *testing.T) {
	_, err := MergePhases([]PhaseResult{phaseOf(t, "a", 1, 0, time.Millisecond), phaseOf(t, "b", 1, 0, time.Millisecond)})
	if err == nil {
		t.Fatal("phases of different names merged")
	}
}

func near(a, b, rel float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= rel*max(a, b)
}
