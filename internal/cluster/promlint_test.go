package cluster_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
)

// Every endpoint fsbench serves or pushes passes Prometheus's own linter,
// `promtool check metrics`, without a warning: a run's, an agent's, a
// coordinator's, a probe's, and what a probe pushes to a pushgateway.

// promtoolClean fails the test unless promtool finds nothing to say of
// page, which must hold fsbench's metrics.
func promtoolClean(t *testing.T, what, page string) {
	t.Helper()
	testenv.NeedsServer(t, "promtool")
	promtool, err := testenv.LookPath("promtool")
	if err != nil {
		testenv.Unavailable(t, "promtool: %v", err)
	}
	if !strings.Contains(page, "fsbench_") {
		t.Fatalf("%s: no fsbench metrics on the page:\n%s", what, page)
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(page)
	if out, err := cmd.CombinedOutput(); err != nil || len(strings.TrimSpace(string(out))) != 0 {
		t.Errorf("%s: promtool check metrics: %v\n%s", what, err, out)
	}
}

// TestPromtoolFindsTheProbesOldQuantileLabel keeps promtoolClean honest:
// the page the probe served before (a gauge with a quantile label) fails.
func TestPromtoolFindsTheProbesOldQuantileLabel(t *testing.T) {
	testenv.NeedsServer(t, "promtool")
	promtool, err := testenv.LookPath("promtool")
	if err != nil {
		testenv.Unavailable(t, "promtool: %v", err)
	}
	old := "# HELP fsbench_probe_phase_latency_seconds Latency percentiles of each phase of the last round.\n" +
		"# TYPE fsbench_probe_phase_latency_seconds gauge\n" +
		"fsbench_probe_phase_latency_seconds{phase=\"write\",quantile=\"0.99\"} 0.01\n"
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(old)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "quantile") {
		t.Errorf("promtool accepted a gauge with a quantile label: %v\n%s", err, out)
	}
}

// metricsAddr is a free loopback address for --metrics-listen.
func metricsAddr(t *testing.T) string {
	return fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
}

// awaitPage waits until the page at addr holds want, while p runs, and
// returns it.
func awaitPage(t *testing.T, p *testenv.Process, addr string, wants ...string) string {
	t.Helper()
	var page string
	p.Await("metrics with "+strings.Join(wants, ", "), 2*time.Minute, func() bool {
		page = testenv.Scrape("http://" + addr + "/metrics")
		for _, w := range wants {
			if !strings.Contains(page, w) {
				return false
			}
		}
		return true
	})
	return page
}

func TestPromtoolRunEndpoint(t *testing.T) {
	testenv.NeedsServer(t, "the fsbench binary")
	dir := t.TempDir()
	addr := metricsAddr(t)
	run := testenv.StartProcess(t, exec.Command(testenv.Binary(t), "objbench", "--storage", "file", filepath.Join(dir, "bucket"),
		"--workload", "mixed", "--duration", "10m", "-p", "2", "--metrics-listen", addr))
	page := awaitPage(t, run, addr, `op="mixed-get"`, `op="mixed-put"`, `direction="read"`)
	promtoolClean(t, "a run", page)
	run.Signal(syscall.SIGINT)
	run.Wait(time.Minute)
}

// twoHosts is a coordinator running objbench's mix on two agents on
// loopback, each agent and the coordinator serving metrics.
type twoHosts struct {
	agents     [2]*agent
	agentPages [2]string // the agents' metrics addresses
	coordPage  string    // the coordinator's
	coord      *testenv.Process
}

// startTwoHosts starts the agents (named client-1 and client-2) and the
// coordinator, and returns once the coordinator's page shows both hosts'
// operations of the mix.
func startTwoHosts(t *testing.T) *twoHosts {
	t.Helper()
	testenv.NeedsServer(t, "fsbench agents")
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, "bucket"), 0o755); err != nil {
		t.Fatal(err)
	}
	th := &twoHosts{coordPage: metricsAddr(t)}
	for i := range th.agents {
		th.agentPages[i] = metricsAddr(t)
		th.agents[i] = startAgent(t, root, "--name", fmt.Sprintf("client-%d", i+1), "--metrics-listen", th.agentPages[i])
	}
	cmd := exec.Command(testenv.Binary(t), "objbench", "--storage", "file", filepath.Join(root, "bucket"), "--workload", "mixed",
		"--duration", "10m", "-p", "2", "--hosts", hostsFlag(th.agents[0], th.agents[1]), "--metrics-listen", th.coordPage)
	cmd.Env = append(os.Environ(), "FSBENCH_TOKEN="+testToken)
	th.coord = testenv.StartProcess(t, cmd)
	awaitPage(t, th.coord, th.coordPage, `host="client-1",op="mixed-get"`, `host="client-2",op="mixed-get"`)
	t.Cleanup(func() {
		th.coord.Signal(syscall.SIGINT)
		th.coord.Wait(time.Minute)
	})
	return th
}

