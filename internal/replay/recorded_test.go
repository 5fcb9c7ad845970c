package replay

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// replayIn replays log in a directory of its own below a fresh one,
// keeping the run directory, and returns the result, the run directory
// and the fresh directory that holds both.
func replayIn(t *testing.T, log string) (*report.Result, string, string) {
	t.Helper()
	top := t.TempDir()
	dest := filepath.Join(top, "a", "b", "dest")
	if err := os.MkdirAll(dest, 0o755); err != nil {
		t.Fatal(err)
	}
	res := &report.Result{}
	if err := Run(context.Background(), Options{Log: log, Path: dest, Keep: true, DropCaches: "never"}, res); err != nil {
		t.Fatalf("replay %s: %v", log, err)
	}
	runs, _ := filepath.Glob(filepath.Join(dest, "fsbench-*"))
	if len(runs) != 1 {
		t.Fatalf("run directories: %v", runs)
	}
	return res, runs[0], top
}

// outside lists what is in top but not below keep: what a replay made
// outside its directory.
func outside(t *testing.T, top, keep string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(top, func(p string, d os.DirEntry, err error) error {
		if p == keep || strings.HasPrefix(keep, p+"/") || p == top {
			return nil
		}
		if strings.HasPrefix(p, keep+"/") {
			return filepath.SkipDir
		}
		out = append(out, p)
		return nil
	})
	return out
}

// TestReplayStaysInside: paths and names of a log that climb with ".."
// or hold a slash are files below the run directory, never outside it.
func TestReplayStaysInside(t *testing.T) {
	logs := map[string]string{
		"fsbench": `2026.11.26 18:38:51.983400 [uid:0,gid:0,pid:7] mkdir (/a) - OK <0.000038>
2026.11.26 18:38:51.983407 [uid:0,gid:0,pid:7] create (/a/../../../../escaped) - OK <0.000038>
2026.11.26 18:38:51.985708 [uid:0,gid:0,pid:7] write (/a/../../../../escaped,100,0): 100 - OK <0.000366>
2026.11.26 18:38:51.985709 [uid:0,gid:0,pid:7] close (/a/../../../../escaped) - OK <0.000004>
2026.11.26 18:38:51.985710 [uid:0,gid:0,pid:7] rename (/a/../../../../escaped,/a/../../../../moved) - OK <0.000004>
`,
		"juicefs": `2026.11.21 21:03:17.176254 [uid:0,gid:0,pid:7] mkdir (1,a,?rwxr-xr-x:00755): (2,[drwxr-xr-x:0040755,2,0,0,1795294997,1795294997,1795294997,4096]) - OK <0.000381>
2026.11.21 21:03:18.400355 [uid:0,gid:0,pid:7] create (2,../../../../escaped,-rw-r--r--:0100644): (3,[-rw-r--r--:0100644,1,0,0,1795294998,1795294998,1795294998,0]) [fh:10] - OK <0.005066>
2026.11.21 21:03:18.400356 [uid:0,gid:0,pid:7] write (3,100,0,10): OK <0.000066>
2026.11.21 21:03:18.400357 [uid:0,gid:0,pid:7] release (3,10) - OK <0.000066>
2026.11.21 21:03:18.400358 [uid:0,gid:0,pid:7] mkdir (2,..,?rwxr-xr-x:00755): (4,[drwxr-xr-x:0040755,2,0,0,1795294997,1795294997,1795294997,4096]) - OK <0.000381>
`,
		"strace": `7  1795570281.000001 openat(AT_FDCWD</w>, "x", O_WRONLY|O_CREAT, 0644) = 3</w/../../../../escaped> <0.000010>
7  1795570281.000002 write(3</w/../../../../escaped>, "hello\n", 6) = 6 <0.000010>
7  1795570281.000003 close(3</w/../../../../escaped>) = 0 <0.000010>
`,
	}
	for name, text := range logs {
		t.Run(name, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), name+".log")
			if err := os.WriteFile(log, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			res, run, top := replayIn(t, log)
			if left := outside(t, top, run); len(left) > 0 {
				t.Errorf("made outside the run directory %s: %v", run, left)
			}
			var written int64
			for _, o := range res.Replay.Ops {
				if o.Op == "write" {
					written = o.Bytes
				}
			}
			if written == 0 {
				t.Errorf("nothing written: %+v", res.Replay.Ops)
			}
		})
	}
}

// straceRun records script, run by sh in a fresh directory that holds
// an empty directory sub, with strace as docs/replay.md says, and
// returns the trace and the directory.
func straceRun(t *testing.T, script string) (log, work string) {
	t.Helper()
	return straceCmd(t, "sh", "-c", script)
}

