package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// fakeRunner prepares jobs whose run passes two barriers and returns a
// result of one phase.
type fakeRunner struct{ target string }

func (f *fakeRunner) Prepare(job *Job, _ map[string]string, _ func(string) error) (Prepared, error) {
	if len(job.Args) > 0 && job.Args[0] == "--bad" {
		return nil, errors.New("unknown flag: --bad")
	}
	return &fakePrepared{f.target}, nil
}

type fakePrepared struct{ target string }

func (p *fakePrepared) Target() string  { return p.target }
func (p *fakePrepared) Paths() []string { return nil }
func (p *fakePrepared) Run(ctx context.Context, gate Gate) (*report.Result, error) {
	if err := gate(ctx, "p"); err != nil {
		return nil, err
	}
	if err := gate(ctx, FinishPhase); err != nil {
		return nil, err
	}
	return &report.Result{Phases: []report.PhaseResult{{Name: "p", Ops: 1}}}, nil
}

func newTestAgent(t *testing.T) (*Agent, *httptest.Server) {
	t.Helper()
	a, err := NewAgent(AgentOptions{Token: "tok", Roots: []string{t.TempDir()}, Runner: &fakeRunner{}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(func() { a.Close(); srv.Close() })
	return a, srv
}

func do(t *testing.T, srv *httptest.Server, method, path, token string, body []byte) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestAgentRefusesWithoutToken(t *testing.T) {
	if _, err := NewAgent(AgentOptions{Roots: []string{t.TempDir()}, Runner: &fakeRunner{}}); err == nil {
		t.Fatal("an agent started without a token")
	}
	_, srv := newTestAgent(t)
	for _, tok := range []string{"", "wrong", "tok2", "to"} {
		if r := do(t, srv, "GET", "/v1/info", tok, nil); r.StatusCode != http.StatusUnauthorized {
			t.Errorf("token %q: %s", tok, r.Status)
		}
	}
	if r := do(t, srv, "GET", "/v1/info", "tok", nil); r.StatusCode != http.StatusOK {
		t.Errorf("right token: %s", r.Status)
	}
}

// Malformed, oversized and wrong requests get an error answer; the agent
// goes on serving.
func TestAgentBadRequestsKeepServing(t *testing.T) {
	_, srv := newTestAgent(t)
	good, _ := json.Marshal(Job{Command: "bench", RunName: "r", Hosts: 1})
	for name, c := range map[string]struct {
		body []byte
		code int
	}{
		"not json":        {[]byte("{nope"), http.StatusBadRequest},
		"unknown field":   {[]byte(`{"command":"bench","evil":1}`), http.StatusBadRequest},
		"oversized":       {bytes.Repeat([]byte("x"), maxRequestBytes+10), http.StatusBadRequest},
		"unknown command": {[]byte(`{"command":"rm","run_name":"r","hosts":1}`), http.StatusUnprocessableEntity},
		"run name a path": {[]byte(`{"command":"bench","run_name":"../etc","hosts":1}`), http.StatusUnprocessableEntity},
		"bad flags":       {[]byte(`{"command":"bench","args":["--bad"],"run_name":"r","hosts":1}`), http.StatusUnprocessableEntity},
		"host index":      {[]byte(`{"command":"bench","run_name":"r","index":3,"hosts":2}`), http.StatusUnprocessableEntity},
	} {
		r := do(t, srv, "POST", "/v1/jobs", "tok", c.body)
		var eb ErrorBody
		_ = json.NewDecoder(r.Body).Decode(&eb)
		if r.StatusCode != c.code || eb.Error == "" {
			t.Errorf("%s: %s %q, want %d with a message", name, r.Status, eb.Error, c.code)
		}
	}
	if r := do(t, srv, "POST", "/v1/jobs/nope/go", "tok", []byte(`{}`)); r.StatusCode != http.StatusNotFound {
		t.Errorf("go to no job: %s", r.Status)
	}
	if r := do(t, srv, "POST", "/v1/jobs?dry=1", "tok", good); r.StatusCode != http.StatusOK {
		t.Fatalf("a good job after bad ones: %s", r.Status)
	}
}

// One job at a time: a second is refused while the first runs, and the
// barriers release in order through the event stream.
func TestAgentOneJobAndBarriers(t *testing.T) {
	_, srv := newTestAgent(t)
	body, _ := json.Marshal(Job{Command: "bench", RunName: "r", Hosts: 1})
	var acc Accepted
	r := do(t, srv, "POST", "/v1/jobs", "tok", body)
	if err := json.NewDecoder(r.Body).Decode(&acc); err != nil || acc.ID == "" {
		t.Fatalf("prepare: %s %v", r.Status, err)
	}
	if r := do(t, srv, "POST", "/v1/jobs", "tok", body); r.StatusCode != http.StatusConflict {
		t.Errorf("second job: %s", r.Status)
	}
	ev := do(t, srv, "GET", "/v1/jobs/"+acc.ID+"/events", "tok", nil)
	dec := json.NewDecoder(ev.Body)
	var seen []string
	for len(seen) < 20 {
		var e Event
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		if e.Type == EventHeartbeat {
			continue
		}
		seen = append(seen, e.Type+":"+e.Phase)
		if e.Type == EventReady {
			g, _ := json.Marshal(Release{Seq: e.Seq, Delay: time.Millisecond})
			do(t, srv, "POST", "/v1/jobs/"+acc.ID+"/go", "tok", g)
		}
		if e.Type == EventDone {
			if e.Result == nil || len(e.Result.Phases) != 1 || e.Error != "" {
				t.Errorf("done: %+v", e)
			}
			break
		}
	}
	want := "ready:p started:p ready:finish started:finish done:"
	if got := strings.Join(seen, " "); got != want {
		t.Errorf("events %q, want %q", got, want)
	}
	if r := do(t, srv, "DELETE", "/v1/jobs/"+acc.ID, "tok", nil); r.StatusCode != http.StatusNoContent {
		t.Errorf("delete: %s", r.Status)
	}
	var in Info
	_ = json.NewDecoder(do(t, srv, "GET", "/v1/info", "tok", nil).Body).Decode(&in)
	if in.Busy || in.Protocol != Protocol || len(in.Roots) != 1 {
		t.Errorf("info after the job: %+v", in)
	}
}

// An agent that takes connections and never answers: the coordinator's
// error names the limit on one request, not just "context deadline
// exceeded".
func TestCoordinatorNamesRequestLimit(t *testing.T) {
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hung)
	c := &Coordinator{Hosts: []string{strings.TrimPrefix(srv.URL, "http://")}, Token: "t", Scheme: "http",
		Client: &http.Client{Timeout: 300 * time.Millisecond}}
	_, err := c.Run(context.Background(), Job{Command: "bench", RunName: "r", Hosts: 1})
	want := "host " + c.Hosts[0] + ": no answer within 300ms, the limit on one request to an agent: "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("err %v\nwant %s...", err, want)
	}
}

// TestAgentRoomAsOnOneHost: the agent's room check is the one a run on
// one host makes (sysio.Short): a 16 MiB tmpfs has no room for 32 MiB,
// and a file system that states no size (hugetlbfs without one: no
// blocks, so 0 free) is not refused for it.
func TestAgentRoomAsOnOneHost(t *testing.T) {
	small, sizeless := testenv.Tmpfs(t, "16m"), testenv.MountFS(t, "hugetlbfs", "")
	a, err := NewAgent(AgentOptions{Token: "tok", Roots: []string{small, sizeless}, Runner: &fakeRunner{}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.allowed(small, 32<<20); err == nil || !strings.Contains(err.Error(), "16.0 MiB free, the job needs 32.0 MiB") {
		t.Errorf("16 MiB tmpfs: %v", err)
	}
	if err := a.allowed(small, 8<<20); err != nil {
		t.Errorf("16 MiB tmpfs, 8 MiB: %v", err)
	}
	if err := a.allowed(sizeless, 32<<20); err != nil {
		t.Errorf("hugetlbfs: %v", err)
	}
}
