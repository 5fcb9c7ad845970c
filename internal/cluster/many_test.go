package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
)

// simRunner's jobs run simPhases, each between its start barrier and its
// end barrier, as bench's do, then the finish barrier. A phase records
// simOps(host) operations of simLatency(host, i) each, without touching
// any storage: agents that cost next to nothing, so that thousands of
// them speak the real protocol over real sockets to one coordinator.
type simRunner struct{}

var simPhases = []string{"layout", "stat", "read"}

func simOps(host int) int64 { return int64(3 + host%5) }

func simLatency(host, i int) time.Duration {
	return time.Duration(10+(host*7+i*13)%500) * time.Microsecond
}

func (simRunner) Prepare(job *Job, _ map[string]string, _ func(string) error) (Prepared, error) {
	return simJob{job.Index}, nil
}

type simJob struct{ host int }

func (simJob) Target() string  { return "" }
func (simJob) Paths() []string { return nil }

func (j simJob) Run(ctx context.Context, gate Gate) (*report.Result, error) {
	res := &report.Result{Parameters: report.Params{{Key: "threads", Value: 1}}}
	for _, name := range simPhases {
		if err := gate(ctx, name); err != nil {
			return res, err
		}
		p, err := simPhase(name, j.host)
		if err != nil {
			return res, err
		}
		res.Phases = append(res.Phases, p)
		if err := gate(ctx, EndOf(name)); err != nil {
			return res, err
		}
	}
	return res, gate(ctx, FinishPhase)
}

// simPhase is host's measurement of a phase, and simHist its histogram.
func simPhase(name string, host int) (report.PhaseResult, error) {
	n := simOps(host)
	p := report.PhaseResult{Name: name, Title: name, Ops: n, Items: n, Seconds: 0.01,
		Value: report.Measure{Unit: report.UnitOpsPerSec}, Cost: report.Measure{Unit: report.UnitMsPerOp}}
	p.SetRates()
	return p, report.SetLatency(&p, simHist(host))
}

func simHist(host int) *metrics.Histogram {
	h := metrics.NewHistogram()
	for i := range int(simOps(host)) {
		h.Record(simLatency(host, i))
	}
	return h
}

// runPool runs a job of simPhases on n simulated agents served in this
// process, with the client the command line uses, and checks that every
// phase's merged counts and histogram are exactly the sum of the hosts'.
func runPool(t *testing.T, n int) {
	t.Helper()
	pool, err := ServePool(AgentOptions{Token: "tok", Roots: []string{t.TempDir()}, Runner: simRunner{}, Version: "test",
		OrphanAfter: 2 * time.Minute}, "127.0.0.1:0", n, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	coordinate(t, pool.Addrs, "agents and coordinator together")
}

// coordinate runs the job of simPhases on the simulated agents at addrs,
// and checks it as runPool says; whose figures the process's are is said
// by whose.
func coordinate(t *testing.T, addrs []string, whose string) {
	t.Helper()
	n := len(addrs)
	runtime.GC()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	peak, stopFDs := watchFDs()
	t0 := time.Now()
	var logged []string
	c := &Coordinator{Hosts: addrs, Token: "tok", Client: &http.Client{Transport: NewTransport(), Timeout: 30 * time.Second},
		Scheme: "http", Version: "test", LostAfter: 2 * time.Minute,
		Logf: func(f string, a ...any) {
			logged = append(logged, fmt.Sprintf("%.2fs ", time.Since(t0).Seconds())+fmt.Sprintf(f, a...))
		}}
	// A guard, not a measure: a run that hangs fails here instead of
	// holding the suite until its own timeout.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	parts, err := c.Run(ctx, Job{Command: "bench", RunName: "fsbench-hosts-pool", Seed: 1})
	if err != nil {
		t.Fatalf("%d hosts: %v (log: %q)", n, err, logged)
	}
	res := &report.Result{}
	if err := Merge(res, parts); err != nil {
		t.Fatal(err)
	}
	wall := time.Since(t0)
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
	cpu := time.Duration(ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano())
	stopFDs()
	if testing.Verbose() {
		t.Logf("the coordinator's log, seconds from the start: %q", logged)
	}
	t.Logf("%d agents, %d phases: wall %v, CPU %v, peak RSS %d MiB, open files at most %d (%s)", n, len(simPhases),
		wall.Round(time.Millisecond), cpu.Round(time.Millisecond), ru1.Maxrss>>10, peak(), whose)
	if got := phaseList(res); !slices.Equal(got, simPhases) {
		t.Fatalf("phases %q, want %q", got, simPhases)
	}
	var ops int64
	want := metrics.NewHistogram()
	for i := range n {
		ops += simOps(i)
		want.Merge(simHist(i))
	}
	for _, p := range res.Phases {
		if len(p.Hosts) != n || p.Ops != ops || p.Errors != 0 {
			t.Fatalf("%s: %d hosts, %d ops, %d errors; want %d hosts, %d ops", p.Name, len(p.Hosts), p.Ops, p.Errors, n, ops)
		}
		got, err := metrics.Decode(p.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got.Distribution(), want.Distribution()) || got.Count() != ops {
			t.Fatalf("%s: merged histogram of %d operations is not the sum of the hosts' (%d)", p.Name, got.Count(), ops)
		}
	}
}

// watchFDs counts this process's open files (/proc/self/fd) every 100 ms
// until stop is called; peak is the most it counted then.
func watchFDs() (peak func() int, stop func()) {
	var most atomic.Int64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if n := int64(openFiles()); n > most.Load() {
				most.Store(n)
			}
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	return func() int { return int(most.Load()) }, func() { close(done); <-stopped }
}

func phaseList(res *report.Result) []string {
	var names []string
	for _, p := range res.Phases {
		names = append(names, p.Name)
	}
	return names
}

// TestFiveHundredAgents: every barrier of a run on 500 agents is
// released, however they answer; the run was seen to stall at 400.
func TestFiveHundredAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("500 agents: not in -short")
	}
	runPool(t, 500)
}

