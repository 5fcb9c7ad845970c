package stats

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/stats/golden")

// fakeClock advances only when the runner waits: After(d) moves the time
// forward by d and fires at once.
type fakeClock struct {
	now    time.Time
	waits  []time.Duration
	onWait func()
}

func (c *fakeClock) Now() time.Time { return c.now }

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.waits = append(c.waits, d)
	c.now = c.now.Add(d)
	if c.onWait != nil {
		c.onWait()
	}
	ch := make(chan time.Time, 1)
	ch <- c.now
	return ch
}

// script is a source that returns one prepared set of values per call.
type script struct {
	steps []map[string]float64
	text  []map[string]string
	errAt map[int]error
	n     int
}

func (s *script) Name() string { return "script" }

func (s *script) Collect(_ context.Context, sm *Sample) error {
	i := s.n
	s.n++
	if err := s.errAt[i]; err != nil {
		return err
	}
	if i >= len(s.steps) {
		i = len(s.steps) - 1
	}
	for k, v := range s.steps[i] {
		sm.Set(k, v)
	}
	if i < len(s.text) {
		for k, v := range s.text[i] {
			sm.Text[k] = v
		}
	}
	return nil
}

// scenario is five samples, one second apart, of every section: a JuiceFS
// client under load that restarts at the last, disk and NFS traffic, a
// bench run that starts writing and then reads.
func scenario() *script {
	base := func(i float64) map[string]float64 {
		return map[string]float64{
			"juicefs_uptime": 100 + i, "juicefs_cpu_usage": 10 + 0.35*i, "juicefs_memory": 512<<20 + i*(8<<20),
			"juicefs_used_buffer_size_bytes": 8 << 20, "juicefs_store_cache_size_bytes": 2 << 30,
			"juicefs_fuse_ops_durations_histogram_seconds_total":    1000 + 1200*i,
			"juicefs_fuse_ops_durations_histogram_seconds_sum":      2 + 0.42*i,
			"juicefs_fuse_read_size_bytes_sum":                      i * (150 << 20),
			"juicefs_fuse_written_size_bytes_sum":                   i * (1100 << 20),
			"juicefs_meta_ops_durations_histogram_seconds_total":    50 + 31*i,
			"juicefs_meta_ops_durations_histogram_seconds_sum":      0.1 + 0.0233*i,
			"juicefs_transaction_durations_histogram_seconds_total": 10 + 5*i, "juicefs_transaction_durations_histogram_seconds_sum": 0.2 + 0.3*i,
			"juicefs_transaction_restart": 0, "juicefs_blockcache_hit_bytes": i * 4096, "juicefs_blockcache_write_bytes": i * (64 << 20),
			"juicefs_object_request_data_bytes_GET": i * (3 << 20), "juicefs_object_request_data_bytes_PUT": i * (1024 << 20),
			"juicefs_object_request_durations_histogram_seconds_GET_total": 2 * i, "juicefs_object_request_durations_histogram_seconds_GET_sum": 0.05 * i,
			"juicefs_object_request_durations_histogram_seconds_PUT_total": 256 * i, "juicefs_object_request_durations_histogram_seconds_PUT_sum": 55 * i,
			"juicefs_object_request_durations_histogram_seconds_DELETE_total": 0, "juicefs_object_request_durations_histogram_seconds_DELETE_sum": 0,
			"juicefs_go_memstats_alloc_bytes": 400 << 20, "juicefs_go_memstats_sys_bytes": 450 << 20,
			"sys.cpu.user": 100 + 1.2*i, "sys.cpu.system": 50 + 0.5*i, "sys.cpu.iowait": 3 + 0.1*i, "sys.cpu.total": 1000 + 2*i,
			"sys.mem.used": 3 << 30, "sys.mem.dirty": i * (100 << 20), "sys.mem.writeback": 12 << 20, "sys.mem.cached": 5 << 30, "sys.mem.free": 10 << 30,
			"disk.reads": 100 + 20*i, "disk.writes": 200 + 350*i, "disk.ios": 300 + 370*i, "disk.read_bytes": i * (2 << 20),
			"disk.write_bytes": i * (700 << 20), "disk.wait_ms": 1000 + 1850*i, "disk.busy_ms": 5000 + 870*i,
			"nfs.ops": 10 + 40*i, "nfs.read_bytes": i * (30 << 20), "nfs.write_bytes": 0,
			"nfs.read.ops": 30 * i, "nfs.read.rtt_ms": 45 * i, "nfs.read.exe_ms": 48 * i,
			"nfs.write.ops": 0, "nfs.write.rtt_ms": 0, "nfs.write.exe_ms": 0,
			"nfs.meta.ops": 10 + 10*i, "nfs.meta.rtt_ms": 2 * i, "nfs.meta.exe_ms": 2.5 * i,
			"proc.cpu": 5 + 0.35*i, "proc.rss": 515 << 20, "proc.threads": 17, "proc.start": 4242,
			"fsbench.ops": 900 * i, "fsbench.latency_ns": 900 * i * 1.1e6, "fsbench.read_bytes": 0,
			"fsbench.write_bytes": i * (900 << 20), "fsbench.errors": 0, "fsbench.runs": 1,
		}
	}
	s := &script{}
	for i := 0; i < 5; i++ {
		s.steps = append(s.steps, base(float64(i)))
		s.text = append(s.text, map[string]string{"fsbench.phase": "write-big"})
	}
	// The client restarts before the last sample.
	s.steps[4]["juicefs_uptime"] = 1
	s.steps[4]["juicefs_cpu_usage"] = 0.3
	s.steps[4]["juicefs_fuse_ops_durations_histogram_seconds_total"] = 900
	// The bench run moves on to reading.
	s.steps[4]["fsbench.read_bytes"] = 400 << 20
	s.text[4]["fsbench.phase"] = "read-big"
	return s
}

