package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/replay"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// juiceFSSample is a real JuiceFS access log: juicefs bench on a mount.
var juiceFSSample = filepath.Join("..", "..", "testdata", "juicefs", "accesslog-sample.txt")

func parseReplay(t *testing.T, args ...string) (*ReplayOptions, int, string) {
	t.Helper()
	return parseWith(t, newReplayCmdWith, args)
}

func TestReplayFlags(t *testing.T) {
	dir := t.TempDir()
	o, code, msg := parseReplay(t, juiceFSSample, dir, "--speed", "2", "--keep", "--expect", "replay-write.p99<1s", "--drop-caches", "never")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	if o.Log != juiceFSSample || o.Path != dir || o.Speed != 2 || !o.Keep || len(o.CI.Exprs) != 1 || o.DropCaches != "never" {
		t.Errorf("options = %+v", o)
	}
	if o, _, _ := parseReplay(t, juiceFSSample, dir); o.DropCaches != "auto" {
		t.Errorf("--drop-caches defaults to %q, want auto", o.DropCaches)
	}
}

// TestReplayBadInput: each mistake is a usage error (exit 2) of one line
// that says what is wrong, found before anything is made.
func TestReplayBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{juiceFSSample, dir, "--speed", "-1"}, "--speed -1: want 0"},
		{[]string{juiceFSSample, dir, "--speed", "NaN"}, "--speed NaN"},
		{[]string{juiceFSSample, dir, "--drop-caches", "sometimes"}, `--drop-caches must be auto, always or never (got "sometimes")`},
		{[]string{dir, dir}, "is a directory"},
		{[]string{juiceFSSample, file}, "not a directory"},
		{[]string{juiceFSSample, dir, "--expect", "write-big>1MiB/s"}, `replay measures no metric "write-big"`},
		{[]string{juiceFSSample}, "a LOG to replay and the PATH"},
		{[]string{"-", dir, "--hosts", "127.0.0.1:7781"}, "LOG - (standard input) is for a replay on this host"},
	} {
		_, code, msg := parseReplay(t, tc.args...)
		if code != ExitUsage || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", tc.args, code, msg, tc.want)
		}
	}
	garbage := filepath.Join(dir, "garbage.log")
	os.WriteFile(garbage, []byte("not a log\n\n#\n"), 0o600)
	for _, tc := range []struct{ log, want string }{
		{filepath.Join(dir, "missing.log"), "no such file"},
		{garbage, "holds no operation to replay"},
	} {
		_, stderr, code := runFsbenchEnv(t, nil, "replay", tc.log, dir)
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("replay %s: exit %d, %q; want exit 2 and %q", tc.log, code, stderr, tc.want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 2 {
		t.Errorf("made something in %s: %v", dir, left)
	}
}

// TestReplayStdin: LOG "-" reads the log, gzip-compressed here, from
// standard input, and replays what the same log's file replays.
func TestReplayStdin(t *testing.T) {
	dir := t.TempDir()
	want := replayBinary(t, juiceFSSample, dir)
	data, err := os.ReadFile(juiceFSSample)
	if err != nil {
		t.Fatal(err)
	}
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write(data)
	w.Close()
	cmd := exec.Command(testenv.Binary(t), "replay", "-", dir, "-o", "json")
	cmd.Stdin = &gz
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "from standard input (juicefs log)") {
		t.Errorf("stderr %q does not say where the log came from", stderr.String())
	}
	got, err := report.ReadJSON(bytes.NewReader(out))
	if err != nil || got.Replay == nil || len(got.Replay.Ops) != len(want.Replay.Ops) {
		t.Fatalf("%+v: %v", got, err)
	}
	for i, o := range got.Replay.Ops {
		if w := want.Replay.Ops[i]; o.Op != w.Op || o.Ops != w.Ops || o.Bytes != w.Bytes || o.Failed != w.Failed {
			t.Errorf("%s from standard input: %d ops, %d bytes, %d failed; from the file %d, %d, %d", o.Op, o.Ops, o.Bytes, o.Failed, w.Ops, w.Bytes, w.Failed)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind in %s: %v", dir, left)
	}
	// A terminal on standard input: a clear error, not a wait for typing.
	app, _, _ := testApp(nil)
	app.IO.InTTY = true
	o := &ReplayOptions{Options: replay.Options{Log: "-", Path: dir}}
	if err := runReplay(t.Context(), app, o); ExitCode(err) != ExitUsage || !strings.Contains(err.Error(), "standard input, which is a terminal") {
		t.Errorf("stdin a terminal: %v", err)
	}
}

// TestReplayLoadProgress: the load of a log from loadProgressMin up shows
// its progress before the replay's ("Load: ... MiB"), on a line of its own.
func TestReplayLoadProgress(t *testing.T) {
	defer func(v int64) { loadProgressMin = v }(loadProgressMin)
	loadProgressMin = 0
	app, _, errb := testApp(nil)
	o := &ReplayOptions{Options: replay.Options{Log: juiceFSSample, Path: t.TempDir()}}
	if err := runReplay(t.Context(), app, o); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(errb.String(), "\n")
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "Load: 0/0 MiB in ") || !strings.HasPrefix(lines[1], "Replaying ") {
		t.Errorf("stderr:\n%s", errb.String())
	}
	// A log that fails to load ends its display too.
	bad := filepath.Join(t.TempDir(), "bad.log")
	os.WriteFile(bad, []byte("garbage\n"), 0o600)
	app, _, errb = testApp(nil)
	o = &ReplayOptions{Options: replay.Options{Log: bad, Path: t.TempDir()}}
	if err := runReplay(t.Context(), app, o); err == nil || !strings.HasPrefix(errb.String(), "Load: 0/0 MiB in ") {
		t.Errorf("%v; stderr %q", err, errb.String())
	}
}

