package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
)

func testApp(env map[string]string) (*App, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return &App{IO: IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(k string) string { return env[k] }}}, &out, &errb
}

// runParse runs cmd (a command built with a runF that captures its
// options) in place of the command of the same name, and returns the exit
// code and the error message.
func runParse(app *App, errb *bytes.Buffer, cmd *cobra.Command, args []string) (int, string) {
	root := NewRoot(app)
	for _, c := range root.Commands() {
		if c.Name() == cmd.Name() {
			root.RemoveCommand(c)
		}
	}
	root.AddCommand(cmd)
	_, err := execute(context.Background(), root, append([]string{cmd.Name()}, args...))
	if err != nil {
		errb.WriteString(err.Error())
	}
	return ExitCode(err), errb.String()
}

// parseWith runs the flag handling of the command newCmd builds, in place
// of the command of its name, and captures its options.
func parseWith[O any](t *testing.T, newCmd func(*App, func(context.Context, O) error) *cobra.Command, args []string) (O, int, string) {
	t.Helper()
	app, _, errb := testApp(nil)
	var got O
	code, msg := runParse(app, errb, newCmd(app, func(_ context.Context, o O) error { got = o; return nil }), args)
	return got, code, msg
}

// parseBench runs the bench command's flag handling and captures the options.
func parseBench(t *testing.T, env map[string]string, args ...string) (*BenchOptions, int, string) {
	t.Helper()
	app, _, errb := testApp(env)
	var got *BenchOptions
	code, msg := runParse(app, errb, newBenchCmdWith(app, func(_ context.Context, o *BenchOptions) error { got = o; return nil }), args)
	return got, code, msg
}

func TestBenchFlags(t *testing.T) {
	o, code, msg := parseBench(t, nil, "/mnt/jfs")
	if code != 0 {
		t.Fatalf("defaults: exit %d: %s", code, msg)
	}
	if o.BlockSize != units.MiB || o.BigFileSize != units.GiB || o.SmallFileSize != 128*units.KiB || o.SmallFileCount != 100 || o.Threads != 1 || o.DropCaches != "auto" || o.Output.Format != report.FormatTable {
		t.Errorf("defaults = %+v", o.Options)
	}
	o, code, _ = parseBench(t, map[string]string{"SKIP_DROP_CACHES": "true"}, "/x", "-p", "4", "--block-size", "4MiB", "--big-file-size", "0",
		"--small-file-size", "4K", "--small-file-count", "7", "--direct", "--fsync", "--verify", "--keep", "--json", "--drop-caches", "never")
	if code != 0 || o.Threads != 4 || o.BlockSize != 4*units.MiB || o.BigFileSize != 0 || o.SmallFileSize != 4096 || o.SmallFileCount != 7 ||
		!o.Direct || !o.Fsync || !o.Verify || !o.Keep || o.Output.Format != report.FormatJSON || o.DropCaches != "never" || !o.SkipDropCaches {
		t.Errorf("parsed = %+v (exit %d)", o, code)
	}
	for _, bad := range [][]string{
		{"/x", "-p", "0"}, {"/x", "--block-size", "1X"}, {"/x", "--big-file-size", "-1G"}, {"/x", "--small-file-count", "-3"},
		{"/x", "-o", "yaml"}, {"/x", "--json", "-o", "csv"}, {}, {"/x", "/y"}, {"/x", "--no-such-flag"}, {"/x", "-p", "many"},
		{"/x", "--drop-caches", "maybe"}, {"/x", "--big-file-size", "0", "--small-file-count", "0"},
	} {
		_, code, msg := parseBench(t, nil, bad...)
		if code != ExitUsage || msg == "" || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, message %q; want exit 2 with a one-line message", bad, code, msg)
		}
	}
}

func TestExitCodeMapping(t *testing.T) {
	cases := map[error]int{
		nil:                                  0,
		errors.New("disk on fire"):           1,
		Usagef("bad"):                        2,
		ErrExpectation:                       3,
		context.Canceled:                     130,
		ErrInterrupted:                       130,
		&UsageError{Err: errors.New("wrap")}: 2,
	}
	for err, want := range cases {
		if got := ExitCode(err); got != want {
			t.Errorf("ExitCode(%v) = %d, want %d", err, got, want)
		}
	}
}

