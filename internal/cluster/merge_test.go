package cluster

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

// hostPhase is a host's phase of steady throughput: ops operations of 1
// MiB over secs seconds, in intervals of a tenth of it.
func hostPhase(t *testing.T, ops int64, secs float64, lat time.Duration) report.PhaseResult {
	h := metrics.NewHistogram()
	for range ops {
		h.Record(lat)
	}
	p := report.PhaseResult{Name: "write-big", Title: "Write big file", Ops: ops, Items: 1, Bytes: ops << 20, Seconds: secs,
		Value: report.Measure{Unit: report.UnitMiBPerSec}, Cost: report.Measure{Unit: report.UnitSecondsPerFile}}
	for i := range 10 {
		p.Series = append(p.Series, report.Sample{Start: secs * float64(i) / 10, Seconds: secs / 10, Ops: ops / 10, Bytes: (ops / 10) << 20})
	}
	p.SetRates()
	if err := report.SetLatency(&p, h); err != nil {
		t.Fatal(err)
	}
	return p
}

// Two hosts, the second starting 0.5 s later and twice as slow: the
// aggregate spans first start to last end, the skew is 0.5 s, and the
// stonewall rate counts what both did until the first one finished.
func TestMergeSkewAndStonewall(t *testing.T) {
	t0 := time.Unix(1000, 0)
	res := func(p report.PhaseResult) *report.Result {
		return &report.Result{Parameters: report.Params{{Key: "threads", Value: 2}}, Phases: []report.PhaseResult{p}}
	}
	hosts := []HostResult{
		{Address: "a:1", Result: res(hostPhase(t, 100, 1, time.Millisecond)), Starts: map[string]time.Time{"write-big": t0}},
		{Address: "b:1", Result: res(hostPhase(t, 100, 2, 10*time.Millisecond)), Starts: map[string]time.Time{"write-big": t0.Add(500 * time.Millisecond)}},
	}
	base := &report.Result{}
	if err := Merge(base, hosts); err != nil {
		t.Fatal(err)
	}
	p := base.Phases[0]
	if p.Ops != 200 || p.Seconds != 2.5 || p.StartSkew != 0.5 || len(p.Hosts) != 2 {
		t.Fatalf("ops %d seconds %v skew %v hosts %d", p.Ops, p.Seconds, p.StartSkew, len(p.Hosts))
	}
	if p.Value.Value != 80 { // 200 MiB in 2.5 s
		t.Errorf("value %v MiB/s, want 80", p.Value.Value)
	}
	// The cost is by latencies: 100 blocks of 1 ms and 100 of 10 ms over
	// 2 files, within the histogram's precision.
	if c := p.Cost.Value; c < 0.55*0.99 || c > 0.55*1.01 {
		t.Errorf("cost %v s/file, want 0.55", c)
	}
	sw := p.Stonewall
	// Until a's end at 1 s: a did 100, b (started at 0.5 s, 50 a second)
	// did 25.
	if sw == nil || sw.Seconds != 1 || sw.Ops != 125 || sw.BytesPerSec != 125<<20 {
		t.Errorf("stonewall %+v, want 125 ops in 1 s", sw)
	}
	if p.Hosts[1].StartOffset != 0.5 || base.Parameters.Get("hosts") != 2 {
		t.Errorf("host offset %v, hosts parameter %v", p.Hosts[1].StartOffset, base.Parameters.Get("hosts"))
	}
	if p.Latency.P50 > 1100 || p.Latency.P99 < 9000 {
		t.Errorf("merged percentiles p50 %v p99 %v us", p.Latency.P50, p.Latency.P99)
	}
}

func TestMergeWithoutResults(t *testing.T) {
	if err := Merge(&report.Result{}, []HostResult{{Address: "a:1", Err: "lost"}}); err == nil {
		t.Error("merging no results gave no error")
	}
}

// The merged rate parameter is the total of the hosts' parts (a whole
// rate's remainder on the first host, a fraction's rounding), not the
// first host's part.
func TestMergeRateTotal(t *testing.T) {
	for _, c := range []struct {
		parts []any
		want  float64
	}{
		{[]any{101.0, 100.0, 100.0}, 301},
		{[]any{10.0 / 3, 10.0 / 3, 10.0 / 3}, 10},
		{[]any{json.Number("50"), json.Number("50")}, 100},
	} {
		var hosts []HostResult
		for i, r := range c.parts {
			hosts = append(hosts, HostResult{Address: fmt.Sprint(i), Result: &report.Result{Parameters: report.Params{{Key: "rate", Value: r}}}})
		}
		base := &report.Result{}
		if err := Merge(base, hosts); err != nil {
			t.Fatal(err)
		}
		if got := base.Parameters.Get("rate"); got != c.want {
			t.Errorf("parts %v merged to rate %v, want %v", c.parts, got, c.want)
		}
	}
}
