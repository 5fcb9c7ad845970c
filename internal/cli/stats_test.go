package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/live"
	"github.com/fsbench/fsbench/internal/stats"
	"github.com/fsbench/fsbench/internal/testenv"
)

func statsApp() (*App, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &App{IO: IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}}, &out, &errb
}

func TestStatsFlags(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		check   func(o *StatsOptions) bool
		wantErr string
	}{
		{args: nil, check: func(o *StatsOptions) bool {
			return o.Path == "" && o.Interval == time.Second && o.Count == 0 && o.Format == stats.FormatTable && o.Schema == ""
		}},
		{args: []string{"/mnt/jfs", "--interval", "5s", "--count", "3", "--schema", "ufmco", "-l", "1", "--json"}, check: func(o *StatsOptions) bool {
			return o.Path == "/mnt/jfs" && o.Interval == 5*time.Second && o.Count == 3 && o.Schema == "ufmco" && o.Verbosity == 1 && o.Format == stats.FormatJSON
		}},
		{args: []string{"--interval", "500ms", "-o", "csv"}, check: func(o *StatsOptions) bool {
			return o.Interval == 500*time.Millisecond && o.Format == stats.FormatCSV
		}},
		{args: []string{"--interval", "0.25"}, check: func(o *StatsOptions) bool { return o.Interval == 250*time.Millisecond }},
		{args: []string{"--metrics-url", "http://localhost:9567/metrics", "--metric", `req=minio_s3_requests_total{api="getobject"}`, "--metric", "x", "--schema", "ux"},
			check: func(o *StatsOptions) bool {
				return o.MetricsURL == "http://localhost:9567/metrics" && len(o.Metrics) == 2 && o.Metrics[0].Nick == "req" && o.Metrics[0].Labels["api"] == "getobject"
			}},
		{args: []string{"a", "b"}, wantErr: "at most one MOUNTPOINT"},
		{args: []string{"--interval", "0"}, wantErr: "between 0.1 s and 24 h"},
		{args: []string{"--interval", "soon"}, wantErr: "--interval"},
		{args: []string{"--count", "-1"}, wantErr: "--count"},
		{args: []string{"--schema", "uq"}, wantErr: "unknown schema letter"},
		{args: []string{"--schema", "x"}, wantErr: "needs at least one --metric"},
		{args: []string{"-o", "xml"}, wantErr: "unknown output format"},
		{args: []string{"-o", "csv", "--json"}, wantErr: "contradict"},
		{args: []string{"--metric", "x"}, wantErr: "needs --metrics"},
		{args: []string{"--metrics-url", "localhost:9567"}, wantErr: "http://"},
		{args: []string{"--metrics-url", "http://h/m", "--metric", "toolong=x"}, wantErr: "nick"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			app, _, _ := statsApp()
			var got *StatsOptions
			cmd := newStatsCmdWith(app, func(_ context.Context, o *StatsOptions) error { got = o; return nil })
			cmd.SetArgs(tc.args)
			cmd.SetOut(&bytes.Buffer{})
			cmd.SetErr(&bytes.Buffer{})
			err := cmd.Execute()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want %q", err, tc.wantErr)
				}
				if ExitCode(err) != ExitUsage {
					t.Errorf("exit code %d for %v, want %d", ExitCode(err), err, ExitUsage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.check(got) {
				t.Errorf("options %+v", got)
			}
		})
	}
}

