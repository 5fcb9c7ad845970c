package cli

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestBenchMetricsScrapedByPrometheus runs a bench with --metrics-listen,
// has a real Prometheus server scrape it, and asks Prometheus for the rate
// of the phase's operations and bytes while it runs.
func TestBenchMetricsScrapedByPrometheus(t *testing.T) {
	testenv.NeedsServer(t, "a Prometheus server")
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	bench := testenv.StartProcess(t, exec.Command(testenv.Binary(t), "bench", dir, "--rw", "write", "--file-size", "1M",
		"--xfer-size", "64K", "--rate", "200", "--duration", "10m", "-p", "2", "--metrics-listen", addr))
	bench.Await("the metrics endpoint", time.Minute, func() bool {
		return strings.Contains(testenv.Scrape("http://"+addr+"/metrics"), `fsbench_phase_running{host=`)
	})
	prom := testenv.StartPrometheus(t, addr)
	// The open loop runs at 200 operations a second: once the 10 s window
	// lies within the run, Prometheus's rate says so.
	bench.Await("a rate of about 200/s from Prometheus", 2*time.Minute, func() bool {
		r := prom.Query(t, `sum by (phase) (rate(fsbench_operations_total{job="fsbench"}[10s]))`, "phase")["write"]
		return r > 150 && r < 250
	})
	bytes := prom.Query(t, `sum by (phase) (rate(fsbench_bytes_total[10s]))`, "phase")
	if b := bytes["write"]; b < 50*64<<10 || b > 400*64<<10 {
		t.Errorf("rate of bytes written %.0f/s, want about %d/s", b, 200*64<<10)
	}
	p99 := prom.Query(t, `histogram_quantile(0.99, sum by (le) (rate(fsbench_operation_duration_seconds_bucket{phase="write"}[10s])))`, "")
	if v, ok := p99[""]; !ok || !(v > 0 && v < 60) {
		t.Errorf("p99 latency from the histogram: %v", p99)
	}
	bench.Signal(syscall.SIGINT)
	if code, _ := bench.Wait(time.Minute); code != 130 {
		t.Errorf("exit %d after Ctrl-C, want 130; stderr:\n%s", code, bench.Stderr())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestMetricsListenBusyAddress fails before any work when the address is
// taken, with one line naming the flag.
func TestMetricsListenBusyAddress(t *testing.T) {
	testenv.NeedsServer(t, "the fsbench binary")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	dir := t.TempDir()
	cmd := exec.Command(testenv.Binary(t), "bench", dir, "--quick", "--metrics-listen", ln.Addr().String())
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Fatalf("exit %v with a busy --metrics-listen; output:\n%s", err, out)
	}
	if !strings.Contains(string(out), "--metrics-listen "+ln.Addr().String()) || strings.Count(strings.TrimSpace(string(out)), "\n") > 0 {
		t.Errorf("want one line naming the flag, got:\n%s", out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("a refused run created %v", ents)
	}
}

// TestMetricsListenOnEveryCommand runs each benchmarking command with
// --metrics-listen and reads its page while it runs: every one serves its
// phases' counters, and ends as it would without the flag.
func TestMetricsListenOnEveryCommand(t *testing.T) {
	testenv.NeedsServer(t, "the fsbench binary")
	for _, c := range []struct {
		name string
		args func(dir string) []string
	}{
		{"objbench", func(dir string) []string { return []string{"objbench", "--storage", "file", dir, "--quick", "-p", "2"} }},
		{"checkpoint", func(dir string) []string { return []string{"checkpoint", dir, "--quick"} }},
		{"train", func(dir string) []string { return []string{"train", dir, "--quick"} }},
		{"replay", func(dir string) []string { return []string{"replay", juiceFSSample, dir} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
			p := testenv.StartProcess(t, exec.Command(testenv.Binary(t), append(c.args(dir), "--metrics-listen", addr)...))
			seen := false
			for !p.Exited() && !seen {
				seen = strings.Contains(testenv.Scrape("http://"+addr+"/metrics"), "fsbench_operations_total{host=")
				time.Sleep(2 * time.Millisecond)
			}
			if code, _ := p.Wait(5 * time.Minute); code != 0 {
				t.Fatalf("exit %d:\n%s", code, p.Stderr())
			}
			if !seen {
				t.Errorf("no phase counters on the page while it ran; stderr:\n%s", p.Stderr())
			}
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("left behind: %v", ents)
			}
		})
	}
}