func TestRootCommands(t *testing.T) {
	app, out, _ := testApp(nil)
	if code := Run(context.Background(), app, []string{"--version"}); code != 0 || !strings.HasPrefix(out.String(), "fsbench ") {
		t.Errorf("--version: %d %q", code, out.String())
	}
	for _, sh := range []string{"bash", "zsh", "fish"} {
		app, out, _ := testApp(nil)
		if code := Run(context.Background(), app, []string{"completion", sh}); code != 0 || !strings.Contains(out.String(), "fsbench") {
			t.Errorf("completion %s: exit %d", sh, code)
		}
	}
	app, out, _ = testApp(nil)
	if code := Run(context.Background(), app, []string{"help"}); code != 0 || !strings.Contains(out.String(), "130") || !strings.Contains(out.String(), "bench") {
		t.Errorf("help: exit %d: %s", code, out.String())
	}
	app, _, errb := testApp(nil)
	if code := Run(context.Background(), app, []string{"frobnicate"}); code != ExitUsage || !strings.Contains(errb.String(), "unknown command") {
		t.Errorf("unknown command: exit %d: %s", code, errb.String())
	}
}

func TestColorRules(t *testing.T) {
	app, _, _ := testApp(nil)
	if !app.Color(true) || app.Color(false) {
		t.Error("colour should follow the terminal")
	}
	app.Globals.NoColor = true
	if app.Color(true) {
		t.Error("--no-color ignored")
	}
	app, _, _ = testApp(map[string]string{"NO_COLOR": "1"})
	if app.Color(true) {
		t.Error("NO_COLOR ignored")
	}
}

func TestBenchBinaryJSONAndPlainProgress(t *testing.T) {
	dir := t.TempDir()
	resFile := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := runFsbenchEnv(t, nil, "bench", dir, "-p", "2", "--big-file-size", "4M", "--small-file-count", "10", "--json", "--result-file", resFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v\n%s", err, stdout)
	}
	if len(r.Phases) != 5 || r.Command != "bench" || r.Target.FSType == "" || r.CacheDrop == "" || r.Usage.PeakRSSBytes == 0 {
		t.Errorf("result = %+v", r)
	}
	saved, _ := os.ReadFile(resFile)
	if _, err := report.ReadJSON(bytes.NewReader(saved)); err != nil {
		t.Errorf("result file: %v", err)
	}
	if strings.ContainsAny(stderr, "\r\x1b") {
		t.Errorf("stderr is not a terminal but has control characters: %q", stderr)
	}
	for _, title := range []string{"Write big file: 8/8 blocks", "Read big file: 8/8 blocks", "Write small file: 20/20 files", "Stat file: 20/20 files"} {
		if !strings.Contains(stderr, title) {
			t.Errorf("stderr lacks %q:\n%s", title, stderr)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}

	stdout, _, code = runFsbenchEnv(t, []string{"NO_COLOR="}, "bench", dir, "--big-file-size", "1M", "--small-file-count", "2", "-q")
	if code != 0 || !strings.Contains(stdout, "Benchmark finished!") || !strings.Contains(stdout, " Write big file |") || strings.Contains(stdout, "\x1b") {
		t.Errorf("table output (exit %d):\n%s", code, stdout)
	}
}

// The memory of 256 threads writing, reading and statting 4 KiB files
// (25,600 of them) on a tmpfs: benchmarks/records/engine-memory.md has the figures. What
// fsbench's code decides is the Go heap, read from the runtime's own GC
// trace (GODEBUG=gctrace=1): its live part peaks at 8-9 MiB, and at 21-22
// MiB when every worker held a full latency histogram. The peak RSS adds
// what the machine decides: the binary's pages mapped in and a thread's
// stacks for each system call the kernel kept waiting: 39-43 MiB on one
// 2-core VM and 53-54 MiB on another with the same build, so it only has a
// ceiling for gross growth. Noise only ever adds, so the least of up to
// three runs is the figure compared.
func TestBenchPeakMemory(t *testing.T) {
	const liveLimit, rssLimit = 16 * units.MiB, 64 * units.MiB
	dir := testenv.Tmpfs(t, "256m")
	var runs []string
	for range 3 {
		live, rss := benchPeakMemory(t, dir)
		runs = append(runs, fmt.Sprintf("live heap %d MiB, RSS %.1f MiB", live/units.MiB, float64(rss)/float64(units.MiB)))
		if live <= liveLimit && rss <= rssLimit {
			t.Log(strings.Join(runs, "; "))
			return
		}
	}
	t.Errorf("three runs: %s; want one with a live heap of at most %d MiB and a peak RSS of at most %d MiB",
		strings.Join(runs, "; "), liveLimit/units.MiB, rssLimit/units.MiB)
}

// gcTraceLive matches a line of the runtime's GC trace and captures the
// live heap, the last of its three sizes ("gc 8 @0.375s 1%: ...,
// 14->15->9 MB, 16 MB goal, ...": at the cycle's start, its end, live).
var gcTraceLive = regexp.MustCompile(`^gc \d+ @.* \d+->\d+->(\d+) MB`)

// benchPeakMemory runs bench -p 256 on 4 KiB files in dir with the GC
// trace on and returns the largest live heap of its collections and the
// peak RSS the result reports.
func benchPeakMemory(t *testing.T, dir string) (live, rss int64) {
	t.Helper()
	stdout, stderr, code := runFsbenchEnv(t, []string{"GODEBUG=gctrace=1"}, "bench", dir, "-p", "256", "--big-file-size", "0",
		"--small-file-size", "4K", "--drop-caches", "never", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("stdout is not a result: %v", err)
	}
	if len(r.Phases) != 3 || r.Phases[0].Items != 25600 || r.Usage.PeakRSSBytes <= 0 {
		t.Fatalf("phases %+v, usage %+v; want three of 25600 files and a peak RSS", r.Phases, r.Usage)
	}
	cycles := 0
	for _, line := range strings.Split(stderr, "\n") {
		m := gcTraceLive.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		cycles++
		mb, _ := strconv.ParseInt(m[1], 10, 64) // digits, by the pattern
		live = max(live, mb*units.MiB)
	}
	if cycles == 0 {
		t.Fatalf("no GC trace on stderr:\n%s", stderr)
	}
	return live, r.Usage.PeakRSSBytes
}

func TestBenchBinaryErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"bench", filepath.Join(dir, "missing")}, 2, "no such file or directory"},
		{[]string{"bench", dir, "--block-size", "lots"}, 2, "--block-size"},
		{[]string{"bench", dir, "-p", "0"}, 2, "--threads"},
		{[]string{"bench"}, 2, "PATH"},
	} {
		_, stderr, code := runFsbenchEnv(t, nil, tc.args...)
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != tc.code || !strings.Contains(stderr, tc.want) || !strings.HasPrefix(lines[len(lines)-1], "Run ") && len(lines) > 2 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr, tc.code, tc.want)
		}
		if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
			t.Errorf("%v panicked: %s", tc.args, stderr)
		}
	}
}

