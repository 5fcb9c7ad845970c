package cluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestHostList(t *testing.T) {
	var ports []string
	for i := range 400 {
		ports = append(ports, fmt.Sprintf("127.0.0.1:%d", 21001+i))
	}
	few := []string{"a:1", "b:1", "c:1"}
	mixed := append(append([]string{"n1:7781", "n2:7781"}, ports[:10]...), "n3:7781")
	var many []string
	for i := range 20 {
		many = append(many, fmt.Sprintf("node%d:7781", i))
	}
	for _, c := range []struct {
		addrs   []string
		verbose bool
		want    string
	}{
		{few, false, "a:1, b:1, c:1"},
		{ports, false, "127.0.0.1:21001-21400"},
		{ports[:3], false, "127.0.0.1:21001, 127.0.0.1:21002, 127.0.0.1:21003"},
		{mixed, false, "n1:7781, n2:7781, 127.0.0.1:21001-21010, n3:7781"},
		{many, false, "node0:7781, node1:7781, node2:7781, node3:7781, node4:7781, node5:7781, node6:7781, ... (13 more; -v lists all)"},
		{many, true, strings.Join(many, ", ")},
	} {
		if got := HostList(c.addrs, c.verbose); got != c.want {
			t.Errorf("HostList(%d, %v) = %q, want %q", len(c.addrs), c.verbose, got, c.want)
		}
	}
}

// Hosts that fail alike are told in one line, with the first few named:
// 7 of 12 agents not listening make one cause, not seven errors (nor only
// the first).
func TestHostsFailingAlikeGrouped(t *testing.T) {
	pool, err := ServePool(AgentOptions{Token: "tok", Roots: []string{t.TempDir()}, Runner: simRunner{}, Version: "test"}, "127.0.0.1:0", 5, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	addrs := append([]string{}, pool.Addrs...)
	// Seven ports no one listens on, all held until all are picked: a
	// port closed at once may be picked again, and one host listed twice
	// is not seven hosts.
	var closed []string
	var held []net.Listener
	for range 7 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		closed, held = append(closed, ln.Addr().String()), append(held, ln)
	}
	for _, ln := range held {
		ln.Close()
	}
	addrs = append(addrs, closed...)
	for _, verbose := range []bool{false, true} {
		c := &Coordinator{Hosts: addrs, Token: "tok", Client: &http.Client{Transport: NewTransport(), Timeout: 10 * time.Second},
			Scheme: "http", Version: "test", Verbose: verbose}
		_, err := c.Run(context.Background(), Job{Command: "bench", RunName: "fsbench-hosts-group", Seed: 1})
		var he *HostsError
		if !errors.As(err, &he) || len(he.Errs) != 7 {
			t.Fatalf("verbose %v: %v; want the 7 hosts not listening", verbose, err)
		}
		want := "7 hosts: unreachable: dial: connect: connection refused: " + strings.Join(closed[:5], ", ") + ", ... (2 more; -v for all)"
		if verbose {
			want = "7 hosts: unreachable: dial: connect: connection refused: " + strings.Join(closed, ", ")
		}
		if err.Error() != want {
			t.Errorf("verbose %v:\n got %s\nwant %s", verbose, err, want)
		}
	}
}

// An agent that never answers a release is lost once the barrier's
// deadline passes, named with the barrier, and the run ends: it does not
// wait for that host for ever.
func TestReleaseNotTakenLosesHost(t *testing.T) {
	var addrs []string
	var stalled string
	for i := range 3 {
		a, err := NewAgent(AgentOptions{Token: "tok", Roots: []string{t.TempDir()}, Runner: simRunner{}, Version: "test"})
		if err != nil {
			t.Fatal(err)
		}
		var h http.Handler = a
		if i == 1 {
			h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.HasSuffix(r.URL.Path, "/go") {
					<-r.Context().Done() // a release that gets no answer
					return
				}
				a.ServeHTTP(w, r)
			})
		}
		srv := newServer(t, h)
		t.Cleanup(a.Close)
		addrs = append(addrs, srv)
		if i == 1 {
			stalled = srv
		}
	}
	var logged []string
	c := &Coordinator{Hosts: addrs, Token: "tok", Client: &http.Client{Transport: NewTransport(), Timeout: 30 * time.Second},
		Scheme: "http", Version: "test", Logf: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute) // a guard, not a measure
	defer cancel()
	_, err := c.Run(ctx, Job{Command: "bench", RunName: "fsbench-hosts-release", Seed: 1})
	var he *HostError
	if !errors.Is(err, ErrLost) || !errors.As(err, &he) || he.Host != stalled || ctx.Err() != nil {
		t.Fatalf("%v; want %s lost", err, stalled)
	}
	// Three times the longest silence a host may keep: 5 s, and a little
	// more for hosts that crowd this machine's CPUs (Crowded).
	if r := c.releaseWithin(); r < 15*time.Second {
		t.Errorf("a release has %v; want at least 3 × LostAfter", r)
	}
	want := fmt.Sprintf("lost host %s: did not take the release of layout within %v", stalled, c.releaseWithin())
	if !strings.Contains(strings.Join(logged, "\n"), want) {
		t.Errorf("log %q; want %q", logged, want)
	}
}

// newServer serves h on a loopback port until the test ends.
func newServer(t *testing.T, h http.Handler) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}
