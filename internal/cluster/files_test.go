package cluster

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// filesHosts is how many agents TestOpenFileLimit's coordinator drives.
const filesHosts = 600

// A coordinator whose open-file limit has no room for one connection a
// host fails at once with one line that names the limit and what the
// hosts need; one whose limit has room for one a host but not two runs
// every phase, its histograms exact. Each coordinator is a process of
// its own, its limit lowered (soft and hard) below what it would raise it
// to; the agents are real ones served by this process.
func TestOpenFileLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("600 agents: not in -short")
	}
	pool, err := ServePool(AgentOptions{Token: "tok", Roots: []string{t.TempDir()}, Runner: simRunner{}, Version: "test",
		OrphanAfter: 2 * time.Minute}, "127.0.0.1:0", filesHosts, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	hostsFile := filepath.Join(t.TempDir(), "hosts")
	if err := os.WriteFile(hostsFile, []byte(strings.Join(pool.Addrs, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	// Too few: not even the event streams fit.
	out, err := limitedCoordinator(hostsFile, filesHosts)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := "coordinator: 600 hosts need "
	if err == nil || len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "it may open 600 (ulimit -n)") {
		t.Fatalf("limit 600: exit %v, output %q; want one line %q... naming the limit", err, out, want)
	}
	// Room for the event streams and the requests, not for a kept
	// connection a host as well: requests close their connections.
	limit := filesHosts + requestFiles + 60
	out, err = limitedCoordinator(hostsFile, limit)
	if err != nil || !strings.Contains(out, "600 agents, 3 phases") {
		t.Fatalf("limit %d: exit %v, output %q; want the run complete", limit, err, out)
	}
	t.Logf("limit 600: %s", lines[0])
	t.Logf("limit %d: %s", limit, strings.TrimSpace(out))
}

// limitedCoordinator runs TestLimitedCoordinator in a process of its own
// whose open-file limit is limit, on the agents named in hostsFile, and
// returns what it wrote.
func limitedCoordinator(hostsFile string, limit int) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLimitedCoordinator$", "-test.v")
	cmd.Env = append(os.Environ(), "FSBENCH_FILES_HOSTS="+hostsFile, "FSBENCH_FILES_LIMIT="+strconv.Itoa(limit))
	b, err := cmd.CombinedOutput()
	var kept []string
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, "coordinator: "); i >= 0 {
			kept = append(kept, l[i:])
		} else if strings.Contains(l, "agents, 3 phases") {
			kept = append(kept, strings.TrimSpace(l))
		}
	}
	if err != nil && len(kept) == 0 {
		kept = append(kept, string(b))
	}
	return strings.Join(kept, "\n"), err
}

// TestLimitedCoordinator is not a test but the process limitedCoordinator
// starts: with FSBENCH_FILES_LIMIT it lowers its open-file limit to that,
// then coordinates the agents in FSBENCH_FILES_HOSTS, as coordinate does,
// or writes the error that keeps it from starting ("coordinator: ...").
// Without them, it does nothing.
func TestLimitedCoordinator(t *testing.T) {
	limit, file := os.Getenv("FSBENCH_FILES_LIMIT"), os.Getenv("FSBENCH_FILES_HOSTS")
	if limit == "" || file == "" {
		return
	}
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	addrs := strings.Split(string(b), "\n")
	n := uint64(envCount(t, "FSBENCH_FILES_LIMIT", 1))
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		t.Fatal(err)
	}
	c := &Coordinator{Hosts: addrs, Token: "tok", Client: &http.Client{Transport: NewTransport(), Timeout: 30 * time.Second},
		Scheme: "http", Version: "test", LostAfter: 2 * time.Minute}
	if err := c.fitFiles(len(addrs)); err != nil {
		// What Run returns, before it asks any host anything.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, err := c.Run(ctx, Job{Command: "bench", RunName: "fsbench-hosts-files", Seed: 1})
		t.Fatalf("coordinator: %v", err)
	}
	if !c.closeConns {
		t.Fatalf("limit %d: the coordinator keeps a connection a host for %d hosts", n, len(addrs))
	}
	coordinate(t, addrs, "a connection a request")
}