func TestStatsMissingPath(t *testing.T) {
	app, out, errb := statsApp()
	code := Run(context.Background(), app, []string{"stats", "/no/such/dir/here"})
	if code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	if !strings.Contains(errb.String(), "stats /no/such/dir/here: no such file or directory") || strings.Count(errb.String(), "\n") > 2 {
		t.Errorf("stderr %q", errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("stdout %q", out.String())
	}
}

func TestStatsRunCount(t *testing.T) {
	t.Setenv(live.DirEnv, t.TempDir())
	dir := t.TempDir()
	for _, tc := range []struct {
		format string
		lines  int
	}{{"table", 2 + 2}, {"json", 2}, {"csv", 1 + 2}} {
		t.Run(tc.format, func(t *testing.T) {
			app, out, errb := statsApp()
			app.Globals.Quiet = true
			code := Run(context.Background(), app, []string{"stats", dir, "--count", "2", "--interval", "100ms", "-o", tc.format})
			if code != ExitOK {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			if n := strings.Count(out.String(), "\n"); n != tc.lines {
				t.Errorf("%d lines, want %d:\n%s", n, tc.lines, out.String())
			}
			if strings.ContainsAny(out.String(), "\x1b\r") {
				t.Errorf("escape codes off a terminal: %q", out.String())
			}
		})
	}
}

func TestStatsCancelExitsZero(t *testing.T) {
	t.Setenv(live.DirEnv, t.TempDir())
	ctx, cancel := context.WithCancel(context.Background())
	app, _, errb := statsApp()
	done := make(chan int, 1)
	go func() { done <- Run(ctx, app, []string{"stats", "--interval", "100ms", "-o", "json", "--schema", "b"}) }()
	cancel() // as Ctrl-C does
	if code := <-done; code != ExitOK {
		t.Errorf("exit %d after cancel, want 0: %s", code, errb.String())
	}
}

// TestStatsSeesBench runs `fsbench bench` on a temporary directory and,
// while it writes, `fsbench stats DIR --count 3 -o json`: the fsbench
// section must show the bench's write bandwidth.
func TestStatsSeesBench(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 2 GiB file")
	}
	bin := testenv.Binary(t)
	dir := t.TempDir()
	liveDir := t.TempDir()
	env := append(os.Environ(), live.DirEnv+"="+liveDir)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var benchOut bytes.Buffer
	// 2 GiB take a few seconds to write; no cache dropping, which would
	// disturb the tests running beside this one.
	bench := exec.CommandContext(ctx, bin, "bench", dir, "--big-file-size", "2G", "--small-file-count", "20", "--drop-caches", "never", "-q", "-o", "json")
	bench.Env = env
	bench.Stdout, bench.Stderr = &benchOut, &benchOut
	if err := bench.Start(); err != nil {
		t.Fatal(err)
	}
	benchDone := make(chan error, 1)
	go func() { benchDone <- bench.Wait() }()
	defer func() {
		_ = bench.Process.Signal(os.Interrupt)
		<-benchDone
		if ents, _ := os.ReadDir(liveDir); len(ents) != 0 {
			t.Errorf("live snapshots left behind: %v", ents)
		}
	}()

	// Wait until the bench publishes its first phase (bounded, not timed).
	for {
		snaps := live.ListDir(liveDir, time.Now())
		if len(snaps) == 1 && snaps[0].Phase == "write-big" {
			break
		}
		select {
		case err := <-benchDone:
			benchDone <- err
			t.Fatalf("bench ended before it published a phase: %v\n%s", err, benchOut.String())
		case <-ctx.Done():
			t.Fatal("bench never published its counters")
		case <-time.After(20 * time.Millisecond):
		}
	}

	cmd := exec.CommandContext(ctx, bin, "stats", dir, "--count", "3", "-o", "json", "--interval", "500ms")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("stats: %v\n%s", err, stderr.String())
	}
	var rows []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		var row struct {
			Sections map[string]map[string]any `json:"sections"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		fb, ok := row.Sections["fsbench"]
		if !ok {
			t.Fatalf("no fsbench section in %s", sc.Text())
		}
		rows = append(rows, fb)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3:\n%s", len(rows), out)
	}
	best := 0.0
	for _, r := range rows {
		if w, ok := r["write_bytes_per_s"].(float64); ok && w > best {
			best = w
		}
		for k, v := range r {
			if f, ok := v.(float64); ok && f < 0 {
				t.Errorf("%s = %v", k, f)
			}
		}
	}
	if best <= 0 {
		t.Errorf("no write bandwidth in the fsbench section:\n%s", out)
	}
	t.Logf("fsbench section, best write rate %.1f MiB/s", best/(1<<20))
}

// TestStatsMetricsURLCredentials: the user name and password of a
// --metrics URL (basic authentication) appear in no message: not when the
// endpoint answers 404, nor when it is unreachable, nor in the warning
// about a --metric it does not export, nor in a refused URL.
func TestStatsMetricsURLCredentials(t *testing.T) {
	t.Setenv(live.DirEnv, t.TempDir())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "up 1")
	}))
	t.Cleanup(srv.Close)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	withUser := func(base, path string) string {
		return strings.Replace(base, "://", "://metricsuser:hunter2secret@", 1) + path + "?format=text&access_token=querysecret9"
	}
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--metrics-url", withUser(srv.URL, "/nothing")}, ExitRuntime, "404"},
		{[]string{"--metrics-url", withUser(closed.URL, "/metrics")}, ExitRuntime, "connection refused"},
		{[]string{"--metrics-url", withUser(srv.URL, "/metrics"), "--metric", "no_such_metric"}, ExitOK, "not (yet) exported by"},
		{[]string{"--metrics-url", withUser("ftp://h", "/metrics")}, ExitUsage, "want an http:// or https:// URL"},
	} {
		app, out, errb := statsApp()
		code := Run(context.Background(), app, append([]string{"stats", dir, "--count", "1", "--interval", "100ms", "-o", "json"}, c.args...))
		if code != c.code || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d and %q", c.args, code, errb.String(), c.code, c.want)
		}
		for _, secret := range []string{"metricsuser", "hunter2secret", "querysecret9"} {
			if strings.Contains(errb.String()+out.String(), secret) {
				t.Errorf("%q: %q shown: stderr %q, stdout %q", c.args, secret, errb.String(), out.String())
			}
		}
	}
}
