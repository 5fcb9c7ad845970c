package cluster_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/testenv"
)

// agentGauges scrapes an agent's metrics page and returns the values of
// the named series (name with its labels, as on the page).
func agentGauges(t *testing.T, url string, names ...string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	out := map[string]float64{}
	for _, line := range strings.Split(string(page), "\n") {
		for _, n := range names {
			if rest, ok := strings.CutPrefix(line, n+" "); ok {
				v, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
				if err != nil {
					t.Fatalf("%s: %v", line, err)
				}
				out[n] = v
			}
		}
	}
	if len(out) != len(names) {
		t.Fatalf("metrics page lacks some of %v:\n%s", names, page)
	}
	return out
}

// TestAgentThousandJobs has one agent serve 1,000 small jobs in a row and
// reads its own metrics (--metrics-listen): its memory, goroutines and
// open files after the last job are where they were after the first 100,
// and its operation counters hold every job's operations.
func TestAgentThousandJobs(t *testing.T) {
	testenv.NeedsServer(t, "an fsbench agent")
	const jobs, warm = 1000, 100
	root := t.TempDir()
	maddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	a := startAgent(t, root, "--metrics-listen", maddr)
	murl := "http://" + maddr + "/metrics"
	c := &cluster.Coordinator{Hosts: []string{a.addr}, Token: testToken, Client: &http.Client{Timeout: 30 * time.Second}, Scheme: "http", Version: "test"}
	job := cluster.Job{Command: "bench", Args: []string{root, "--rw", "write", "--file-size", "4K", "--xfer-size", "4K", "--ops", "8", "-p", "2"},
		RunName: "fsbench-hosts-long", Seed: 1}
	names := []string{"go_goroutines", "process_open_fds", "process_resident_memory_bytes", "go_memstats_heap_inuse_bytes"}
	var base map[string]float64
	for i := 1; i <= jobs; i++ {
		job.RunName = fmt.Sprintf("fsbench-hosts-long-%d", i)
		if _, err := c.Run(context.Background(), job); err != nil {
			t.Fatalf("job %d: %v\nagent log:\n%s", i, err, a.log)
		}
		if i == warm {
			base = agentGauges(t, murl, names...)
		}
	}
	end := agentGauges(t, murl, names...)
	t.Logf("after %d jobs: %v; after %d: %v", warm, base, jobs, end)
	// Counts may differ by a scrape in progress or an idle connection.
	if end["go_goroutines"] > base["go_goroutines"]+3 {
		t.Errorf("goroutines %v after %d jobs, %v after %d", end["go_goroutines"], jobs, base["go_goroutines"], warm)
	}
	if end["process_open_fds"] > base["process_open_fds"]+3 {
		t.Errorf("open files %v after %d jobs, %v after %d", end["process_open_fds"], jobs, base["process_open_fds"], warm)
	}
	if end["process_resident_memory_bytes"] > 1.25*base["process_resident_memory_bytes"] {
		t.Errorf("resident memory %.1f MiB after %d jobs, %.1f MiB after %d", end["process_resident_memory_bytes"]/(1<<20), jobs,
			base["process_resident_memory_bytes"]/(1<<20), warm)
	}
	if end["go_memstats_heap_inuse_bytes"] > 1.5*base["go_memstats_heap_inuse_bytes"]+(4<<20) {
		t.Errorf("heap in use %.1f MiB after %d jobs, %.1f MiB after %d", end["go_memstats_heap_inuse_bytes"]/(1<<20), jobs,
			base["go_memstats_heap_inuse_bytes"]/(1<<20), warm)
	}
	resp, err := http.Get(murl)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	m := regexp.MustCompile(`(?m)^fsbench_operations_total\{host="[^"]+",op="write",phase="write"\} (\S+)$`).FindSubmatch(page)
	if m == nil || string(m[1]) != strconv.Itoa(jobs*8) {
		t.Errorf("write operations on the agent: %q, want %d", m, jobs*8)
	}
}

// hostOps reads the coordinator's page: the operations of phase by host.
func hostOps(url, phase string) map[string]float64 {
	resp, err := http.Get(url)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	page, _ := io.ReadAll(resp.Body)
	re := regexp.MustCompile(`(?m)^fsbench_operations_total\{host="([^"]+)",op="` + regexp.QuoteMeta(phase) + `",phase="` + regexp.QuoteMeta(phase) + `"\} (\S+)$`)
	out := map[string]float64{}
	for _, m := range re.FindAllStringSubmatch(string(page), -1) {
		v, _ := strconv.ParseFloat(m[2], 64)
		out[m[1]] = v
	}
	return out
}

// TestCoordinatorMetricsPerHost gives a coordinator --metrics-listen: its
// page shows each agent's operations while the phase runs, by the name
// the agent gives (--name), from the counts the agents' heartbeats carry,
// and each name's address.
func TestCoordinatorMetricsPerHost(t *testing.T) {
	testenv.NeedsServer(t, "fsbench agents")
	root := t.TempDir()
	a1, a2 := startAgent(t, root, "--name", "client-1"), startAgent(t, root, "--name", "client-2")
	maddr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	murl := "http://" + maddr + "/metrics"
	done := make(chan testenv.Output, 1)
	go func() {
		done <- coordinator(t, context.Background(), "bench", root, "--rw", "write", "--file-size", "1M", "--xfer-size", "64K",
			"--rate", "100", "--duration", "6s", "-p", "2", "--hosts", hostsFlag(a1, a2), "--metrics-listen", maddr, "-o", "json")
	}()
	var live map[string]float64
	deadline := time.Now().Add(2 * time.Minute)
	for {
		live = hostOps(murl, "write")
		if live["client-1"] > 0 && live["client-2"] > 0 {
			break
		}
		select {
		case out := <-done:
			t.Fatalf("the run ended (exit %d) before its page showed both hosts: %v\n%s", out.Code, live, out.Stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no live counts of both hosts: %v", live)
		}
		time.Sleep(20 * time.Millisecond)
	}
	page := testenv.Scrape(murl)
	for _, want := range []string{`fsbench_host_info{address="` + a1.addr + `",host="client-1"} 1`, `fsbench_host_info{address="` + a2.addr + `",host="client-2"} 1`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	if strings.Contains(page, `host="`+a1.addr) {
		t.Errorf("an agent's address is a host label:\n%s", page)
	}
	res := resultOf(t, <-done)
	p := res.FindPhase("write")
	if p == nil || len(p.Hosts) != 2 {
		t.Fatalf("write phase: %+v", p)
	}
	t.Logf("while running: %v", live)
}
