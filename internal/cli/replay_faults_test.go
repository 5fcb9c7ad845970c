package cli

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/signals"
	"github.com/fsbench/fsbench/internal/testenv"
)

// fsbLine is a line of fsbench's access log, at microsecond us.
func fsbLine(us int, op string) string {
	return fmt.Sprintf("2026.11.26 18:38:51.%06d [uid:0,gid:0,pid:7] %s <0.000010>\n", us, op)
}

// writeLog writes lines to a log file of the test's.
func writeLog(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "replay.log")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestReplayBinaryWritesFail: a log that writes 8 MiB replayed on a 2 MiB
// tmpfs: the writes that fail here (they succeeded where recorded) are
// the run's error, named on stderr once with their count, exit 1; with
// --allow-differences, exit 0 and the same counts in the JSON.
func TestReplayBinaryWritesFail(t *testing.T) {
	dir := testenv.Tmpfs(t, "2m")
	lines := []string{fsbLine(1, "create (/f) - OK")}
	for i := range 64 {
		lines = append(lines, fsbLine(2+i, fmt.Sprintf("write (/f,131072,%d): 131072 - OK", i*131072)))
	}
	lines = append(lines, fsbLine(100, "close (/f) - OK"))
	log := writeLog(t, lines...)
	_, stderr, code := runFsbench(t, "replay", log, dir, "--drop-caches", "never")
	if code != ExitRuntime || strings.Count(stderr, "no space left on device") != 1 ||
		!strings.Contains(stderr, "write: no space left on device, recorded as succeeded: ") {
		t.Fatalf("exit %d, want 1 with one line naming ENOSPC and its count; stderr:\n%s", code, stderr)
	}
	out, stderr, code := runFsbench(t, "replay", log, dir, "--drop-caches", "never", "--allow-differences", "-o", "json")
	if code != ExitOK {
		t.Fatalf("--allow-differences: exit %d; stderr:\n%s", code, stderr)
	}
	var res report.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if res.Replay == nil || len(res.Replay.Differed) != 1 || res.Replay.Differed[0].Count < 40 {
		t.Fatalf("differed: %+v", res.Replay)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left in PATH: %v", ents)
	}
}

