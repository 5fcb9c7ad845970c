package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/profile"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
)

var updateProfile = flag.Bool("update-profile", false, "rewrite testdata/profile/cli-*.txt")

var profileSample = filepath.Join("..", "..", "testdata", "juicefs", "accesslog-sample.txt")

// parseProfile runs the profile command's flag handling and captures the
// options.
func parseProfile(t *testing.T, tty bool, args ...string) (*ProfileOptions, int, string) {
	t.Helper()
	app, _, errb := testApp(nil)
	app.IO.OutTTY = tty
	var got *ProfileOptions
	code, msg := runParse(app, errb, newProfileCmdWith(app, func(_ context.Context, o *ProfileOptions) error { got = o; return nil }), args)
	return got, code, msg
}

func TestProfileFlags(t *testing.T) {
	o, code, msg := parseProfile(t, false, "x.log")
	if code != 0 {
		t.Fatalf("defaults: exit %d: %s", code, msg)
	}
	if o.Interval != 2*time.Second || o.Sort != profile.SortTotal || o.Top != 0 || o.JSON || o.Terminal || o.Speed != 0 || o.Follow || o.Target != "x.log" {
		t.Errorf("defaults = %+v", o)
	}
	o, _, _ = parseProfile(t, true, "x.log")
	if !o.Terminal || o.Speed != 1 {
		t.Errorf("on a terminal: terminal %v, speed %v; want true, 1", o.Terminal, o.Speed)
	}
	o, code, msg = parseProfile(t, true, "-", "--interval", "500ms", "--uid", "0, 1000", "--gid", "7", "--pid", "1,2,3",
		"--op", "read,Write", "--path", "big", "--sort", "p99", "--top", "3", "--json", "--speed", "4", "-f")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	f := o.Filter
	if o.Interval != 500*time.Millisecond || fmt.Sprint(f.UIDs, f.GIDs, f.PIDs, f.Ops) != "[0 1000] [7] [1 2 3] [read write]" || f.Path != "big" ||
		o.Sort != "p99" || o.Top != 3 || !o.JSON || o.Terminal || o.Speed != 4 || !o.Follow {
		t.Errorf("options = %+v", o)
	}
	for _, args := range [][]string{
		{},
		{"a", "b"},
		{"x", "--interval", "-1"},
		{"x", "--interval", "100us"},
		{"x", "--interval", "NaN"},
		{"x", "--uid", "root"},
		{"x", "--pid", "1,,2"},
		{"x", "--gid", "4294967296"},
		{"x", "--op", "read,"},
		{"x", "--sort", "name"},
		{"x", "--top", "-1"},
		{"x", "-o", "csv"},
		{"x", "--json", "-o", "csv"},
		{"x", "--speed", "-2"},
		{"x", "--follow", "--interval", "0"},
	} {
		if _, code, msg := parseProfile(t, false, args...); code != ExitUsage {
			t.Errorf("%q: exit %d (%s), want %d", args, code, msg, ExitUsage)
		}
	}
}

// runProfileCmd runs `fsbench profile args...` in-process.
func runProfileCmd(t *testing.T, stdin io.Reader, args ...string) (string, string, int) {
	t.Helper()
	app, out, errb := testApp(nil)
	if stdin != nil {
		app.IO.In = stdin
	}
	code := Run(context.Background(), app, append([]string{"profile"}, args...))
	return out.String(), errb.String(), code
}

func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "profile", name)
	if *updateProfile {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update-profile writes it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update-profile rewrites it):\n--- got\n%s--- want\n%s", path, got, want)
	}
}

