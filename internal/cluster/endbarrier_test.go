package cluster

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
)

// endRunner's jobs pass a phase's start, then its end (EndOf), then the
// finish. Host 0 reaches the end at once; host 1 only after host 0 is
// waiting there, and then looks whether host 0 went on without it.
type endRunner struct {
	reached chan struct{} // closed by host 0 as it calls the end barrier
	passed  chan struct{} // closed by host 0 when that barrier returns
	early   chan bool     // host 1: whether host 0 had passed before it ended
}

func (r *endRunner) Prepare(job *Job, _ map[string]string, _ func(string) error) (Prepared, error) {
	return &endPrepared{r, job.Index}, nil
}

type endPrepared struct {
	r     *endRunner
	index int
}

func (p *endPrepared) Target() string  { return "" }
func (p *endPrepared) Paths() []string { return nil }
func (p *endPrepared) Run(ctx context.Context, gate Gate) (*report.Result, error) {
	if err := gate(ctx, "p"); err != nil {
		return nil, err
	}
	if p.index == 0 {
		close(p.r.reached)
		if err := gate(ctx, EndOf("p")); err != nil {
			return nil, err
		}
		close(p.r.passed)
	} else {
		<-p.r.reached
		// Host 0 waits for this host: it cannot pass however long this
		// host takes to end the phase. (A wrong release shows here
		// unless it came later than this look.)
		select {
		case <-p.r.passed:
			p.r.early <- true
		case <-time.After(200 * time.Millisecond):
			p.r.early <- false
		}
		if err := gate(ctx, EndOf("p")); err != nil {
			return nil, err
		}
	}
	if err := gate(ctx, FinishPhase); err != nil {
		return nil, err
	}
	return &report.Result{Phases: []report.PhaseResult{{Name: "p", Ops: 1}}}, nil
}

// TestEndBarrier: no host goes past a phase's end before every host has
// ended it; the end is not logged as a phase's start nor counted as one.
func TestEndBarrier(t *testing.T) {
	r := &endRunner{reached: make(chan struct{}), passed: make(chan struct{}), early: make(chan bool, 1)}
	var hosts []string
	for range 2 {
		a, err := NewAgent(AgentOptions{Token: "tok", Roots: []string{t.TempDir()}, Runner: r, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(a)
		t.Cleanup(func() { a.Close(); srv.Close() })
		hosts = append(hosts, strings.TrimPrefix(srv.URL, "http://"))
	}
	var mu sync.Mutex
	var logs []string
	c := &Coordinator{Hosts: hosts, Token: "tok", Scheme: "http", Client: &http.Client{Timeout: 30 * time.Second}, Version: "test",
		Logf: func(format string, args ...any) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf(format, args...))
			mu.Unlock()
		}}
	res, err := c.Run(context.Background(), Job{Command: "bench", RunName: "r"})
	if err != nil {
		t.Fatal(err)
	}
	if <-r.early {
		t.Error("host 0 passed the end of the phase while host 1 was still in it")
	}
	for _, h := range res {
		if _, ok := h.Starts["p"]; !ok || len(h.Starts) != 2 {
			t.Errorf("host %s: starts %v, want p's and the finish's", h.Address, h.Starts)
		}
	}
	all := strings.Join(logs, "\n")
	if !strings.Contains(all, "p: starting on 2 hosts") || strings.Contains(all, "end of") {
		t.Errorf("log:\n%s", all)
	}
}
