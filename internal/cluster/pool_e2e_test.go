package cluster_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
)

// startPool starts `fsbench agent --instances n` on n consecutive
// loopback ports, serving root, and returns the process and the agents'
// addresses once it serves.
func startPool(t *testing.T, root string, n int) (*agent, []string) {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for try := 0; ; try++ {
		first := freePort(t)
		cmd := exec.Command(testenv.Binary(t), "agent", "--instances", fmt.Sprint(n), "--listen", fmt.Sprintf("127.0.0.1:%d", first),
			"--token-file", tok, "--allow-root", root)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
		a, err := servePool(t, cmd)
		if err != nil {
			if try < 20 && strings.Contains(err.Error(), "address already in use") {
				continue // another test took a port of the range
			}
			t.Fatal(err)
		}
		var addrs []string
		for i := range n {
			addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", first+i))
		}
		return a, addrs
	}
}

// freePort is the first of a range of ports to try: below the range the
// system gives to connections (ip_local_port_range), where only another
// listener takes a port, chosen at random among other tests' ranges.
func freePort(t *testing.T) int {
	t.Helper()
	low := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		_, _ = fmt.Sscan(string(b), &low)
	}
	if low < 12000 {
		t.Skipf("the system gives ports from %d to connections: no room below for a range of listeners", low)
	}
	return 10000 + rand.IntN(low-10000-1000)
}

var poolServing = regexp.MustCompile(`serving \d+ agents: `)

// servePool starts the pool cmd and waits until it serves, or ends.
func servePool(t *testing.T, cmd *exec.Cmd) (*agent, error) {
	t.Helper()
	log := &syncWriter{}
	cmd.Stderr = log
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	for {
		select {
		case err := <-ended:
			return nil, fmt.Errorf("the pool ended (%v): %s", err, log.String())
		case <-time.After(50 * time.Millisecond):
		}
		if poolServing.MatchString(log.String()) {
			t.Cleanup(func() {
				_ = cmd.Process.Signal(syscall.SIGCONT)
				_ = cmd.Process.Kill()
				<-ended
			})
			return &agent{cmd: cmd}, nil
		}
	}
}

// TestPoolKilledMidPhase: the hosts of a crowded machine (40 agents in
// one process) may be silent longer than alone, but when their process
// dies (kill -9) mid-phase they are lost at once, by their broken
// connections, not after a silence; the coordinator exits 1.
func TestPoolKilledMidPhase(t *testing.T) {
	root := t.TempDir()
	pool, addrs := startPool(t, root, 40)
	go func() {
		waitFor(t, time.Minute, func() bool { return writing(root, 0) && writing(root, 39) })
		_ = pool.cmd.Process.Kill()
	}()
	out := coordinator(t, context.Background(), "bench", root, "--rw", "write", "--file-size", "1M", "--xfer-size", "64K", "-p", "1",
		"--duration", "60s", "--hosts", strings.Join(addrs, ","))
	if n := lostCount(out.Stderr, ""); out.Code != 1 || n != 40 {
		t.Fatalf("exit %d, %d hosts lost; want 1, and 40 lost:\n%s", out.Code, n, out.Stderr)
	}
	if strings.Contains(out.Stderr, "no answer for") {
		t.Errorf("hosts whose process died were lost for silence, not for their broken connections:\n%s", out.Stderr)
	}
}

// TestPoolStoppedMidPhase: the same 40 agents' process stopped (SIGSTOP)
// mid-phase keeps its connections open and says nothing: every host is
// lost after its silence, LostAfter and the crowd's share, and the
// coordinator exits 1.
func TestPoolStoppedMidPhase(t *testing.T) {
	root := t.TempDir()
	pool, addrs := startPool(t, root, 40)
	go func() {
		waitFor(t, time.Minute, func() bool { return writing(root, 0) && writing(root, 39) })
		_ = pool.cmd.Process.Signal(syscall.SIGSTOP)
	}()
	out := coordinator(t, context.Background(), "bench", root, "--rw", "write", "--file-size", "1M", "--xfer-size", "64K", "-p", "1",
		"--duration", "60s", "--hosts", strings.Join(addrs, ","))
	_ = pool.cmd.Process.Signal(syscall.SIGCONT)
	if n := lostCount(out.Stderr, `no answer for 5(\.\d+)?s`); out.Code != 1 || n != 40 {
		t.Fatalf("exit %d, %d hosts lost for silence; want 1, and 40 hosts lost for a silence of 5s and the crowd's share:\n%s", out.Code, n, out.Stderr)
	}
}

// lostCount is how many hosts the coordinator's stderr says it lost for a
// cause matching the expression cause (any cause if ""): its lines "lost N
// hosts: CAUSE: ..." and "lost host ADDRESS: CAUSE".
func lostCount(stderr, cause string) int {
	if cause == "" {
		cause = ".*"
	}
	n := 0
	for _, m := range regexp.MustCompile(`(?m)^lost (?:(\d+) hosts|host \S+): (?:`+cause+`)`).FindAllStringSubmatch(stderr, -1) {
		k, err := strconv.Atoi(m[1])
		if err != nil {
			k = 1 // one host, named
		}
		n += k
	}
	return n
}

// syncWriter is a buffer written by one goroutine and read by another.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}
