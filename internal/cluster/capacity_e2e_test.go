package cluster_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// capacityOnHosts runs bench's random 4 KiB reads with the capacity flag
// given (--curve=..., --slo ...) on two real agents over a tmpfs.
func capacityOnHosts(t *testing.T, flag string) *report.Result {
	t.Helper()
	root := testenv.Tmpfs(t, "64m")
	a, b := startAgent(t, root), startAgent(t, root)
	r := resultOf(t, coordinator(t, context.Background(), "bench", root, "--rw", "randread", "--file-size", "256K",
		"--xfer-size", "4K", "-p", "2", "--duration", "1s", flag, "--hosts", hostsFlag(a, b), "-o", "json"))
	if r.Capacity == nil || len(r.Hosts) != 2 || len(r.Capacity.Steps) < 2 || r.Capacity.Steps[0].Rate != 0 {
		t.Fatalf("no capacity of 2 hosts starting with the closed-loop maximum: %d hosts, %+v", len(r.Hosts), r.Capacity)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
	return r
}

// checkStepSplit checks an open-loop step of a capacity run on hosts: it
// scheduled about its rate over its time in all (done or missed), not the
// hosts' count times that, and its histogram holds every host's
// operations.
func checkStepSplit(t *testing.T, st report.CapacityStep) {
	t.Helper()
	want := st.Rate * st.Seconds
	if got := float64(st.Ops + st.Missed); got < 0.7*want || got > 1.3*want {
		t.Errorf("step at %.0f ops/s over %.2fs: %d done and %d missed, want about %.0f in all (twice that if each host ran the whole rate)",
			st.Rate, st.Seconds, st.Ops, st.Missed, want)
	}
	h, err := metrics.Decode(st.Histogram)
	if err != nil || h.Count() != st.Ops {
		t.Errorf("step at %.0f ops/s: histogram of %v operations (%v), want the %d of both hosts", st.Rate, h, err, st.Ops)
	}
}

// A curve on two hosts: each step's rate is split across them, and each
// step's phase is merged from both.
func TestCurveOnHosts(t *testing.T) {
	r := capacityOnHosts(t, "--curve=50,100")
	if len(r.Capacity.Steps) != 3 {
		t.Fatalf("%d steps, want the maximum and 2", len(r.Capacity.Steps))
	}
	for _, st := range r.Capacity.Steps[1:] {
		checkStepSplit(t, st)
	}
	for _, name := range []string{"randread.50pct", "randread.100pct"} {
		if p := r.FindPhase(name); p == nil || len(p.Hosts) != 2 {
			t.Errorf("phase %s not merged from 2 hosts: %+v", name, p)
		}
	}
}

// A search on two hosts: every probe's rate is split across them and the
// merged histogram is judged; an objective that tmpfs meets holds at the
// answer, which is stated with the latency of both hosts' operations.
func TestSLOOnHosts(t *testing.T) {
	r := capacityOnHosts(t, "--slo=p99<1s")
	a := r.Capacity.Answer
	if a == nil || a.OpsPerSec <= 0 || a.Latency.Count == 0 || a.Values["p99"] >= 1e6 {
		t.Fatalf("no answer under p99<1s: %+v", a)
	}
	at := false
	for _, st := range r.Capacity.Steps[1:] {
		checkStepSplit(t, st)
		at = at || st.Rate == a.OpsPerSec && a.Latency.Count == st.Ops
		if st.Holds == nil {
			t.Errorf("step at %.0f ops/s not judged", st.Rate)
		}
	}
	if !at {
		t.Errorf("the answer's latency (%d operations) is not its step's on both hosts", a.Latency.Count)
	}
	if p := r.FindPhase("randread"); p == nil || len(p.Hosts) != 2 {
		t.Errorf("the answer's phase not merged from 2 hosts: %+v", p)
	}
}

// objbench's curve on two hosts against MinIO: the step's rate is split
// across them too.
func TestObjbenchCurveOnHosts(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	a, b, ca := tlsAgents(t, t.TempDir())
	r := resultOf(t, coordinator(t, context.Background(), "objbench", "--storage", "minio", m.URL("hosts-curve"),
		"--access-key", m.AccessKey, "--secret-key", m.SecretKey, "--workload", "get", "--objects", "20", "--obj-size", "4K",
		"--duration", "1s", "-p", "2", "--curve=50", "--hosts", hostsFlag(a, b), "--tls-ca", ca, "-o", "json"))
	if r.Capacity == nil || len(r.Capacity.Steps) != 2 || len(r.Hosts) != 2 {
		t.Fatalf("no curve of 2 steps on 2 hosts: %d hosts, %+v", len(r.Hosts), r.Capacity)
	}
	checkStepSplit(t, r.Capacity.Steps[1])
	if p := r.FindPhase("get.50pct"); p == nil || len(p.Hosts) != 2 {
		t.Errorf("phase get.50pct not merged from 2 hosts: %+v", p)
	}
}

// An objective no rate meets, on two hosts, as on one: the run does not
// fail (exit 0), the answer is none, stated with the lowest rate tried,
// and no step held; a capacity --expect bound above what the hosts carry
// under a loose objective fails the run with exit code 3.
func TestSLOUnmetOnHosts(t *testing.T) {
	root := testenv.Tmpfs(t, "64m")
	a, b := startAgent(t, root), startAgent(t, root)
	args := []string{"bench", root, "--rw", "randread", "--file-size", "256K", "--xfer-size", "4K", "-p", "2", "--duration", "200ms",
		"--hosts", hostsFlag(a, b)}
	file := filepath.Join(t.TempDir(), "result.json")
	out := coordinator(t, context.Background(), append(args, "--slo", "p90<1ns", "--result-file", file)...)
	if out.Code != 0 || !strings.Contains(out.Stdout, "max rate under the objective p90<1ns: none; it did not hold down to ") {
		t.Fatalf("p90<1ns: exit %d\n%s\n%s", out.Code, out.Stdout, out.Stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	r, err := report.ReadJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	c := r.Capacity
	if c == nil || c.Answer == nil || c.Answer.OpsPerSec != 0 || len(r.Hosts) != 2 || len(c.Steps) < 2 {
		t.Fatalf("capacity %+v on %d hosts", c, len(r.Hosts))
	}
	for _, st := range c.Steps[1:] {
		if st.Holds == nil || *st.Holds || st.Reason == "" {
			t.Errorf("step at %.0f ops/s: holds %v (%s), want a reason it did not", st.Rate, st.Holds, st.Reason)
		}
	}
	out = coordinator(t, context.Background(), append(args, "--slo", "p99<1s", "--expect", "capacity>=1000000000ops/s")...)
	if out.Code != 3 || !strings.Contains(out.Stderr, "expectations failed: capacity>=1000000000ops/s") {
		t.Errorf("capacity above what the hosts carry: exit %d, want 3\n%s", out.Code, out.Stderr)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}
