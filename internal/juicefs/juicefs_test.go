package juicefs

import (
	"math"
	"os"
	"testing"
)

func load(t *testing.T, name string) Stats {
	t.Helper()
	data, err := os.ReadFile("../../testdata/juicefs/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return ParseStats(data)
}

func TestParseStats(t *testing.T) {
	s := ParseStats([]byte("a 1\nb 2.5\n\nbroken\nc x\n d 3 \n"))
	if len(s) != 3 || s["a"] != 1 || s["b"] != 2.5 || s["d"] != 3 {
		t.Fatalf("ParseStats = %v", s)
	}
	after := load(t, "jfs-stats-after.txt")
	if after["juicefs_fuse_ops_total_write"] != 16584 {
		t.Errorf("write ops = %v", after["juicefs_fuse_ops_total_write"])
	}
}

func TestDeltaRealFiles(t *testing.T) {
	before, after := load(t, "jfs-stats-before.txt"), load(t, "jfs-stats-after.txt")
	in := Delta(before, after, 10)
	if len(in.Rows) != len(Rows) {
		t.Fatalf("rows = %d", len(in.Rows))
	}
	byName := map[string]int{}
	for i, r := range in.Rows {
		byName[r.Name] = i
		if r.Unknown {
			t.Errorf("%s unknown", r.Name)
		}
		if r.Count < 0 || r.AvgMs < 0 {
			t.Errorf("%s negative: %+v", r.Name, r)
		}
	}
	put := in.Rows[byName["Put object"]]
	wantCount := after["juicefs_object_request_durations_histogram_seconds_PUT_total"] - before["juicefs_object_request_durations_histogram_seconds_PUT_total"]
	if float64(put.Count) != wantCount || put.Count <= 0 {
		t.Errorf("put count = %d, want %v", put.Count, wantCount)
	}
	wantAvg := (after["juicefs_object_request_durations_histogram_seconds_PUT_sum"] - before["juicefs_object_request_durations_histogram_seconds_PUT_sum"]) * 1000 / wantCount
	if math.Abs(put.AvgMs-wantAvg) > 1e-9 {
		t.Errorf("put avg = %v, want %v", put.AvgMs, wantAvg)
	}
	if in.ClientCPUPercent == nil || *in.ClientCPUPercent <= 0 {
		t.Errorf("client CPU = %v", in.ClientCPUPercent)
	}
	if in.ClientMemoryBytes == nil || *in.ClientMemoryBytes != 515088384 {
		t.Errorf("client memory = %v", in.ClientMemoryBytes)
	}
}

func TestDeltaCounterWentBackwards(t *testing.T) {
	before, after := load(t, "jfs-stats-after.txt"), load(t, "jfs-stats-before.txt")
	in := Delta(before, after, 10)
	for _, r := range in.Rows {
		if r.Count < 0 || r.AvgMs < 0 {
			t.Errorf("%s negative: %+v", r.Name, r)
		}
	}
	fuse := in.Rows[0]
	if !fuse.Unknown {
		t.Errorf("FUSE row went backwards but is not unknown: %+v", fuse)
	}
	if in.ClientCPUPercent != nil {
		t.Errorf("client CPU after restart = %v, want unknown", *in.ClientCPUPercent)
	}
	// A series that vanished between readings is unknown; one that first
	// appears in the second reading counts from zero.
	gone := Delta(load(t, "jfs-stats-after.txt"), Stats{}, 10)
	for _, r := range gone.Rows {
		if !r.Unknown {
			t.Errorf("%s vanished but is not unknown", r.Name)
		}
	}
	fresh := Delta(Stats{}, Stats{"juicefs_transaction_durations_histogram_seconds_total": 4, "juicefs_transaction_durations_histogram_seconds_sum": 0.008}, 10)
	if r := fresh.Rows[1]; r.Unknown || r.Count != 4 || math.Abs(r.AvgMs-2) > 1e-9 || r.Grade != "fair" {
		t.Errorf("new series = %+v", r)
	}
}

func FuzzParseStats(f *testing.F) {
	f.Add([]byte("juicefs_uptime 1.5\nx NaN\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		_ = ParseStats(data)
	})
}
