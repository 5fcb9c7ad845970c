package cluster

import (
	"testing"
	"time"
)

// TestSilences: hosts that crowd one machine may stay silent longer, by
// their number per CPU, and their jobs say so to the agents; a host alone
// on its machine, or whose agent names no machine, keeps LostAfter.
func TestSilences(t *testing.T) {
	var hosts []*host
	for range 1000 {
		hosts = append(hosts, &host{info: Info{Machine: "crowded"}})
		hosts[len(hosts)-1].info.Host.CPUs = 2
	}
	alone := &host{info: Info{Machine: "alone"}}
	alone.info.Host.CPUs = 4
	unnamed := &host{}
	hosts = append(hosts, alone, unnamed)
	c := &Coordinator{LostAfter: 5 * time.Second}
	c.silences(hosts)
	if hosts[0].crowd != 10*time.Second || hosts[999].crowd != 10*time.Second {
		t.Errorf("1,000 hosts on 2 CPUs: %v longer, want 10s (1,000 x 20ms / 2)", hosts[0].crowd)
	}
	if alone.crowd != 0 || unnamed.crowd != 0 {
		t.Errorf("a host alone: %v longer, a host of no machine: %v; want 0", alone.crowd, unnamed.crowd)
	}
	if got := c.jobFor(Job{}, hosts[0], hosts[:1]).Crowd; got != 10*time.Second {
		t.Errorf("the job tells the agent %v, want 10s", got)
	}
	if hosts[0].pingEvery() != 2500*time.Millisecond || alone.pingEvery() != HeartbeatEvery {
		t.Errorf("pinged every %v on the crowded machine, %v alone; want 2.5s and %v", hosts[0].pingEvery(), alone.pingEvery(), HeartbeatEvery)
	}
	if got := c.releaseWithin(); got != 45*time.Second {
		t.Errorf("a release may take %v, want thrice the longest silence (45s)", got)
	}
	for _, tc := range []struct {
		n, cpus int
		want    time.Duration
	}{{1, 1, 0}, {2, 2, 0}, {3, 2, 30 * time.Millisecond}, {100, 0, 2 * time.Second}, {10000, 2, 100 * time.Second}} {
		if got := Crowded(tc.n, tc.cpus); got != tc.want {
			t.Errorf("Crowded(%d, %d) = %v, want %v", tc.n, tc.cpus, got, tc.want)
		}
	}
}

// TestOrphanLimit: an agent waits for its coordinator as long as the
// job's crowd asks beyond its own limit, within maxCrowd, and a job that
// asks nothing (or less than nothing) has the agent's own limit.
func TestOrphanLimit(t *testing.T) {
	a := &Agent{o: AgentOptions{OrphanAfter: 10 * time.Second}}
	for _, tc := range []struct{ crowd, want time.Duration }{
		{0, 10 * time.Second},
		{-time.Hour, 10 * time.Second},
		{5 * time.Second, 15 * time.Second},
		{time.Hour, 10*time.Second + maxCrowd},
	} {
		if got := a.orphanAfter(&agentJob{job: &Job{Crowd: tc.crowd}}); got != tc.want {
			t.Errorf("crowd %v: orphaned after %v, want %v", tc.crowd, got, tc.want)
		}
	}
}
