package accesslog

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/workload"
)

func TestWriterLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "access.log")
	w, err := Create(path, 2)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 21, 21, 3, 18, 0, time.Local)
	w.Trace(-1, workload.Event{Op: "mkdir", Path: "/tmp/run", Start: t0})
	w.Trace(0, workload.Event{Op: "create", Path: "/tmp/run/big.0", Start: t0, Dur: 5 * time.Microsecond})
	w.Trace(0, workload.Event{Op: "write", Path: "/tmp/run/big.0", Offset: 4096, Size: 4096, Done: 4096, Start: t0, Dur: 87 * time.Microsecond})
	w.Trace(1, workload.Event{Op: "read", Path: "/tmp/run/a b", Offset: 0, Size: 4096, Done: 100, Start: t0, Dur: time.Millisecond, Err: io.EOF})
	w.Trace(1, workload.Event{Op: "stat", Path: "/tmp/run/missing", Start: t0, Dur: 3 * time.Microsecond,
		Err: &workload.PathError{Op: "stat", Path: "/tmp/run/missing", Err: syscall.ENOENT}})
	w.Trace(7, workload.Event{Op: "unlink", Path: "/tmp/run/x", Start: t0, Err: errors.New("odd\nfailure")}) // beyond the workers given
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil { // idempotent
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ids := string(appendIDs(nil, uint32(os.Getuid()), uint32(os.Getgid()), uint32(os.Getpid())))
	want := map[string]bool{
		"2026.11.21 21:03:18.000000" + ids + "mkdir (/tmp/run) - OK <0.000000>":                               true,
		"2026.11.21 21:03:18.000005" + ids + "create (/tmp/run/big.0) - OK <0.000005>":                        true,
		"2026.11.21 21:03:18.000087" + ids + "write (/tmp/run/big.0,4096,4096): 4096 - OK <0.000087>":         true,
		"2026.11.21 21:03:18.001000" + ids + `read ("/tmp/run/a b",4096,0): 100 - OK <0.001000>`:              true,
		"2026.11.21 21:03:18.000003" + ids + "stat (/tmp/run/missing) - no such file or directory <0.000003>": true,
		"2026.11.21 21:03:18.000000" + ids + "unlink (/tmp/run/x) - odd failure <0.000000>":                   true,
	}
	lines := bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), data)
	}
	p := NewParser(time.Local)
	for _, l := range lines {
		if !want[string(l)] {
			t.Errorf("unexpected line %q", l)
		}
		var e Entry
		if err := p.Parse(l, &e); err != nil {
			t.Errorf("Parse(%q): %v", l, err)
		}
	}
}

// TestWriterConcurrent has many workers log at once (run with -race): every
// line arrives whole, and each worker's lines stay in its order.
func TestWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	const workers, per = 8, 5000
	w := New(&buf, workers)
	var wg sync.WaitGroup
	t0 := time.Now()
	for i := 0; i < workers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			for j := 0; j < per; j++ {
				w.Trace(i, workload.Event{Op: "write", Path: "/r/f." + string(rune('a'+i)), Offset: int64(j), Size: 1, Done: 1, Start: t0.Add(time.Duration(j) * time.Millisecond)})
			}
		}(i)
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(&buf)
	p := NewParser(time.Local)
	last := map[string]int64{}
	n := 0
	for sc.Scan() {
		var e Entry
		if err := p.Parse(sc.Bytes(), &e); err != nil {
			t.Fatalf("line %d: %v: %s", n, err, sc.Text())
		}
		k := string(e.Args[:8])
		if e.Time < last[k] {
			t.Fatalf("worker %s out of order at line %d", k, n)
		}
		last[k] = e.Time
		n++
	}
	if n != workers*per {
		t.Errorf("%d lines, want %d", n, workers*per)
	}
}

type failWriter struct{}

func (failWriter) Write(p []byte) (int, error) { return 0, syscall.ENOSPC }

func TestWriterError(t *testing.T) {
	w := New(failWriter{}, 1)
	w.Trace(0, workload.Event{Op: "stat", Path: "/x", Start: time.Now()})
	if err := w.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Close = %v, want ENOSPC", err)
	}
	if _, err := Create(filepath.Join(t.TempDir(), "no", "such", "dir"), 1); err == nil {
		t.Fatal("Create in a missing directory succeeded")
	}
}

// BenchmarkTrace is the cost the access log adds to each file operation.
func BenchmarkTrace(b *testing.B) {
	w := New(io.Discard, 1)
	ev := workload.Event{Op: "write", Path: "/mnt/jfs/fsbench-host-1234-abcdef/small.0.17", Offset: 131072, Size: 131072, Done: 131072, Start: time.Now(), Dur: 87 * time.Microsecond}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		w.Trace(0, ev)
	}
	b.StopTimer()
	_ = w.Close()
}

// TestWriterPhaseOrder: when workers pause (between two phases), what they
// logged before goes out before what they log after, across workers.
func TestWriterPhaseOrder(t *testing.T) {
	var buf bytes.Buffer
	w := New(&buf, 2)
	t0 := time.Now()
	for _, at := range []time.Duration{0, 0, 0, time.Second, time.Second, time.Second} {
		for worker := 0; worker < 2; worker++ {
			w.Trace(worker, workload.Event{Op: "stat", Path: "/r/" + strconv.Itoa(worker), Start: t0.Add(at)})
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	p := NewParser(time.Local)
	var last int64
	for i, l := range bytes.Split(bytes.TrimSpace(buf.Bytes()), []byte("\n")) {
		var e Entry
		if err := p.Parse(l, &e); err != nil {
			t.Fatal(err)
		}
		if e.Time < last {
			t.Fatalf("line %d goes back in time:\n%s", i, buf.String())
		}
		last = e.Time
	}
}
