package prom

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/testenv"
)

// phase is a phase of ops operations of n bytes each, whose workers wait
// on hold before the last operation.
func phase(name string, ops int64, n int64, hold <-chan struct{}) engine.Phase {
	return engine.Phase{Name: name, Tasks: 2, Ops: ops, Do: func(w *engine.Worker, task, pass int) error {
		s, ok := w.Begin()
		if !ok {
			return nil
		}
		if hold != nil && pass > 0 {
			<-hold
		}
		time.Sleep(time.Microsecond)
		w.End(s, n)
		return nil
	}}
}

func TestBoardCountsLiveAndFinishedPhases(t *testing.T) {
	b := NewBoard("h1")
	ctx := engine.WithWatcher(context.Background(), b)
	e := engine.New(2)
	hold := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := e.Run(ctx, phase("write", 10, 4096, hold))
		done <- err
	}()
	// While the phase is held, the board shows its operations so far.
	deadline := time.Now().Add(30 * time.Second)
	for b.Totals("write").Ops < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	running := `
# HELP fsbench_phase_running 1 while the phase runs, 0 once it has ended.
# TYPE fsbench_phase_running gauge
fsbench_phase_running{host="h1",phase="write"} 1
`
	if err := testutil.CollectAndCompare(b, strings.NewReader(running), "fsbench_phase_running"); err != nil {
		t.Fatal(err)
	}
	close(hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// A second run of the same phase adds up; a new one is its own series.
	if _, err := e.Run(ctx, phase("write", 6, 4096, nil)); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Run(ctx, phase("stat", 3, 0, nil)); err != nil {
		t.Fatal(err)
	}
	w := b.Totals("write")
	if w.Ops != 16 || w.Bytes != 16*4096 || w.Errors != 0 {
		t.Fatalf("write totals %+v, want 16 ops of 4096 bytes", w)
	}
	var inBuckets int64
	for _, c := range w.Buckets {
		inBuckets += c
	}
	if inBuckets != 16 || w.LatencyNs < 16*int64(time.Microsecond) {
		t.Fatalf("latencies: %d in buckets, sum %d ns", inBuckets, w.LatencyNs)
	}
	want := `
# HELP fsbench_operations_total Operations completed, warm-up included.
# TYPE fsbench_operations_total counter
fsbench_operations_total{host="h1",op="stat",phase="stat"} 3
fsbench_operations_total{host="h1",op="write",phase="write"} 16
`
	if err := testutil.CollectAndCompare(b, strings.NewReader(want), "fsbench_operations_total"); err != nil {
		t.Fatal(err)
	}
}

func TestBoardRemoteNeverGoesBack(t *testing.T) {
	b := NewBoard("coord")
	b.SetRemote("run-1", "agent-1", "write", "", Totals{Ops: 10, Bytes: 100, WriteBytes: 100})
	b.SetRemote("run-1", "agent-1", "write", "", Totals{Ops: 4, Bytes: 40, WriteBytes: 40}) // late, out of order
	b.SetRemote("run-2", "agent-1", "write", "", Totals{Ops: 1, Bytes: 5, WriteBytes: 5})   // the next run adds up
	want := `
# HELP fsbench_bytes_total Bytes moved by completed operations, by direction (read, write).
# TYPE fsbench_bytes_total counter
fsbench_bytes_total{direction="read",host="agent-1",op="write",phase="write"} 0
fsbench_bytes_total{direction="write",host="agent-1",op="write",phase="write"} 105
`
	if err := testutil.CollectAndCompare(b, strings.NewReader(want), "fsbench_bytes_total"); err != nil {
		t.Fatal(err)
	}
}