// TestBenchBinarySIGINT interrupts the big-file write: exit 130, partial
// results printed, our directory gone, the file that was there untouched.
func TestBenchBinarySIGINT(t *testing.T) {
	dir := t.TempDir()
	precious := filepath.Join(dir, "keep.me")
	os.WriteFile(precious, []byte("precious"), 0o600)
	cmd := exec.Command(testenv.Binary(t), "bench", dir, "--big-file-size", bigButFits(t, dir, 2), "-p", "2")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	interruptWhen(t, cmd, func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "fsbench-*", "big.*"))
		if len(m) == 0 {
			return false
		}
		st, err := os.Stat(m[0])
		return err == nil && st.Size() > 0
	})
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d, want 130; stderr: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "interrupted") || !strings.Contains(out.String(), "Write big file (incomplete)") {
		t.Errorf("partial results not printed:\n%s", out.String())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "keep.me" {
		t.Errorf("directory after interrupt: %v", entries)
	}
	if b, _ := os.ReadFile(precious); string(b) != "precious" {
		t.Errorf("pre-existing file changed: %q", b)
	}
}

func TestResultJSONIsValid(t *testing.T) {
	var r report.Result
	stdout, _, code := runFsbenchEnv(t, nil, "bench", t.TempDir(), "--big-file-size", "0", "--small-file-count", "3", "-o", "json")
	if code != 0 || json.Unmarshal([]byte(stdout), &r) != nil || len(r.Phases) != 3 {
		t.Fatalf("exit %d, phases %d:\n%s", code, len(r.Phases), stdout)
	}
	stdout, _, code = runFsbenchEnv(t, nil, "bench", t.TempDir(), "--big-file-size", "0", "--small-file-count", "3", "-o", "csv")
	if code != 0 || !strings.HasPrefix(stdout, "name,title,ops") || strings.Count(stdout, "\n") != 4 {
		t.Errorf("csv (exit %d):\n%s", code, stdout)
	}
}

