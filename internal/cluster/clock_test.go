package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/sysio"
)

// TestClockOffset: an agent on the coordinator's own kernel gets the
// offset 0, not an estimate (and is told the moment to start, not a
// wait), from one answer; one that names another kernel gets the
// estimate from the shortest of clockSamples round trips, which (its
// clock being in truth the same one) is off by at most half that trip.
func TestClockOffset(t *testing.T) {
	machine := sysio.Machine(sysio.ProcRoot)
	if machine == "" {
		t.Fatal("this kernel's boot ID cannot be read")
	}
	for _, name := range []string{"", "another kernel"} {
		a, err := NewAgent(AgentOptions{Token: "tok", Roots: []string{t.TempDir()}, Runner: &fakeRunner{}, Version: "test", Machine: name})
		if err != nil {
			t.Fatal(err)
		}
		var asked atomic.Int32
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/info" {
				asked.Add(1)
			}
			a.ServeHTTP(w, r)
		}))
		t.Cleanup(func() { a.Close(); srv.Close() })
		c := &Coordinator{Token: "tok", Scheme: "http", Client: &http.Client{Timeout: 30 * time.Second}}
		h := &host{addr: strings.TrimPrefix(srv.URL, "http://")}
		if err := c.clock(context.Background(), h, machine); err != nil {
			t.Fatal(err)
		}
		rtt := time.Duration(h.rtt.Load())
		want := int32(clockSamples)
		if name == "" {
			want = 1 // its first answer names this kernel: nothing to estimate
		}
		if asked.Load() != want || rtt <= 0 {
			t.Errorf("agent %q: asked %d times, round trip %v: want %d answers and their shortest trip", name, asked.Load(), rtt, want)
		}
		switch {
		case name == "" && (h.offset != 0 || !h.sameClock || h.info.Machine != machine):
			t.Errorf("an agent on this kernel (%q): offset %v, want exactly 0", h.info.Machine, h.offset)
		case name != "" && (h.offset.Abs() > rtt/2 || h.sameClock || h.info.Machine != name):
			t.Errorf("an agent naming %q: offset %v with a round trip of %v: want an estimate within half the trip", h.info.Machine, h.offset, rtt)
		}
	}
}

// TestOffsetOf: the estimate comes from the answer of the shortest round
// trip, whichever it was, taken at the trip's middle.
func TestOffsetOf(t *testing.T) {
	base := time.Date(2026, 11, 29, 5, 0, 0, 0, time.UTC)
	samples := []clockSample{
		{sent: base, rtt: 10 * time.Millisecond, info: Info{Time: base.Add(9 * time.Millisecond)}},
		{sent: base.Add(time.Second), rtt: 2 * time.Millisecond, info: Info{Time: base.Add(time.Second + 4*time.Millisecond)}},
		{sent: base.Add(2 * time.Second), rtt: 6 * time.Millisecond, info: Info{Time: base.Add(2*time.Second - 5*time.Millisecond)}},
	}
	if i, off := offsetOf(samples); i != 1 || off != 3*time.Millisecond {
		t.Errorf("offsetOf = sample %d, %v; want sample 1, 3ms", i, off)
	}
}

// TestReleaseWait: an agent waits until the moment At on its clock when
// the release gives one, however long Delay says; never less than 0 nor
// more than a minute; and Delay without At.
func TestReleaseWait(t *testing.T) {
	cases := []struct {
		g        Release
		min, max time.Duration
	}{
		{Release{Delay: 5 * time.Millisecond}, 5 * time.Millisecond, 5 * time.Millisecond},
		{Release{At: time.Now().Add(-time.Second), Delay: time.Minute}, 0, 0},
		{Release{At: time.Now().Add(time.Hour)}, time.Minute, time.Minute},
		{Release{At: time.Now().Add(40 * time.Second), Delay: time.Millisecond}, 20 * time.Second, 40 * time.Second},
	}
	for _, c := range cases {
		if w := c.g.wait(); w < c.min || w > c.max {
			t.Errorf("%+v: waits %v, want %v to %v", c.g, w, c.min, c.max)
		}
	}
}

// TestWaitFor: the wait never ends before its time, on Go's timer and on
// the kernel's clock alike, and a cancelled context ends it with its error.
func TestWaitFor(t *testing.T) {
	for _, d := range []time.Duration{0, -time.Second, finalStretch / 2, finalStretch + 2*time.Millisecond} {
		t0 := time.Now()
		if err := waitFor(context.Background(), d); err != nil || time.Since(t0) < d {
			t.Errorf("waitFor(%v): %v after %v", d, err, time.Since(t0))
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, d := range []time.Duration{time.Millisecond, time.Hour} {
		if err := waitFor(ctx, d); err != context.Canceled {
			t.Errorf("waitFor(cancelled, %v) = %v, want %v", d, err, context.Canceled)
		}
	}
}

// TestAgentStartsAtTheMoment: an agent released with a moment and a
// delay of 50 s starts at the moment, not before it, and not 50 s later.
func TestAgentStartsAtTheMoment(t *testing.T) {
	a, err := NewAgent(AgentOptions{Token: "tok", Roots: []string{t.TempDir()}, Runner: &fakeRunner{}, Version: "test", OrphanAfter: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(func() { a.Close(); srv.Close() })
	body, _ := json.Marshal(Job{Command: "bench", RunName: "r", Hosts: 1})
	var acc Accepted
	if err := json.NewDecoder(do(t, srv, "POST", "/v1/jobs", "tok", body).Body).Decode(&acc); err != nil {
		t.Fatal(err)
	}
	// The stream ends 40 s on: a start after that was a wait for Delay.
	req, _ := http.NewRequest("GET", srv.URL+"/v1/jobs/"+acc.ID+"/events", nil)
	req.Header.Set("Authorization", "Bearer tok")
	resp, err := (&http.Client{Timeout: 40 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	var at time.Time
	for {
		var e Event
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("no start within 40 s of a release for 30 ms on (%v): the agent waits for Delay", err)
		}
		switch e.Type {
		case EventReady:
			at = time.Now().Add(30 * time.Millisecond)
			g, _ := json.Marshal(Release{Seq: e.Seq, At: at, Delay: 50 * time.Second})
			do(t, srv, "POST", "/v1/jobs/"+acc.ID+"/go", "tok", g)
		case EventStarted:
			if e.Phase != "p" || e.Time.Before(at) {
				t.Errorf("started %q at %v, want p at %v or later", e.Phase, e.Time, at)
			}
			return
		}
	}
}