// TestProfileSummary is `fsbench profile LOGFILE --interval 0` on the
// sample, as a file, gzipped, and on stdin.
func TestProfileSummary(t *testing.T) {
	out, errs, code := runProfileCmd(t, nil, profileSample, "--interval", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "\x1b") {
		t.Error("escape sequences in output to a non-terminal")
	}
	checkGolden(t, "cli-summary.txt", out)

	data, err := os.ReadFile(profileSample)
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(t.TempDir(), "access.log.gz")
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	if err := os.WriteFile(gz, z.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	gout, errs, code := runProfileCmd(t, nil, gz, "--interval", "0")
	if code != 0 || strings.Replace(gout, gz, profileSample, 1) != out {
		t.Errorf("gzip: exit %d (%s):\n%s", code, errs, gout)
	}
	sout, errs, code := runProfileCmd(t, bytes.NewReader(z.Bytes()), "-", "--interval", "0")
	if code != 0 || strings.Replace(sout, "stdin", profileSample, 1) != out {
		t.Errorf("stdin: exit %d (%s):\n%s", code, errs, sout)
	}
}

func TestProfileJSONFilters(t *testing.T) {
	out, errs, code := runProfileCmd(t, nil, profileSample, "--interval", "0", "-o", "json", "--op", "write,unlink,create", "--pid", "22645", "--sort", "count", "--top", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var w profile.Window
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if w.Mode != profile.ModeSummary || len(w.Operations) != 2 || w.Operations[0].Op != "write" || w.Operations[0].Count < w.Operations[1].Count {
		t.Errorf("window = %+v", w)
	}
	// Replay in 2-second windows: one JSON object per line.
	out, _, code = runProfileCmd(t, nil, profileSample, "--json")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) < 2 {
		t.Fatalf("exit %d, %d lines", code, len(lines))
	}
	var n int64
	for _, l := range lines {
		var w profile.Window
		if err := json.Unmarshal([]byte(l), &w); err != nil {
			t.Fatal(err)
		}
		n += w.Entries
	}
	if n != 550 {
		t.Errorf("windows hold %d entries, want 550", n)
	}
}

// A mistake in the input is a usage error (the cases are profile.Open's).
func TestProfileInputErrors(t *testing.T) {
	dir := t.TempDir()
	if _, errs, code := runProfileCmd(t, nil, filepath.Join(dir, "missing.log")); code != ExitUsage || !strings.Contains(errs, "no such file") {
		t.Errorf("missing log: exit %d, %q; want %d", code, errs, ExitUsage)
	}
	// A recording of another kind: strace's (replay reads it, profile does not).
	strace := filepath.Join("..", "replay", "testdata", "strace-tar.log")
	_, errs, code := runProfileCmd(t, nil, strace)
	if code != ExitUsage || !strings.Contains(errs, "is an access-log entry") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("strace log: exit %d, %q; want %d and one line", code, errs, ExitUsage)
	}
	// A compressed log cut short: its reader's fault is the log's, as a
	// missing one's.
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(bytes.Repeat([]byte("2026.11.28 10:00:00.000001 [uid:0,gid:0,pid:1] getattr (1): OK <0.000010>\n"), 2000)); err != nil || zw.Close() != nil {
		t.Fatal("gzip")
	}
	cut := filepath.Join(dir, "cut.log.gz")
	if err := os.WriteFile(cut, gz.Bytes()[:gz.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, errs, code = runProfileCmd(t, nil, cut)
	if code != ExitUsage || !strings.Contains(errs, "cut short or damaged") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("truncated gzip log: exit %d, %q; want %d and one line", code, errs, ExitUsage)
	}
	// A directory that is not a JuiceFS mount: one line, with the hint.
	_, errs, code = runProfileCmd(t, nil, dir, "--interval", "1s")
	if code != ExitUsage || !strings.Contains(errs, "not a JuiceFS mount point; to profile any file system") || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
		t.Errorf("plain directory: exit %d, %q; want %d and one line", code, errs, ExitUsage)
	}
	// A log the user may not read is a bad input too, as a missing one.
	bin, base := asNobody(t)
	closed := filepath.Join(base, "closed.log")
	if err := os.WriteFile(closed, []byte("x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	errs, code = runNobody(t, bin, "profile", closed, "--interval", "0")
	if code != ExitUsage {
		t.Errorf("unreadable log: exit %d, want %d", code, ExitUsage)
	}
	oneLine(t, "unreadable log", errs, "open log: open "+closed+": permission denied")
}

// TestProfileMountPoint profiles a directory that mountinfo says is a
// JuiceFS mount: its .accesslog is read live. The stand-in is a plain file,
// whose end ends the run.
func TestProfileMountPoint(t *testing.T) {
	mnt := t.TempDir()
	data, err := os.ReadFile(profileSample)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, ".accesslog"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	proc := t.TempDir()
	os.MkdirAll(filepath.Join(proc, "self"), 0o755)
	real, _ := filepath.EvalSymlinks(mnt)
	info := fmt.Sprintf("1 0 8:1 / / rw - ext4 /dev/sda1 rw\n50 1 0:50 / %s rw,relatime - fuse.juicefs JuiceFS:test rw,user_id=0\n", real)
	os.WriteFile(filepath.Join(proc, "self", "mountinfo"), []byte(info), 0o644)
	old := sysio.ProcRoot
	sysio.ProcRoot = proc
	defer func() { sysio.ProcRoot = old }()

	out, errs, code := runProfileCmd(t, nil, mnt, "--interval", "60s", "-o", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var w profile.Window
	if err := json.Unmarshal([]byte(out), &w); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if w.Mode != profile.ModeLive || w.Entries != 550 || w.Source != filepath.Join(real, ".accesslog") {
		t.Errorf("window = %+v", w)
	}
	if _, errs, code := runProfileCmd(t, nil, mnt, "--interval", "0"); code != ExitUsage {
		t.Errorf("--interval 0 on a mount: exit %d (%s)", code, errs)
	}
	sub := filepath.Join(mnt, "sub")
	os.Mkdir(sub, 0o755)
	if _, errs, code := runProfileCmd(t, nil, sub); code != ExitUsage || !strings.Contains(errs, "inside the JuiceFS mount") {
		t.Errorf("subdirectory of a mount: exit %d (%s)", code, errs)
	}
}

// TestProfileBinaryFollow appends to a log while `fsbench profile
// --follow` reads it, then stops it with SIGINT: it prints plain blocks
// (stdout is not a terminal), counts what was appended, and exits 130.
func TestProfileBinaryFollow(t *testing.T) {
	data, err := os.ReadFile(profileSample)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	path := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines[:50], "")), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(testenv.Binary(t), "profile", path, "--follow", "--interval", "200ms", "--json")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	windows := make(chan profile.Window, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var w profile.Window
			if json.Unmarshal(sc.Bytes(), &w) == nil {
				windows <- w
			}
		}
		close(windows)
	}()
	timeout := time.After(30 * time.Second)
	next := func() profile.Window {
		select {
		case w, ok := <-windows:
			if !ok {
				t.Fatalf("output ended early; stderr: %s", errb.String())
			}
			return w
		case <-timeout:
			t.Fatal("timed out waiting for a window")
		}
		return profile.Window{}
	}
	next() // it is reading: append 300 lines in three bursts
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		f.WriteString(strings.Join(lines[50+i*100:150+i*100], ""))
		time.Sleep(50 * time.Millisecond)
	}
	f.Close()
	var entries int64
	for entries < 300 {
		w := next()
		if w.Mode != profile.ModeLive {
			t.Fatalf("window %+v", w)
		}
		entries += w.Entries
	}
	if entries != 300 {
		t.Errorf("counted %d entries, want 300", entries)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != ExitInterrupted {
		t.Errorf("exit: %v, want %d; stderr: %s", err, ExitInterrupted, errb.String())
	}
	if errb.Len() != 0 {
		t.Errorf("stderr: %s", errb.String())
	}
}

