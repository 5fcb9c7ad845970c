package cluster_test

import (
	"bytes"
	"context"
	"net/http"
	"runtime"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/report"
)

// TestFiftyAgents runs one bench on 50 real agent processes on loopback,
// with the coordinator in this process, and reports what coordinating
// them cost: CPU, memory, start skew, result size. The figures go to the
// record (benchmarks/records/many-hosts-scale.md); the test asserts only
// that the run is whole.
func TestFiftyAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("50 agent processes: not in -short")
	}
	const n = 50
	root := t.TempDir()
	var addrs []string
	for range n {
		addrs = append(addrs, startAgent(t, root, "--orphan-after", "2m").addr)
	}
	// 50 agent processes on a loaded 2-core machine: at load 70 one went
	// 5 s (the coordinator's default LostAfter) without answering, and one
	// heard nothing from the coordinator for 10 s (the agents' default
	// --orphan-after). Losing hosts and coordinators is tested elsewhere;
	// here either side is given two minutes of silence.
	c := &cluster.Coordinator{Hosts: addrs, Token: testToken, Client: &http.Client{Timeout: 30 * time.Second}, Scheme: "http", Version: "test",
		LostAfter: 2 * time.Minute}
	job := cluster.Job{Command: "bench", Args: []string{root, "--big-file-size", "1M", "--small-file-count", "10", "--small-file-size", "4K"},
		RunName: "fsbench-hosts-scale", Seed: 1}
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	parts, err := c.Run(context.Background(), job)
	wall := time.Since(t0)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	runtime.ReadMemStats(&m1)
	if err != nil {
		t.Fatal(err)
	}
	res := &report.Result{}
	if err := cluster.Merge(res, parts); err != nil {
		t.Fatal(err)
	}
	var maxSkew float64
	for _, p := range res.Phases {
		if len(p.Hosts) != n || p.Errors != 0 {
			t.Fatalf("%s: %d hosts, %d errors", p.Name, len(p.Hosts), p.Errors)
		}
		maxSkew = max(maxSkew, p.StartSkew)
		t.Logf("%s: start skew %.1f ms", p.Name, p.StartSkew*1000)
	}
	if p := res.FindPhase("write-small"); p == nil || p.Ops != n*10 {
		t.Fatalf("write-small: %+v", p)
	}
	cpu := time.Duration(ru1.Utime.Nano()+ru1.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) * time.Nanosecond
	var js bytes.Buffer
	if err := report.WriteJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	t.Logf("50 agents: wall %v, coordinator CPU %v (%.1f%% of one core), allocated %.1f MiB, heap in use after %.1f MiB, max start skew %.1f ms, result %d KiB",
		wall.Round(time.Millisecond), cpu.Round(time.Millisecond), 100*cpu.Seconds()/wall.Seconds(),
		float64(m1.TotalAlloc-m0.TotalAlloc)/(1<<20), float64(m1.HeapInuse)/(1<<20), maxSkew*1000, js.Len()>>10)
}
