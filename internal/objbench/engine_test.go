package objbench

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
)

// objbench on the one engine, against a real MinIO: --duration and
// --interval give each item a time series with percentiles, the stored
// histograms hold every operation, and two runs merge exactly.
func TestDurationIntervalSeriesOnMinIO(t *testing.T) {
	m, env := minioEnv(t, false)
	args := []string{"objbench", "--storage", "minio", m.URL("engine-series"), "--skip-functional-tests",
		"--big-object-size", "8M", "--block-size", "1M", "--small-objects", "10", "--small-object-size", "16K", "-p", "2",
		"--duration", "1s", "--interval", "250ms", "-o", "json"}
	var results []*report.Result
	for range 2 {
		out := fsbench(t, env, args...)
		if out.Code != 0 {
			t.Fatalf("exit %d: %s", out.Code, out.Stderr)
		}
		r, err := report.ReadJSON(strings.NewReader(out.Stdout))
		if err != nil {
			t.Fatal(err)
		}
		results = append(results, r)
		if !strings.Contains(out.Stderr, "p99") {
			t.Errorf("no interval lines on stderr:\n%s", out.Stderr)
		}
	}
	r := results[0]
	if r.Parameters.Get("duration_s") == nil {
		t.Errorf("parameters lack the duration: %s", mustJSON(t, r.Parameters))
	}
	for _, p := range r.Phases {
		if p.Name == "delete" || p.Value.Unit == report.CheckNotSupport {
			continue // one pass over what the others made; not on S3
		}
		if p.Seconds < 0.9 || len(p.Series) < 3 {
			t.Errorf("%s: %.2fs, %d intervals; want about 1s in 4 intervals", p.Name, p.Seconds, len(p.Series))
		}
		var ops int64
		for _, s := range p.Series {
			ops += s.Ops
			if s.Ops > 0 && s.Latency.P99 < s.Latency.P50 {
				t.Errorf("%s: interval p99 %v below p50 %v", p.Name, s.Latency.P99, s.Latency.P50)
			}
		}
		if ops != p.Ops || p.Latency.Count != p.Ops || p.Histogram == "" {
			t.Errorf("%s: intervals add to %d ops, total %d, latency count %d, histogram %d chars", p.Name, ops, p.Ops, p.Latency.Count, len(p.Histogram))
		}
		if (p.Name == "download" || p.Name == "get-small") && (p.TTFB == nil || p.TTFBHistogram == "" || p.TTFB.P50 > p.Latency.P50) {
			t.Errorf("%s: time to first byte %+v, latency p50 %v", p.Name, p.TTFB, p.Latency.P50)
		}
	}
	up := []report.PhaseResult{*results[0].FindPhase("upload"), *results[1].FindPhase("upload")}
	merged, err := report.MergePhases(up)
	if err != nil {
		t.Fatal(err)
	}
	if merged.Ops != up[0].Ops+up[1].Ops || merged.Latency.Count != merged.Ops {
		t.Errorf("merged %d ops (histogram %d) of %d + %d", merged.Ops, merged.Latency.Count, up[0].Ops, up[1].Ops)
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