// TestThousandsOfAgents runs three phases on 2,000 simulated agents (in
// this process, over real sockets; FSBENCH_POOL_AGENTS sets another
// number, such as 10000) and checks that every merged histogram is
// exactly the sum of the hosts'. The agents are served by processes of
// their own when they do not fit in this one's open files (5 an agent),
// or when FSBENCH_POOL_PROCS says how many: then this process is the
// coordinator alone (1 or 2 open files an agent, as its limit has room:
// fitFiles), and its figures its own.
func TestThousandsOfAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of agents: not in -short")
	}
	n, procs := envCount(t, "FSBENCH_POOL_AGENTS", 2000), envCount(t, "FSBENCH_POOL_PROCS", 0)
	// Each agent a listener and two connections, each seen from both ends.
	if need := 5*n + 512; procs == 0 && sysio.RaiseOpenFileLimit(need) >= need || sysio.OpenFileLimit() == 0 {
		runPool(t, n)
		return
	}
	if need := n + requestFiles + 512; sysio.RaiseOpenFileLimit(need) < need {
		t.Skipf("%d agents need %d open files in the coordinator's process; it may open %d (ulimit -n)", n, need, sysio.OpenFileLimit())
	}
	procs = max(procs, (3*n+512)/sysio.OpenFileLimit()+1)
	var addrs []string
	for i := range procs {
		addrs = append(addrs, servePoolProcess(t, n/procs+boolInt(i < n%procs))...)
	}
	coordinate(t, addrs, fmt.Sprintf("the coordinator alone; the agents in %d processes", procs))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// envCount is the number in the variable name, or def when it is unset.
func envCount(t *testing.T, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q: want a number", name, v)
	}
	return n
}

// servePoolProcess starts this test binary as a process that serves n
// simulated agents (TestPoolProcess), and returns their addresses once
// they serve; the process ends with the test.
func servePoolProcess(t *testing.T, n int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestPoolProcess$")
	cmd.Env = append(os.Environ(), "FSBENCH_POOL_SERVE="+strconv.Itoa(n))
	cmd.Stderr = os.Stderr
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		in.Close() // the process closes its agents and ends
		if err := cmd.Wait(); err != nil {
			t.Errorf("the agents' process: %v", err)
		}
	})
	var addrs []string
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "serving" {
		addrs = append(addrs, sc.Text())
	}
	if len(addrs) != n {
		t.Fatalf("the agents' process serves %d agents, want %d", len(addrs), n)
	}
	go func() { _, _ = io.Copy(io.Discard, out) }()
	return addrs
}

// TestPoolProcess is not a test but the process servePoolProcess starts:
// with FSBENCH_POOL_SERVE=N it serves N simulated agents, writes their
// addresses and "serving" to stdout, and ends when stdin closes. Without
// it, it does nothing.
func TestPoolProcess(t *testing.T) {
	v := os.Getenv("FSBENCH_POOL_SERVE")
	if v == "" {
		return
	}
	n := envCount(t, "FSBENCH_POOL_SERVE", 1)
	if need := 3*n + 512; sysio.RaiseOpenFileLimit(need) < need {
		t.Fatalf("%d agents need %d open files; this process may open %d", n, need, sysio.OpenFileLimit())
	}
	pool, err := ServePool(AgentOptions{Token: "tok", Roots: []string{t.TempDir()}, Runner: simRunner{}, Version: "test",
		OrphanAfter: 2 * time.Minute}, "127.0.0.1:0", n, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	fmt.Println(strings.Join(pool.Addrs, "\n"))
	fmt.Println("serving")
	_, _ = io.Copy(io.Discard, os.Stdin)
}