// TestBenchBinaryFailureResult: a run that fills its file system fails
// with one line saying the disk is full and naming the phase and path,
// exits 1, still writes its JSON result with the error and the partial
// phase, removes its own directory and leaves the user's file as it was.
// The same for a workload and for JUnit output. The file system is a
// tmpfs out of inodes once the run's directory is made: its bytes pass
// the check of the free space, its files are refused.
func TestBenchBinaryFailureResult(t *testing.T) {
	dir := testenv.MountFS(t, "tmpfs", "size=64m,nr_inodes=3") // its root, the user's file, the run's directory
	check := plant(t, dir)
	resFile := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := runFsbenchEnv(t, nil, "bench", dir, "--big-file-size", "16M", "--json", "--result-file", resFile, "-q")
	if code != 1 || !regexp.MustCompile(`^fsbench: Write big file: create `+regexp.QuoteMeta(dir)+`/fsbench-[^/]+/big\.0: no space left on device\n$`).MatchString(stderr) {
		t.Fatalf("exit %d, stderr %q; want 1 and one line: no space left", code, stderr)
	}
	for _, data := range []string{stdout, mustRead(t, resFile)} {
		r, err := report.ReadJSON(strings.NewReader(data))
		if err != nil {
			t.Fatalf("no result: %v\n%s", err, data)
		}
		if !strings.Contains(r.Error, "no space left") || len(r.Phases) != 1 || !r.Phases[0].Incomplete || r.Phases[0].Errors == 0 {
			t.Errorf("result = error %q, phases %+v", r.Error, r.Phases)
		}
	}
	check()
	stdout, stderr, code = runFsbenchEnv(t, nil, "bench", dir, "--rw", "write", "--file-size", "16M", "-o", "junit", "-q")
	if code != 1 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "no space left on device") ||
		!strings.Contains(stdout, `type="error"`) || !strings.Contains(stdout, "no space left") {
		t.Errorf("workload on a full disk, JUnit (exit %d):\n%s\n%s", code, stdout, stderr)
	}
	check()
}

// bigButFits is a --big-file-size for threads that the test interrupts
// long before it is written: as large as bench's check of the free space
// of dir lets it be (half of it), at most 64 GiB.
func bigButFits(t *testing.T, dir string, threads int) string {
	t.Helper()
	free, err := sysio.FreeBytes(dir)
	if err != nil {
		t.Fatal(err)
	}
	return strconv.FormatInt(min(64*units.GiB, free/2/int64(threads))/units.MiB, 10) + "M"
}

// TestBenchRefusesWhatDoesNotFit: a run whose files would not fit in the
// free space of PATH (an 8 MiB tmpfs) is refused before its banner and
// before anything is written, with one line and exit 2: big files of
// every thread, many small files, a workload's files and its tree. A run
// that fits runs.
func TestBenchRefusesWhatDoesNotFit(t *testing.T) {
	dir := testenv.Tmpfs(t, "8m")
	tree := filepath.Join(t.TempDir(), "tree.yaml")
	if err := os.WriteFile(tree, []byte("tree: {depth: 1, width: 4, files: 10, file_size: 1M}\nphases:\n  - {name: r, op: read}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--big-file-size", "100G"},
		{"--big-file-size", "3M", "-p", "3"},
		{"--big-file-size", "0", "--small-file-count", "3000", "--small-file-size", "1K"},
		{"--rw", "write", "--file-size", "16M"},
		{"--rw", "read", "--file-size", "1M", "--files", "3", "-p", "3"},
		{"-f", tree},
	} {
		_, stderr, code := runFsbench(t, append([]string{"bench", dir}, args...)...)
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "fsbench: the ") ||
			!strings.Contains(stderr, " and "+dir+" has 8 MiB free; give ") {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line naming the space needed and free", args, code, stderr)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Fatalf("%v: %s holds %v after the refusal", args, dir, ents)
		}
	}
	if _, stderr, code := runFsbench(t, "bench", dir, "--big-file-size", "2M", "--small-file-count", "10", "-p", "2", "-q"); code != ExitOK {
		t.Errorf("a run that fits: exit %d, %s", code, stderr)
	}
}

// interruptWhen starts cmd, waits (30 s at most) until ready reports true,
// sends SIGINT and waits (a minute at most) for cmd to end.
func interruptWhen(t *testing.T, cmd *exec.Cmd, ready func() bool) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !ready() {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%v: never ready to be interrupted", cmd.Args)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("%v did not stop within a minute of SIGINT", cmd.Args)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