// replayBinary replays log in dir with the built binary and checks that
// every type of operation was replayed as recorded: the same count of
// successes and of failures, the same bytes, no outcome that differs,
// and nothing left behind. It returns the result.
func replayBinary(t *testing.T, log, dir string, extra ...string) *report.Result {
	t.Helper()
	resFile := filepath.Join(t.TempDir(), "r.json")
	args := append([]string{"replay", log, dir, "-q", "-o", "json", "--result-file", resFile, "--expect", "errors==0"}, extra...)
	stdout, stderr, code := runFsbenchEnv(t, nil, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	checkSchema(t, "replay result", []byte(stdout))
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil || r.Command != "replay" || r.Replay == nil || len(r.Expectations) != 1 || !r.Expectations[0].Pass {
		t.Fatalf("result %+v: %v", r, err)
	}
	if len(r.Phases) != len(r.Replay.Ops)+1 || r.Phases[0].Name != "replay" || r.Phases[0].Errors != 0 {
		t.Errorf("phases: %+v", r.Phases)
	}
	for i, o := range r.Replay.Ops {
		if o.Ops != o.Recorded.Ops || o.Bytes != o.Recorded.Bytes || o.Failed != o.Recorded.Failed || o.Errors != 0 {
			t.Errorf("%s: replayed %d ops, %d bytes, %d failed, %d differed; recorded %d ops, %d bytes, %d failed",
				o.Op, o.Ops, o.Bytes, o.Failed, o.Errors, o.Recorded.Ops, o.Recorded.Bytes, o.Recorded.Failed)
		}
		if p := r.Phases[i+1]; p.Name != "replay-"+o.Op || p.Ops != o.Ops || p.Bytes != o.Bytes {
			t.Errorf("row %d: %+v, want replay-%s", i+1, p, o.Op)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind in %s: %v", dir, left)
	}
	if stdout, stderr, code := runFsbenchEnv(t, nil, "compare", resFile, resFile); code != 0 || !strings.Contains(stdout, "replay-") {
		t.Errorf("compare: exit %d: %s %s", code, stdout, stderr)
	}
	if _, stderr, code := runFsbenchEnv(t, nil, "report", resFile, "-o", filepath.Join(t.TempDir(), "r.html")); code != 0 {
		t.Errorf("report: exit %d: %s", code, stderr)
	}
	return r
}

// TestReplayJuiceFSLog replays a real JuiceFS log on tmpfs and on a FUSE
// mount (bindfs): per type of operation, the replay does what the log
// recorded, and the table says so beside the recording.
func TestReplayJuiceFSLog(t *testing.T) {
	for _, fs := range []string{"tmpfs", "fuse"} {
		t.Run(fs, func(t *testing.T) {
			var dir string
			if fs == "tmpfs" {
				dir = testenv.Tmpfs(t, "128m")
			} else {
				dir = testenv.Bindfs(t, t.TempDir())
			}
			r := replayBinary(t, juiceFSSample, dir)
			if r.Replay.Format != "juicefs" || r.Replay.Streams != 7 || r.Replay.Virtual == 0 || r.Replay.Speedup <= 0 {
				t.Errorf("replay: %+v", r.Replay)
			}
		})
	}
	dir := t.TempDir()
	stdout, stderr, code := runFsbenchEnv(t, nil, "replay", juiceFSSample, dir, "--speed", "100")
	for _, want := range []string{"  write", "REC P99", "paced at 100x the recorded speed", "on JuiceFS's virtual files", "Made untimed"} {
		if code != 0 || !strings.Contains(stdout, want) && !strings.Contains(strings.ToLower(stdout), want) {
			t.Errorf("table (exit %d) lacks %q:\n%s%s", code, want, stdout, stderr)
		}
	}
}

// TestReplayFSBenchLog records a benchmark with --access-log and replays
// the log elsewhere: every operation the log holds is replayed, with the
// recorded bytes.
func TestReplayFSBenchLog(t *testing.T) {
	log := filepath.Join(t.TempDir(), "bench.log")
	_, stderr, code := runFsbenchEnv(t, nil, "bench", t.TempDir(), "-q", "-p", "2", "--big-file-size", "4M",
		"--small-file-count", "5", "--small-file-size", "64K", "--drop-caches", "never", "--access-log", log)
	if code != 0 {
		t.Fatalf("bench: exit %d: %s", code, stderr)
	}
	r := replayBinary(t, log, t.TempDir())
	want := countOK(t, log)
	got := map[string]int64{}
	for _, o := range r.Replay.Ops {
		got[o.Op] = o.Ops
	}
	for op, n := range want {
		if got[op] != n {
			t.Errorf("%s: replayed %d, the log has %d successful", op, got[op], n)
		}
	}
	if r.Replay.Format != "fsbench" || len(r.Replay.Unsupported) != 0 || got["write"] == 0 || got["read"] == 0 {
		t.Errorf("replay: %+v", r.Replay)
	}
}

// countOK counts the successful operations of an access log per type.
func countOK(t *testing.T, path string) map[string]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if fields := strings.Fields(sc.Text()); len(fields) > 4 && strings.Contains(sc.Text(), " - OK ") {
			n[fields[3]]++
		}
	}
	return n
}