func TestPromtoolAgentEndpoint(t *testing.T) {
	th := startTwoHosts(t)
	page := awaitPage(t, th.coord, th.agentPages[0], `host="client-1",op="mixed-put"`)
	promtoolClean(t, "an agent", page)
}

func TestPromtoolCoordinatorEndpoint(t *testing.T) {
	th := startTwoHosts(t)
	page := awaitPage(t, th.coord, th.coordPage, `fsbench_host_info{address="`+th.agents[1].addr+`",host="client-2"} 1`)
	promtoolClean(t, "a coordinator", page)
}

// startProbe starts a probe of a small bench, with extra flags of its own.
func startProbe(t *testing.T, extra ...string) *testenv.Process {
	t.Helper()
	testenv.NeedsServer(t, "the fsbench binary")
	args := append([]string{"probe", "--interval", "1s", "--expect", "write.p50<60s"}, extra...)
	args = append(args, "bench", t.TempDir(), "--rw", "write", "--file-size", "256K", "--xfer-size", "64K",
		"--rate", "100", "--duration", "1s", "-p", "2")
	p := testenv.StartProcess(t, exec.Command(testenv.Binary(t), args...))
	t.Cleanup(func() {
		p.Signal(syscall.SIGINT)
		p.Wait(time.Minute)
	})
	return p
}

func TestPromtoolProbeEndpoint(t *testing.T) {
	addr := metricsAddr(t)
	probe := startProbe(t, "--metrics-listen", addr)
	page := awaitPage(t, probe, addr, `fsbench_probe_phase_latency_seconds{host=`, `percentile="p99"`, `fsbench_probe_expectation_pass{`)
	promtoolClean(t, "a probe", page)
}

func TestPromtoolPushgatewayEndpoint(t *testing.T) {
	gw := testenv.StartPushgateway(t)
	probe := startProbe(t, "--push", gw.URL)
	var page string
	probe.Await("a round pushed", 2*time.Minute, func() bool {
		page = gw.Metrics(t)
		return strings.Contains(page, "fsbench_probe_phase_latency_seconds{")
	})
	promtoolClean(t, "the pushgateway", page)
}

// TestTwoHostsAndProbeScrapedByPrometheus has a real Prometheus scrape a
// probe and the agents of a two-host run, as the PodMonitors of
// deploy/k8s do (every pod's metrics port at /metrics), and asks it in
// PromQL for the rate of operations by op and the p99 latency by host.
func TestTwoHostsAndProbeScrapedByPrometheus(t *testing.T) {
	th := startTwoHosts(t)
	probeAddr := metricsAddr(t)
	probe := startProbe(t, "--metrics-listen", probeAddr, "--name", "node-1")
	awaitPage(t, probe, probeAddr, "fsbench_probe_rounds_total{")
	prom := testenv.StartPrometheus(t, probeAddr, th.agentPages[0], th.agentPages[1])
	var ops, p99 map[string]float64
	th.coord.Await("a rate of every operation of the mix and a p99 of each host", 2*time.Minute, func() bool {
		ops = prom.Query(t, `sum by (op) (rate(fsbench_operations_total{phase="mixed"}[10s]))`, "op")
		p99 = prom.Query(t, `histogram_quantile(0.99, sum by (le, host) (rate(fsbench_operation_duration_seconds_bucket{phase="mixed"}[10s])))`, "host")
		return ops["mixed-get"] > 0 && ops["mixed-put"] > 0 && ops["mixed-stat"] > 0 && ops["mixed-delete"] > 0 &&
			p99["client-1"] > 0 && p99["client-2"] > 0
	})
	if len(ops) != 4 {
		t.Errorf("rates by op: %v, want the mix's four", ops)
	}
	// The default mix: gets are 45%, deletes 10% of the operations.
	if ops["mixed-get"] < ops["mixed-delete"] {
		t.Errorf("more deletes than gets: %v", ops)
	}
	for _, h := range []string{"client-1", "client-2"} {
		if v := p99[h]; !(v > 0 && v < 60) {
			t.Errorf("p99 of %s: %v (all: %v)", h, v, p99)
		}
	}
	bytes := prom.Query(t, `sum by (direction) (rate(fsbench_bytes_total{op=~"mixed-get|mixed-put"}[10s]))`, "direction")
	if bytes["read"] <= 0 || bytes["write"] <= 0 {
		t.Errorf("bytes by direction: %v", bytes)
	}
	probe.Await("the probe's rounds by host", 2*time.Minute, func() bool {
		return prom.Query(t, `sum by (host) (fsbench_probe_rounds_total{result="pass"}) > 0`, "host")["node-1"] > 0
	})
	hosts := prom.Query(t, `count by (host) (fsbench_operations_total)`, "host")
	if len(hosts) != 3 || hosts["client-1"] == 0 || hosts["client-2"] == 0 || hosts["node-1"] == 0 {
		t.Errorf("hosts of the run metrics: %v, want client-1, client-2 and node-1 (the probe's --name)", hosts)
	}
}
