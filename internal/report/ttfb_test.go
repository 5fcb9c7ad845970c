package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/metrics"
)

// The table shows the time to first byte beside latency for objbench's
// workloads, and only there (JuiceFS's objbench table keeps its columns).
func TestTableTTFBColumns(t *testing.T) {
	mk := func(workload bool) *Result {
		s := metrics.Summary{Count: 3, P50: 1500, P99: 2500, Max: 2600}
		p := PhaseResult{Name: "get", Title: "get objects", Ops: 3, Latency: metrics.Summary{Count: 3, P50: 2000, P99: 4000, Max: 4100}, TTFB: &s}
		r := &Result{SchemaVersion: SchemaVersion, Command: "objbench", Phases: []PhaseResult{p, {Name: "stat", Title: "stat objects"}}}
		if workload {
			r.Parameters = Params{{Key: "workload", Value: "get"}}
		}
		return r
	}
	var b bytes.Buffer
	if err := WriteTable(&b, mk(true), Options{}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(b.String(), "\n")
	var header, get string
	for _, l := range lines {
		if strings.Contains(l, "ITEM") {
			header = l
		}
		if strings.Contains(l, "get objects") {
			get = l
		}
	}
	if !strings.Contains(header, "TTFB P50") || !strings.Contains(header, "TTFB P99") {
		t.Errorf("workload table lacks the TTFB columns:\n%s", b.String())
	}
	if !strings.Contains(get, "1.50ms") || !strings.Contains(get, "2.50ms") {
		t.Errorf("get row lacks its TTFB percentiles: %q", get)
	}
	b.Reset()
	if err := WriteTable(&b, mk(false), Options{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "TTFB") {
		t.Errorf("JuiceFS's table grew TTFB columns:\n%s", b.String())
	}
}