// straceCmd records a program as straceRun does.
func straceCmd(t *testing.T, argv ...string) (log, work string) {
	t.Helper()
	return straceCmdAfter(t, nil, argv...)
}

// straceCmdAfter is straceCmd, with setup(work) run before the recording:
// the files it makes are ones the program finds.
func straceCmdAfter(t *testing.T, setup func(work string), argv ...string) (log, work string) {
	t.Helper()
	straceBin, err := testenv.LookPath("strace")
	if err != nil {
		testenv.Unavailable(t, "strace not installed")
	}
	work = t.TempDir()
	if err := os.Mkdir(filepath.Join(work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	if setup != nil {
		setup(work)
	}
	log = filepath.Join(t.TempDir(), "trace.log")
	cmd := exec.Command(straceBin, append([]string{"-f", "-ttt", "-T", "-y", "-o", log}, argv...)...)
	cmd.Dir = work
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("strace %q: %v %s", argv, err, b)
	}
	return log, work
}

// python3 is the path of the Python interpreter itself, not of a wrapper
// script that runs it (whose own calls strace would record).
func python3(t *testing.T) string {
	t.Helper()
	python, err := testenv.LookPath("python3")
	if err != nil {
		testenv.Unavailable(t, "python3 not installed")
	}
	out, err := exec.Command(python, "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	return strings.TrimSpace(string(out))
}

// checkReplayed fails the test unless every type of operation of the
// replay was replayed as recorded, with no error.
func checkReplayed(t *testing.T, res *report.Result) {
	t.Helper()
	if res.Phases[0].Errors != 0 {
		t.Errorf("errors: %q", res.Phases[0].ErrorSamples)
	}
	for _, o := range res.Replay.Ops {
		if o.Ops != o.Recorded.Ops || o.Bytes != o.Recorded.Bytes || o.Failed != o.Recorded.Failed || o.Errors != 0 {
			t.Errorf("%s: replayed %d ops, %d bytes, %d failed, %d differed; recorded %d, %d, %d",
				o.Op, o.Ops, o.Bytes, o.Failed, o.Errors, o.Recorded.Ops, o.Recorded.Bytes, o.Recorded.Failed)
		}
	}
}

// TestReplayStraceCwd: the calls that take a path without a directory
// descriptor (mkdir, rmdir, rename, unlink, ...) name it relative to the
// process's working directory, which strace shows only in the other
// calls (AT_FDCWD</w>), and which cd changes: the replay makes the
// directories where the program made them, not in the run directory's
// top.
func TestReplayStraceCwd(t *testing.T) {
	log, work := straceRun(t, `cd sub && mkdir new && mkdir new/deeper && echo hi > new/f && mv new/f new/g && rmdir new/deeper && mkdir gone`)
	res, run, _ := replayIn(t, log)
	checkReplayed(t, res)
	if st, err := os.Stat(filepath.Join(run, work, "sub/new/g")); err != nil || st.Size() != 3 {
		t.Errorf("sub/new/g in the replay: %v, want the 3 bytes written", err)
	}
	if _, err := os.Stat(filepath.Join(run, work, "sub/gone")); err != nil {
		t.Errorf("sub/gone in the replay: %v", err)
	}
	for _, top := range []string{"new", "gone"} {
		if _, err := os.Stat(filepath.Join(run, top)); err == nil {
			t.Errorf("%s made in the run directory's top, not where the program was", top)
		}
	}
}

// TestReplayStraceStatDir: a directory that existed before the
// recording, which the program first stats (ls -ld), is made a directory
// (its stat says S_IFDIR), so that its later listing and the lookups of
// names in it do what they did.
func TestReplayStraceStatDir(t *testing.T) {
	log, _ := straceRun(t, `mkdir -p sub/in sub/e && ls -ld sub/in sub/e >/dev/null && ls sub/e >/dev/null; ls sub/in/nothere 2>/dev/null; true`)
	res, _, _ := replayIn(t, log)
	checkReplayed(t, res)
}

// TestReplayStracePadded: strace pads a short call with spaces before
// its result ("rmdir(\"d1\")    = 0"): such calls are replayed, as often
// as the trace has them.
func TestReplayStracePadded(t *testing.T) {
	log, work := straceRun(t, `mkdir d1 d2 && rmdir d1 && cd d2 && mkdir e && rmdir e && mkdir f`)
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	// A call another process's output interrupted is in two lines, its
	// end as "<... mkdir resumed>) = 0" (strace -f, on a busy machine).
	re := regexp.MustCompile(`(?m)^\d+ +[\d.]+ (?:(mkdir|rmdir)\(.*\)|<\.\.\. (mkdir|rmdir) resumed>.*\))( +)= 0 <`)
	want, padded := map[string]int64{}, 0
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		want[m[1]+m[2]]++
		padded += btoi(len(m[3]) > 1)
	}
	if want["mkdir"] != 4 || want["rmdir"] != 2 || padded == 0 {
		t.Fatalf("the trace has %v successful calls, %d padded: want 4 mkdir, 2 rmdir, some padded", want, padded)
	}
	res, run, _ := replayIn(t, log)
	checkReplayed(t, res)
	for _, o := range res.Replay.Ops {
		if n, ok := want[o.Op]; ok && o.Ops != n {
			t.Errorf("%s: %d replayed, the trace has %d", o.Op, o.Ops, n)
		}
		delete(want, o.Op)
	}
	if len(want) > 0 {
		t.Errorf("not replayed: %v", want)
	}
	for _, d := range []string{"d2", "d2/f"} {
		if st, err := os.Stat(filepath.Join(run, work, d)); err != nil || !st.IsDir() {
			t.Errorf("%s in the replay: %v", d, err)
		}
	}
}

// TestReplayStraceDeleted: the calls on a descriptor whose file was
// removed while open (strace's "3</w/fa>(deleted)") or never had a name
// (O_TMPFILE) are replayed on the descriptor the replay opened, with
// their bytes, and the removed file is not made again.
func TestReplayStraceDeleted(t *testing.T) {
	log, work := straceCmd(t, python3(t), "-c", `
import os
fd = os.open("sub", os.O_TMPFILE | os.O_WRONLY, 0o600)
os.write(fd, b"t" * 1234)
os.close(fd)
fd = os.open("fa", os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b"z" * 100, 0)
os.unlink("fa")
os.write(fd, b"q" * 10)
os.pread(fd, 50, 0)
os.close(fd)
`)
	res, run, _ := replayIn(t, log)
	checkReplayed(t, res)
	want := map[string]int64{"write": 1234 + 10, "pwrite64": 100, "pread64": 50}
	for _, o := range res.Replay.Ops {
		if n, ok := want[o.Op]; ok && o.Bytes < n {
			t.Errorf("%s: %d bytes replayed, the program moved %d", o.Op, o.Bytes, n)
		}
		delete(want, o.Op)
	}
	if len(want) > 0 {
		t.Errorf("not replayed: %v", want)
	}
	if _, err := os.Stat(filepath.Join(run, work, "fa")); err == nil {
		t.Errorf("fa, removed by the program, is in the replay's directory")
	}
	if left, _ := os.ReadDir(filepath.Join(run, work, "sub")); len(left) > 0 {
		t.Errorf("in sub after the replay: %v", left)
	}
}

// TestReplayStraceRenameNoReplace: mv over an existing file tries
// renameat2 with RENAME_NOREPLACE first, which fails, then renames: the
// replay does both as recorded, and the target ends with the source's
// size.
func TestReplayStraceRenameNoReplace(t *testing.T) {
	log, work := straceRun(t, `sh -c 'echo one > a' && sh -c 'echo second > b' && mv a b`)
	res, run, _ := replayIn(t, log)
	checkReplayed(t, res)
	failed := false
	for _, o := range res.Replay.Ops {
		failed = failed || o.Op == "renameat2" && o.Recorded.Failed > 0
	}
	if !failed {
		t.Fatalf("no failed renameat2 in the recording of mv: %+v", res.Replay.Ops)
	}
	if st, err := os.Stat(filepath.Join(run, work, "b")); err != nil || st.Size() != 4 {
		t.Errorf("b in the replay: %v, want a's 4 bytes", err)
	}
}

// TestReplayStraceDup2: a shell's redirections put each file on its
// standard output with dup2, which the replay does not perform: the
// writes to descriptor 1, once it is another file's, go to that file.
func TestReplayStraceDup2(t *testing.T) {
	log, work := straceRun(t, `echo one > a; echo second > b; echo third >> a`)
	res, run, _ := replayIn(t, log)
	checkReplayed(t, res)
	for name, size := range map[string]int64{"a": 10, "b": 7} {
		if st, err := os.Stat(filepath.Join(run, work, name)); err != nil || st.Size() != size {
			t.Errorf("%s in the replay: %v, want %d bytes", name, err, size)
		}
	}
}
