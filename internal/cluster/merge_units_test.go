package cluster

import (
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
)

// unitHosts are two hosts that ran one phase whose value and cost are in
// unit u, each with figures of its own in it.
func unitHosts(t *testing.T, u report.Unit) []HostResult {
	t0 := time.Unix(1000, 0)
	var hosts []HostResult
	for i, addr := range []string{"a:1", "b:1"} {
		p := hostPhase(t, 100, float64(i+1), time.Millisecond)
		p.Items = 10
		p.SetRates()
		p.Value = report.Measure{Unit: u, Value: 40 + float64(i)}
		p.Cost = report.Measure{Unit: u, Value: 60 + float64(i)}
		hosts = append(hosts, HostResult{Address: addr, Result: &report.Result{Phases: []report.PhaseResult{p}},
			Starts: map[string]time.Time{p.Name: t0}})
	}
	return hosts
}

// Every unit a command may write has a rule that merges it across hosts:
// a phase with counts, time and latency gets a figure other than 0 in it,
// as value and as cost.
func TestEveryUnitMerges(t *testing.T) {
	for _, u := range report.Units {
		base := &report.Result{}
		err := Merge(base, unitHosts(t, u))
		if err != nil {
			t.Errorf("%s: %v", u, err)
			continue
		}
		p := base.Phases[0]
		if p.Value.Unit != u || p.Cost.Unit != u {
			t.Errorf("%s: merged into %s and %s", u, p.Value.Unit, p.Cost.Unit)
		}
		if u == report.UnitNotSupported {
			continue // nothing measured, nothing merged
		}
		if p.Value.Value <= 0 || p.Cost.Value <= 0 {
			t.Errorf("%s: merged value %v, cost %v: want figures, not 0", u, p.Value.Value, p.Cost.Value)
		}
	}
}

// A unit without a rule fails the merge, naming the unit and where to
// give it one, rather than showing a figure of 0.
func TestUnknownUnitFailsMerge(t *testing.T) {
	err := Merge(&report.Result{}, unitHosts(t, "furlongs/s"))
	if err == nil || !strings.Contains(err.Error(), `"furlongs/s"`) || !strings.Contains(err.Error(), "figure") {
		t.Fatalf("merge of an unknown unit: %v", err)
	}
}

// The rates of the units beyond MiB/s come from the aggregate's counts:
// GiB/s from its bytes, kIOPS from its items in thousands, samples/s
// from its items.
func TestMergedRates(t *testing.T) {
	for u, want := range map[report.Unit]float64{
		report.UnitGiBPerSec:     200.0 / 1024 / 2, // 200 MiB in 2 s
		report.UnitKIOPS:         20.0 / 2 / 1000,
		report.UnitSamplesPerSec: 20.0 / 2,
		report.UnitOpsPerSec:     200.0 / 2,
	} {
		base := &report.Result{}
		if err := Merge(base, unitHosts(t, u)); err != nil {
			t.Fatal(err)
		}
		if got := base.Phases[0].Value.Value; got != want {
			t.Errorf("%s: merged value %v, want %v", u, got, want)
		}
	}
}

// A figure the hosts' own figures make (% AU) is their mean by the
// threads each host says it ran, as its typed field; the parameter of the
// same name is only for older results.
func TestMergeCountsTypedThreads(t *testing.T) {
	t0 := time.Unix(1000, 0)
	var hosts []HostResult
	for i, addr := range []string{"a:1", "b:1"} {
		r := &report.Result{Threads: 1 + 2*i, Parameters: report.Params{{Key: "threads", Value: 100 - 99*i}},
			Phases: []report.PhaseResult{hostPhase(t, 100, 2, time.Millisecond)}}
		r.Phases[0].Cost = report.Measure{Unit: report.UnitAUPercent, Value: 50 + 40*float64(i)}
		hosts = append(hosts, HostResult{Address: addr, Result: r, Starts: map[string]time.Time{"write-big": t0.Add(time.Duration(i))}})
	}
	base := &report.Result{}
	if err := Merge(base, hosts); err != nil {
		t.Fatal(err)
	}
	p := base.Phases[0]
	if want := (50*1 + 90*3) / 4.0; p.Cost.Value != want { // 1 and 3 threads, not 100 and 1
		t.Errorf("cost %v %% AU, want %v", p.Cost.Value, want)
	}
	if base.Threads != 1 {
		t.Errorf("merged result: %d threads a host, want the first host's 1", base.Threads)
	}
}