func runScenario(t *testing.T, schema string, verbosity int, r Renderer, interval time.Duration, count int) *fakeClock {
	t.Helper()
	secs, err := ParseSchema(schema, verbosity, nil)
	if err != nil {
		t.Fatal(err)
	}
	clock := &fakeClock{now: t0}
	run := &Runner{Sources: []Source{scenario()}, Sections: secs, Interval: interval, Count: count, Render: r, Clock: clock}
	if err := run.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return clock
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "stats", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/stats -run %s -update)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (go test -update rewrites it)\ngot:\n%s\nwant:\n%s", name, got, want)
	}
}

const fullSchema = "tufmcogsdnpb"

func TestGolden(t *testing.T) {
	for _, tc := range []struct {
		name      string
		format    Format
		tty       bool
		color     bool
		verbosity int
		interval  time.Duration
	}{
		{"plain.txt", FormatTable, false, false, 0, time.Second},
		{"plain-verbose.txt", FormatTable, false, false, 1, time.Second},
		{"rows.ndjson", FormatJSON, false, false, 1, time.Second},
		{"rows.csv", FormatCSV, false, false, 1, time.Second},
		// A terminal with colours and a 2 s interval: partial rows in place.
		{"tty-color.txt", FormatTable, true, true, 0, 2 * time.Second},
		{"tty-nocolor.txt", FormatTable, true, false, 0, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			count := 4
			if tc.interval > time.Second {
				count = 2
			}
			runScenario(t, fullSchema, tc.verbosity, NewRenderer(&buf, tc.format, tc.tty, tc.color), tc.interval, count)
			out := buf.Bytes()
			if !tc.color && bytes.ContainsRune(out, '\x1b') {
				t.Errorf("escape codes without colour:\n%q", out)
			}
			if !tc.tty && bytes.ContainsRune(out, '\r') {
				t.Errorf("carriage return off a terminal")
			}
			golden(t, tc.name, out)
		})
	}
}

func TestRunnerCountAndGrid(t *testing.T) {
	var buf bytes.Buffer
	clock := runScenario(t, "b", 0, NewRenderer(&buf, FormatCSV, false, false), time.Second, 3)
	if lines := strings.Count(buf.String(), "\n"); lines != 4 {
		t.Errorf("--count 3 gave %d lines (with the header), want 4:\n%s", lines, buf.String())
	}
	if len(clock.waits) != 3 {
		t.Errorf("waited %d times, want 3", len(clock.waits))
	}
	for _, w := range clock.waits {
		if w != time.Second {
			t.Errorf("wait %v, want 1s on a fixed grid", w)
		}
	}
}

func TestRunnerPartialTicks(t *testing.T) {
	// Off a terminal a 3 s interval is one wait of 3 s per row; on a
	// terminal, three waits of 1 s, two of them partial rows.
	var plain, tty bytes.Buffer
	c1 := runScenario(t, "b", 0, NewRenderer(&plain, FormatTable, false, false), 3*time.Second, 1)
	c2 := runScenario(t, "b", 0, NewRenderer(&tty, FormatTable, true, false), 3*time.Second, 1)
	if len(c1.waits) != 1 || c1.waits[0] != 3*time.Second {
		t.Errorf("plain waits %v", c1.waits)
	}
	if len(c2.waits) != 3 {
		t.Errorf("tty waits %v", c2.waits)
	}
	if n := strings.Count(tty.String(), "\r"); n != 2 {
		t.Errorf("%d carriage returns, want 2 (a partial row over the first, the full row over that):\n%q", n, tty.String())
	}
}