// TestReplayBinaryHugeFile: a log that reads at 1 TiB - 4 KiB of a file
// it did not create needs a 1 TiB file made first: refused before
// anything is written on a 16 MiB tmpfs, exit 2, nothing left.
func TestReplayBinaryHugeFile(t *testing.T) {
	dir := testenv.Tmpfs(t, "16m")
	log := writeLog(t,
		fsbLine(1, "open (/big) - OK"),
		fsbLine(2, fmt.Sprintf("read (/big,4096,%d): 4096 - OK", 1<<40-4096)),
		fsbLine(3, "close (/big) - OK"))
	_, stderr, code := runFsbench(t, "replay", log, dir, "--drop-caches", "never")
	if code != ExitUsage || !strings.Contains(stderr, "free") || !strings.Contains(stderr, "1 TiB") {
		t.Fatalf("exit %d, want 2 naming the space needed; stderr:\n%s", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left in PATH: %v", ents)
	}
}

// TestReplayBinaryUnboundedLogs: /dev/zero (one endless line) and a gzip
// of 256 MiB of newlines are refused or read in bounded memory: exit 2
// with a line naming the limit, or what the log lacks.
func TestReplayBinaryUnboundedLogs(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(testenv.Binary(t), "replay", "/dev/zero", dir)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	if code := cmd.ProcessState.ExitCode(); code != ExitUsage || !strings.Contains(errb.String(), "--max-line-size") {
		t.Fatalf("/dev/zero: exit %d (%v), want 2 naming --max-line-size; stderr:\n%s", code, err, errb.String())
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	nl := bytes.Repeat([]byte{'\n'}, 1<<20)
	for range 256 {
		zw.Write(nl)
	}
	zw.Write([]byte(fsbLine(1, "mkdir (/d) - OK")))
	zw.Close()
	bomb := filepath.Join(t.TempDir(), "bomb.log.gz")
	if err := os.WriteFile(bomb, gz.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// The run's own peak memory, from its result: the kernel's maxrss of
	// a child started by vfork holds this test binary's memory as well.
	out, stderr, code := runFsbench(t, "replay", bomb, dir, "-o", "json")
	var res report.Result
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
		t.Fatalf("newline bomb: exit %d; stderr:\n%s", code, stderr)
	}
	if rss := res.Usage.PeakRSSBytes; rss > 200<<20 {
		t.Errorf("newline bomb: peak RSS %d KiB: the blank lines were kept", rss>>10)
	}
	var lines []string
	for i := range 100 {
		lines = append(lines, fsbLine(i, fmt.Sprintf("mkdir (/d%d) - OK", i)))
	}
	big := writeLog(t, lines...)
	_, stderr, code = runFsbench(t, "replay", big, dir, "--max-log-size", "1k")
	if code != ExitUsage || !strings.Contains(stderr, "--max-log-size") {
		t.Fatalf("--max-log-size 1k: exit %d, want 2 naming the flag; stderr:\n%s", code, stderr)
	}
}

// TestReplayBinaryTruncatedGzip: a gzip log cut short says so, exit 2.
func TestReplayBinaryTruncatedGzip(t *testing.T) {
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	for i := range 2000 {
		zw.Write([]byte(fsbLine(i, fmt.Sprintf("mkdir (/d%d) - OK", i))))
	}
	zw.Close()
	p := filepath.Join(t.TempDir(), "cut.log.gz")
	if err := os.WriteFile(p, gz.Bytes()[:gz.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := runFsbench(t, "replay", p, t.TempDir())
	if code != ExitUsage || !strings.Contains(stderr, "the compressed log is cut short or damaged") {
		t.Fatalf("exit %d, want 2 saying the log is cut short; stderr:\n%s", code, stderr)
	}
}

// TestReplayBinarySIGTERMLoading: SIGTERM while the log is read from a
// FIFO whose writer is slow ends the replay at once, exit 130.
func TestReplayBinarySIGTERMLoading(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "live.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cmd := exec.Command(testenv.Binary(t), "replay", fifo, dir)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0) // returns once the replay opened it: ready
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.Write([]byte(fsbLine(1, "mkdir (/d) - OK"))); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		t.Fatalf("replay did not stop within a minute of SIGTERM; stderr:\n%s", errb.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Fatalf("exit %d, want 130; stderr:\n%s", code, errb.String())
	}
}

// TestReplayBinaryContradictoryLog: a log that uses a name after renaming
// it away, with no line making it again, is the log's fault, in every
// format: one line naming the name, exit 2, nothing made. Renamed from a
// file it never created and removed as a directory; made, renamed and
// removed.
func TestReplayBinaryContradictoryLog(t *testing.T) {
	for name, text := range map[string]string{
		"juicefs, renamed and removed": "2026.11.21 21:03:18.400361 [uid:0,gid:0,pid:7] rename (1,a,1,b,0): OK <0.000030>\n" +
			"2026.11.21 21:03:18.400362 [uid:0,gid:0,pid:7] rmdir (1,a): OK <0.000030>\n",
		"juicefs, made, renamed and removed": "2026.11.21 21:03:17.000006 [uid:0,gid:0,pid:8] mkdir (1,a,drwxr-xr-x:0040755): (5,[drwxr-xr-x:0040755,2,0,0,1,1,1,4096]) - OK <0.000010>\n" +
			"2026.11.21 21:03:17.000007 [uid:0,gid:0,pid:8] rename (1,a,1,b,0): OK <0.000030>\n" +
			"2026.11.21 21:03:17.000009 [uid:0,gid:0,pid:8] rmdir (1,a) - OK <0.000010>\n",
		"fsbench": "2026.11.26 18:38:51.010003 [uid:0,gid:0,pid:7] mkdir (/a) - OK <0.000004>\n" +
			"2026.11.26 18:38:51.010004 [uid:0,gid:0,pid:7] rename (/a,/b) - OK <0.000004>\n" +
			"2026.11.26 18:38:51.010011 [uid:0,gid:0,pid:7] rmdir (/a) - OK <0.000004>\n",
		"strace": "3760  1795570281.951185 mkdir(\"/a\", 0755) = 0 <0.000010>\n" +
			"3760  1795570281.951187 rename(\"/a\", \"/b\") = 0 <0.000010>\n" +
			"3760  1795570281.951192 rmdir(\"/a\") = 0 <0.000010>\n",
	} {
		log, dir := filepath.Join(t.TempDir(), "app.log"), t.TempDir()
		if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, stderr, code := runFsbench(t, "replay", log, dir)
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 ||
			!strings.HasPrefix(stderr, "fsbench: log "+log+": /a is used after the log renamed it away, and no line makes it again") {
			t.Errorf("%s: exit %d, stderr %q; want 2 and one line blaming the log", name, code, stderr)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s: %s holds %v", name, dir, ents)
		}
	}
}

// TestBinarySIGTERMAtStart: a SIGTERM as soon as the process catches
// signals, long before its packages are initialised and a command runs,
// stops it cleanly: exit 130, not the runtime's 143. The process says on
// stderr when it catches them (signals.ReadyEnv).
func TestBinarySIGTERMAtStart(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "never.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		cmd := exec.Command(testenv.Binary(t), "replay", fifo, t.TempDir())
		cmd.Env = append(os.Environ(), signals.ReadyEnv+"=1")
		errPipe, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(errPipe)
		if line, err := rd.ReadString('\n'); err != nil || !strings.Contains(line, "signals caught") {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("run %d: first line %q, %v", i, line, err)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		rest, _ := io.ReadAll(rd)
		cmd.Wait()
		if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
			t.Fatalf("run %d: exit %d (%v), want 130; stderr:\n%s", i, code, cmd.ProcessState, rest)
		}
	}
}

// TestReplayBinaryLongLine: a plain log file, which is mapped rather
// than read, is held to --max-line-size too.
func TestReplayBinaryLongLine(t *testing.T) {
	log := writeLog(t, fsbLine(1, "mkdir (/d) - OK"), strings.Repeat("x", 2<<20)+"\n", fsbLine(3, "mkdir (/e) - OK"))
	_, stderr, code := runFsbench(t, "replay", log, t.TempDir())
	if code != ExitUsage || !strings.Contains(stderr, "line 2 holds more than 1 MiB (--max-line-size") {
		t.Fatalf("exit %d, want 2 naming line 2 and --max-line-size; stderr:\n%s", code, stderr)
	}
}