// TestReplayInterrupt: Ctrl-C while a paced replay runs stops it: exit
// 130, the result so far with the replay incomplete, and nothing left but
// the user's file, untouched.
func TestReplayInterrupt(t *testing.T) {
	dir := t.TempDir()
	check := plant(t, dir)
	b := &benchRun{t: t, dir: dir}
	cmd := exec.Command(testenv.Binary(t), "replay", juiceFSSample, dir, "--speed", "1", "--json")
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	b.Process = testenv.StartProcess(t, cmd)
	// The recording's mkdir comes a second into it: the replay is running.
	b.Await("the replay's mkdir", 2*time.Minute, func() bool {
		run := b.runDir()
		if run == "" {
			return false
		}
		m, _ := filepath.Glob(filepath.Join(run, "__juicefs_benchmark_*"))
		return len(m) > 0
	})
	b.Signal(syscall.SIGINT)
	code, _ := b.Wait(2 * time.Minute)
	r := b.result()
	if code != ExitInterrupted || !r.Interrupted || len(r.Phases) == 0 || !r.Phases[0].Incomplete || r.Replay == nil {
		t.Fatalf("exit %d, interrupted %v, phases %+v; want 130 and an incomplete replay\n%s", code, r.Interrupted, r.Phases, b.Stderr())
	}
	check()
}

// TestReplayLogsUsage: several logs go with --hosts, one per host, and a
// log split across hosts needs a recorded process for each; each mistake
// is a one-line usage error before anything runs.
func TestReplayLogsUsage(t *testing.T) {
	one := filepath.Join(t.TempDir(), "one.log")
	if err := os.WriteFile(one, []byte("2026.11.21 21:00:00.000001 [uid:0,gid:0,pid:7] stat (/a) - OK <0.000010>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		want string
	}{
		{[]string{juiceFSSample, juiceFSSample, t.TempDir()}, "2 logs: give one LOG, or one LOG per host with --hosts"},
		{[]string{juiceFSSample, juiceFSSample, t.TempDir(), "--hosts", "127.0.0.1:1,127.0.0.1:2,127.0.0.1:3"}, "2 logs for 3 hosts"},
		{[]string{one, t.TempDir(), "--hosts", "127.0.0.1:1,127.0.0.1:2"}, "has 1 recorded processes or threads, fewer than the 2 hosts"},
		{[]string{juiceFSSample, t.TempDir(), "--hosts", "127.0.0.1:1,127.0.0.1:2", "--read-others"}, "--read-others applies to bench"},
	}
	for _, c := range cases {
		_, stderr, code := runFsbench(t, append([]string{"replay"}, c.args...)...)
		if code != 2 || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d: %q, want %q", c.args, code, stderr, c.want)
		}
	}
}