// TestExpositionPassesPromtool serves a board with a finished and a running
// phase and checks the page with Prometheus's own linter.
func TestExpositionPassesPromtool(t *testing.T) {
	testenv.NeedsServer(t, "promtool")
	promtool, err := testenv.LookPath("promtool")
	if err != nil {
		testenv.Unavailable(t, "promtool: %v", err)
	}
	b := NewBoard("h1")
	ctx := engine.WithWatcher(context.Background(), b)
	if _, err := engine.New(2).Run(ctx, phase("read", 8, 1<<20, nil)); err != nil {
		t.Fatal(err)
	}
	reg, err := NewRegistry(b)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Serve("127.0.0.1:0", reg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	resp, err := http.Get(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, w := range []string{`fsbench_bytes_total{direction="write",host="h1",op="read",phase="read"} 8.388608e+06`,
		`fsbench_operation_duration_seconds_count{host="h1",op="read",phase="read"} 8`, "go_goroutines", "process_open_fds"} {
		if !strings.Contains(string(page), w) {
			t.Errorf("page lacks %s:\n%s", w, page)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(page))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestServeRefusesABadAddress(t *testing.T) {
	reg, _ := NewRegistry()
	for _, addr := range []string{"", "nonsense", "127.0.0.1:99999"} {
		if s, err := Serve(addr, reg); err == nil {
			s.Close()
			t.Errorf("Serve(%q) accepted", addr)
		} else if !strings.Contains(err.Error(), "--metrics-listen") {
			t.Errorf("Serve(%q): %v does not name the flag", addr, err)
		}
	}
}

// TestBoardSplitsOperations runs a phase of two operations, one reading
// and one writing: each has its own series, and its bytes their direction.
func TestBoardSplitsOperations(t *testing.T) {
	b := NewBoard("h1")
	ctx := engine.WithWatcher(context.Background(), b)
	p := engine.Phase{Name: "mixed", Tasks: 10, Classes: 2,
		ClassOps: []engine.ClassOp{{Name: "mixed-get", Read: true}, {Name: "mixed-put"}},
		Do: func(w *engine.Worker, task, _ int) error {
			s, ok := w.Begin()
			if !ok {
				return nil
			}
			if task == 9 {
				w.FailAs(errors.New("refused"), 1)
				return nil
			}
			w.EndAs(s, int64(100*(1+task%2)), task%2)
			return nil
		}}
	if _, err := engine.New(2).Run(ctx, p); err != nil {
		t.Fatal(err)
	}
	want := `
# HELP fsbench_bytes_total Bytes moved by completed operations, by direction (read, write).
# TYPE fsbench_bytes_total counter
fsbench_bytes_total{direction="read",host="h1",op="mixed-get",phase="mixed"} 500
fsbench_bytes_total{direction="write",host="h1",op="mixed-get",phase="mixed"} 0
fsbench_bytes_total{direction="read",host="h1",op="mixed-put",phase="mixed"} 0
fsbench_bytes_total{direction="write",host="h1",op="mixed-put",phase="mixed"} 800
# HELP fsbench_errors_total Operations that failed.
# TYPE fsbench_errors_total counter
fsbench_errors_total{host="h1",op="mixed-get",phase="mixed"} 0
fsbench_errors_total{host="h1",op="mixed-put",phase="mixed"} 1
# HELP fsbench_operations_total Operations completed, warm-up included.
# TYPE fsbench_operations_total counter
fsbench_operations_total{host="h1",op="mixed-get",phase="mixed"} 5
fsbench_operations_total{host="h1",op="mixed-put",phase="mixed"} 4
`
	if err := testutil.CollectAndCompare(b, strings.NewReader(want), "fsbench_bytes_total", "fsbench_errors_total", "fsbench_operations_total"); err != nil {
		t.Fatal(err)
	}
	if n := testutil.CollectAndCount(b, "fsbench_operation_duration_seconds"); n != 2 {
		t.Errorf("%d latency histograms, want one per operation", n)
	}
}

// TestBoardReadsNeverCountAsWritten reads the board while a phase of reads
// runs, each counted as read after it ends (as the workloads do): no byte
// is ever shown as written, so the write counter never has to go back.
func TestBoardReadsNeverCountAsWritten(t *testing.T) {
	b := NewBoard("h1")
	ctx := engine.WithWatcher(context.Background(), b)
	p := engine.Phase{Name: "read", Tasks: 4, Ops: 200000, Do: func(w *engine.Worker, _, _ int) error {
		s, ok := w.Begin()
		if !ok {
			return nil
		}
		w.End(s, 4096)
		w.CountRead(4096)
		return nil
	}}
	done := make(chan error, 1)
	go func() {
		_, err := engine.New(2).Run(ctx, p)
		done <- err
	}()
	var reads int
	for running := true; running; reads++ {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
		}
		if tt := b.Totals("read"); tt.WriteBytes != 0 || tt.ReadBytes > tt.Bytes {
			t.Fatalf("after %d reads of the board: %d bytes written, %d read of %d", reads, tt.WriteBytes, tt.ReadBytes, tt.Bytes)
		}
	}
	if tt := b.Totals("read"); tt.ReadBytes != 200000*4096 {
		t.Errorf("read %d bytes, want %d", tt.ReadBytes, 200000*4096)
	}
}