// TestBenchAccessLogProfile runs a small bench with --access-log and checks
// that profile counts exactly the operations the bench performed.
func TestBenchAccessLogProfile(t *testing.T) {
	bin := testenv.Binary(t)
	dir := t.TempDir()
	logf := filepath.Join(t.TempDir(), "bench.log")
	const (
		threads    = 2
		bigSize    = 3 << 20
		blockSize  = 1 << 20
		smallCount = 3
		smallSize  = 1536 << 10 // two blocks each
	)
	cmd := exec.Command(bin, "bench", dir, "-p", fmt.Sprint(threads), "--big-file-size", "3M", "--block-size", "1M",
		"--small-file-count", fmt.Sprint(smallCount), "--small-file-size", "1536K", "--drop-caches", "never", "--access-log", logf, "-q", "--json")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("bench: %v\n%s", err, out)
	}
	out, err := exec.Command(bin, "profile", logf, "--interval", "0", "-o", "json").Output()
	if err != nil {
		t.Fatalf("profile: %v", err)
	}
	var w profile.Window
	if err := json.Unmarshal(out, &w); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	blocks := func(size int64) int64 { return (size + blockSize - 1) / blockSize }
	files := int64(threads + threads*smallCount)
	io := threads*blocks(bigSize) + threads*smallCount*blocks(smallSize)
	want := map[string]int64{
		"create": files, "write": io, "open": files, "read": io, "close": 2 * files,
		"stat": threads * smallCount, "unlink": files, "mkdir": 1, "rmdir": 1,
	}
	got := map[string]int64{}
	for _, s := range w.Operations {
		got[s.Op] = s.Count
		if s.Errors != 0 {
			t.Errorf("%s: %d errors", s.Op, s.Errors)
		}
	}
	for op, n := range want {
		if got[op] != n {
			t.Errorf("%s: profile counts %d, the bench performed %d", op, got[op], n)
		}
	}
	if len(got) != len(want) || w.Skipped.Total() != 0 {
		t.Errorf("operations %v, skipped %+v", got, w.Skipped)
	}
}

// TestProfileTerminalPause replays on a "terminal": each window clears the
// screen, and Enter on standard input pauses and resumes. With standard
// input not a terminal, Enter does nothing.
func TestProfileTerminalPause(t *testing.T) {
	for _, inTTY := range []bool{true, false} {
		app, _, errb := testApp(map[string]string{"TERM": "xterm"})
		var out testenv.LockedBuffer
		pr, pw := io.Pipe()
		app.IO.In, app.IO.Out, app.IO.OutTTY, app.IO.InTTY = pr, &out, true, inTTY
		done := make(chan int, 1)
		go func() {
			done <- Run(context.Background(), app, []string{"profile", profileSample, "--interval", "1s", "--speed", "20"})
		}()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(out.String(), "\x1b[H\x1b[2J") && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		go pw.Write([]byte("\n"))
		if inTTY {
			for !strings.Contains(out.String(), "Paused") && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if !strings.Contains(out.String(), "Paused") {
				t.Fatal("Enter did not pause the replay")
			}
			go pw.Write([]byte("\n"))
		}
		select {
		case code := <-done:
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
		case <-time.After(30 * time.Second):
			t.Fatal("replay did not end")
		}
		pw.Close()
		s := out.String()
		if strings.Contains(s, "Paused") != inTTY || strings.Contains(s, "[Enter] pause/continue") != inTTY {
			t.Errorf("stdin terminal %v: output:\n%s", inTTY, s)
		}
		if !strings.Contains(s, "\x1b[1;32m") || !strings.Contains(s, "replay, 1 s windows, done") {
			t.Errorf("no colour or no last window:\n%q", s)
		}
	}
}
