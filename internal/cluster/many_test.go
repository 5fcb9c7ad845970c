package cluster

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
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
	runtime.GC()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	t0 := time.Now()
	var logged []string
	c := &Coordinator{Hosts: pool.Addrs, Token: "tok", Client: &http.Client{Transport: NewTransport(), Timeout: 30 * time.Second},
		Scheme: "http", Version: "test", LostAfter: 2 * time.Minute,
		Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
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
	// Agents and coordinator share this process: the figures are their sum.
	t.Logf("%d agents, %d phases: wall %v, CPU %v, peak RSS %d MiB (agents and coordinator together)", n, len(simPhases),
		wall.Round(time.Millisecond), cpu.Round(time.Millisecond), ru1.Maxrss>>10)
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
// exactly the sum of the hosts'.
func TestThousandsOfAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("thousands of agents: not in -short")
	}
	n := 2000
	if v := os.Getenv("FSBENCH_POOL_AGENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 1 {
			t.Fatalf("FSBENCH_POOL_AGENTS=%q: want a number of agents", v)
		}
	}
	// Each agent a listener and two connections, each seen from both ends.
	if need := 5*n + 512; sysio.RaiseOpenFileLimit(need) < need && sysio.OpenFileLimit() != 0 {
		t.Skipf("%d agents need %d open files; this process may open %d (ulimit -n)", n, need, sysio.OpenFileLimit())
	}
	runPool(t, n)
}