func TestRunnerHeaderEvery30(t *testing.T) {
	var buf bytes.Buffer
	runScenario(t, "b", 0, NewRenderer(&buf, FormatTable, true, false), time.Second, 61)
	if n := strings.Count(buf.String(), "fsbench"); n != 3 {
		t.Errorf("header %d times in 61 rows on a terminal, want 3", n)
	}
	buf.Reset()
	runScenario(t, "b", 0, NewRenderer(&buf, FormatTable, false, false), time.Second, 61)
	if n := strings.Count(buf.String(), "fsbench"); n != 1 {
		t.Errorf("header %d times off a terminal, want 1", n)
	}
}

func TestRunnerCancel(t *testing.T) {
	secs, _ := ParseSchema("b", 0, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var buf bytes.Buffer
	clock := &fakeClock{now: t0}
	n := 0
	clock.onWait = func() {
		n++
		if n == 3 {
			cancel()
		}
	}
	run := &Runner{Sources: []Source{scenario()}, Sections: secs, Interval: time.Second, Render: NewRenderer(&buf, FormatJSON, false, false), Clock: clock}
	if err := run.Run(ctx); err != nil {
		t.Fatalf("a cancelled run is a normal end, got %v", err)
	}
	if lines := strings.Count(buf.String(), "\n"); lines < 2 || lines > 3 {
		t.Errorf("%d rows before the cancel", lines)
	}
}

func TestRunnerSourceErrors(t *testing.T) {
	secs, _ := ParseSchema("b", 0, nil)
	src := scenario()
	src.errAt = map[int]error{1: errors.New("boom"), 2: errors.New("boom again")}
	var warnings []string
	var buf bytes.Buffer
	run := &Runner{Sources: []Source{src}, Sections: secs, Interval: time.Second, Count: 4,
		Render: NewRenderer(&buf, FormatCSV, false, false), Clock: &fakeClock{now: t0},
		Warn: func(f string, a ...any) { warnings = append(warnings, f) }}
	if err := run.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Warned once when it broke, once when it came back.
	if len(warnings) != 2 {
		t.Errorf("warnings %q", warnings)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d lines:\n%s", len(lines), buf.String())
	}
	// The failed samples have no values: gaps, never zeros or negatives.
	if !strings.HasSuffix(lines[1], ",1,,,,,") || !strings.HasSuffix(lines[2], ",1,,,,,") {
		t.Errorf("rows of a failed source:\n%s\n%s", lines[1], lines[2])
	}
}

func TestRunnerBadWriter(t *testing.T) {
	secs, _ := ParseSchema("b", 0, nil)
	run := &Runner{Sources: []Source{scenario()}, Sections: secs, Interval: time.Second, Count: 2,
		Render: NewRenderer(failWriter{}, FormatTable, false, false), Clock: &fakeClock{now: t0}}
	if err := run.Run(context.Background()); err == nil {
		t.Error("no error writing to a broken stdout")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// slow is a source whose reading takes longer than the interval.
type slow struct {
	clock *fakeClock
	took  time.Duration
	n     float64
}

func (s *slow) Name() string { return "slow" }

func (s *slow) Collect(_ context.Context, sm *Sample) error {
	s.clock.now = s.clock.now.Add(s.took)
	s.n++
	sm.Set("fsbench.ops", s.n*100)
	return nil
}

func TestRunnerSkipsMissedTicks(t *testing.T) {
	secs, _ := ParseSchema("b", 0, nil)
	clock := &fakeClock{now: t0}
	var buf bytes.Buffer
	run := &Runner{Sources: []Source{&slow{clock: clock, took: 2500 * time.Millisecond}}, Sections: secs, Interval: time.Second, Count: 3,
		Render: NewRenderer(&buf, FormatJSON, false, false), Clock: clock}
	if err := run.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, w := range clock.waits {
		if w < 0 || w > time.Second {
			t.Errorf("wait %v", w)
		}
	}
	// Each row spans the real time between two samples: 100 ops in 2.5 s.
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if !strings.Contains(line, `"interval_s":2.5,`) || !strings.Contains(line, `"ops_per_s":40,`) {
			t.Errorf("row %s", line)
		}
	}
}
