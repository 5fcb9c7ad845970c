package cli

// The real binary against storage that misbehaves, and against Ctrl-C at
// chosen moments. A run is frozen (SIGSTOP) in the phase to interrupt, as
// its live snapshot for `fsbench stats` shows it, and the Ctrl-C is queued
// for it to find when it runs on (SIGCONT): the interrupt lands in that
// phase, every time.

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/live"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// benchRun is the binary running bench (or a workload) on dir, with its
// live snapshot in a directory of the test's own.
type benchRun struct {
	*testenv.Process
	t       *testing.T
	dir     string
	liveDir string
}

func startBench(t *testing.T, dir string, args ...string) *benchRun {
	t.Helper()
	return startBenchAttr(t, dir, nil, args...)
}

// startBenchAttr is startBench with the process attributes attr (its own
// process group, say).
func startBenchAttr(t *testing.T, dir string, attr *syscall.SysProcAttr, args ...string) *benchRun {
	t.Helper()
	b := &benchRun{t: t, dir: dir, liveDir: t.TempDir()}
	cmd := exec.Command(testenv.Binary(t), append([]string{"bench", dir, "--json"}, args...)...)
	cmd.Env = append(os.Environ(), live.DirEnv+"="+b.liveDir, "NO_COLOR=1")
	cmd.SysProcAttr = attr
	b.Process = testenv.StartProcess(t, cmd)
	return b
}

// snapshot returns the phase the run's live snapshot shows and its
// operations so far; ok is false when there is no snapshot.
func (b *benchRun) snapshot() (phase string, ops int64, ok bool) {
	m, _ := filepath.Glob(filepath.Join(b.liveDir, "*.json"))
	if len(m) == 0 {
		return "", 0, false
	}
	data, err := os.ReadFile(m[0])
	if err != nil {
		return "", 0, false
	}
	s, err := live.Parse(data)
	if err != nil {
		return "", 0, false
	}
	return s.Phase, s.Ops, true
}

// runDir is the run's own directory, or "".
func (b *benchRun) runDir() string {
	m, _ := filepath.Glob(filepath.Join(b.dir, "fsbench-*"))
	if len(m) == 0 {
		return ""
	}
	return m[0]
}

// phaseLimit bounds a wait for a phase of a run that is still going (a
// wait ends at once when the run ends): the guard against a hang only. On
// a loaded machine the phases before it can take minutes; 40,000 small
// files through FUSE took 96 s to write at load 55.
const phaseLimit = 10 * time.Minute

// freezeIn stops the run once its snapshot shows phase with at least ops
// operations done, and checks that it is still in that phase.
func (b *benchRun) freezeIn(phase string, ops int64) {
	b.t.Helper()
	b.Await("phase "+phase, phaseLimit, func() bool {
		p, n, _ := b.snapshot()
		return p == phase && n >= ops
	})
	b.Signal(syscall.SIGSTOP)
	if p, _, _ := b.snapshot(); p != phase {
		b.t.Fatalf("phase %s ended before the run could be stopped (now %q)", phase, p)
	}
}

// freezeInCleanup stops the run in its clean-up: its snapshot is gone (it
// is removed when the last phase ends) and its directory is still there.
func (b *benchRun) freezeInCleanup() {
	b.t.Helper()
	seen := false
	b.Await("the clean-up", phaseLimit, func() bool {
		_, _, ok := b.snapshot()
		seen = seen || ok
		return seen && !ok
	})
	b.Signal(syscall.SIGSTOP)
	if b.runDir() == "" {
		b.t.Fatalf("the clean-up ended before the run could be stopped")
	}
}

// interrupt queues a Ctrl-C for the frozen run and lets it go.
func (b *benchRun) interrupt() { b.stopWith(syscall.SIGINT) }

// stopWith queues sig for the frozen run and lets it go.
func (b *benchRun) stopWith(sig syscall.Signal) {
	b.Signal(sig)
	b.Signal(syscall.SIGCONT)
}

// interruptAgain waits for the run to take the first Ctrl-C, freezes it in
// the clean-up that follows, sends the second and returns how long the
// binary took to end after it.
func (b *benchRun) interruptAgain() (int, time.Duration) { return b.stopAgainWith(syscall.SIGINT) }

// stopAgainWith is interruptAgain with sig as the second signal.
func (b *benchRun) stopAgainWith(sig syscall.Signal) (int, time.Duration) {
	b.t.Helper()
	b.Await("the first interrupt taken", time.Minute, func() bool {
		return strings.Contains(b.Stderr(), "fsbench: interrupted: stopping and cleaning up")
	})
	b.Signal(syscall.SIGSTOP)
	if b.runDir() == "" {
		b.t.Fatalf("the clean-up ended before the second Ctrl-C")
	}
	// A signal within sameSignal of the first is another delivery of it;
	// the run is frozen, so after this wait the second is a later one.
	time.Sleep(sameSignal)
	b.Signal(sig)
	t0 := time.Now()
	b.Signal(syscall.SIGCONT)
	code, ended := b.Wait(30 * time.Second)
	return code, ended.Sub(t0)
}

// result reads the result the run printed.
func (b *benchRun) result() *report.Result {
	b.t.Helper()
	r, err := report.ReadJSON(strings.NewReader(b.Stdout()))
	if err != nil {
		b.t.Fatalf("no result on stdout: %v\nstderr: %s", err, b.Stderr())
	}
	return r
}

// plant puts a file of the user's in dir and returns a check that it is
// untouched and alone.
func plant(t *testing.T, dir string) func() {
	t.Helper()
	p := filepath.Join(dir, "users-file")
	if err := os.WriteFile(p, []byte("the user's data"), 0o640); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		if b, err := os.ReadFile(p); err != nil || string(b) != "the user's data" {
			t.Errorf("the user's file changed: %q, %v", b, err)
		}
		ents, _ := os.ReadDir(dir)
		if len(ents) != 1 {
			var names []string
			for _, e := range ents {
				names = append(names, e.Name())
			}
			t.Errorf("%s holds %v, want only the user's file", dir, names)
		}
	}
}

// benchPhases are bench's phases with a configuration that makes each
// last long enough to be caught in: big files on the disk, many small ones
// on a tmpfs (where writing and reading them is quick, and stat takes as
// long as anywhere).
var benchPhases = []struct {
	name  string
	tmpfs bool
	args  []string
}{
	{"write-big", false, bigFiles},
	{"read-big", false, bigFiles},
	{"write-small", true, smallFiles},
	{"read-small", true, smallFiles},
	{"stat", true, smallFiles},
	{"cleanup", true, smallFiles},
}

var (
	bigFiles   = []string{"-p", "2", "--big-file-size", "1G", "--small-file-count", "10"}
	smallFiles = []string{"-p", "1", "--big-file-size", "0", "--small-file-count", "150000", "--small-file-size", "1K"}
)

// benchDir is a directory to run bench in: on a tmpfs of the test's own,
// or on the disk.
func benchDir(t *testing.T, tmpfs bool) string {
	if tmpfs {
		return testenv.Tmpfs(t, "2g")
	}
	return t.TempDir()
}

// TestBenchInterruptEachPhase: Ctrl-C in each phase of bench and in its
// clean-up: exit 130, the result so far printed (the phase interrupted
// marked incomplete), the run's directory removed, the user's file
// untouched.
func TestBenchInterruptEachPhase(t *testing.T) {
	for _, c := range benchPhases {
		t.Run(c.name, func(t *testing.T) {
			dir := benchDir(t, c.tmpfs)
			if c.name == "stat" {
				// Stat of a tmpfs file is a microsecond: the phase would
				// end between two of the live snapshots the test watches.
				// Through FUSE each stat is a round trip to the daemon:
				// 40,000 files take over a second.
				dir = testenv.Bindfs(t, dir)
				c.args = []string{"-p", "1", "--big-file-size", "0", "--small-file-count", "40000", "--small-file-size", "1K"}
			}
			check := plant(t, dir)
			b := startBench(t, dir, c.args...)
			if c.name == "cleanup" {
				b.freezeInCleanup()
			} else {
				b.freezeIn(c.name, 1)
			}
			b.interrupt()
			code, _ := b.Wait(phaseLimit) // the clean-up of up to 150,000 files
			r := b.result()
			if code != ExitInterrupted || !r.Interrupted {
				t.Fatalf("exit %d, interrupted %v; want 130\n%s", code, r.Interrupted, b.Stderr())
			}
			last := r.Phases[len(r.Phases)-1]
			switch {
			case c.name == "cleanup" && (len(r.Phases) != 3 || last.Incomplete):
				t.Errorf("phases %d, last incomplete %v: want the 3 phases, complete", len(r.Phases), last.Incomplete)
			case c.name != "cleanup" && (last.Name != c.name || !last.Incomplete):
				t.Errorf("last phase %s (incomplete %v), want %s interrupted", last.Name, last.Incomplete, c.name)
			}
			check()
		})
	}
}

// TestBenchInterruptTwice: a second Ctrl-C during the clean-up that the
// first (a Ctrl-C or a SIGTERM) started ends the binary at once, with one
// line naming the directory left behind and the command that removes it.
func TestBenchInterruptTwice(t *testing.T) {
	for _, first := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(first.String(), func(t *testing.T) {
			dir := benchDir(t, true)
			check := plant(t, dir)
			b := startBench(t, dir, smallFiles...)
			b.freezeIn("read-small", 1)
			b.stopWith(first)
			code, took := b.stopAgainWith(syscall.SIGINT)
			checkLeftDir(t, b, code, took)
			check()
		})
	}
}

// TestBenchSIGTERMTwice: a second SIGTERM during the clean-up does not cut
// it short (what sends SIGTERM escalates with SIGKILL, not with another
// SIGTERM): the run cleans up, says once that Ctrl-C quits at once, and
// exits 130 with its result and nothing left.
func TestBenchSIGTERMTwice(t *testing.T) {
	dir := benchDir(t, true)
	check := plant(t, dir)
	b := startBench(t, dir, smallFiles...)
	b.freezeIn("read-small", 1)
	b.stopWith(syscall.SIGTERM)
	code, _ := b.stopAgainWith(syscall.SIGTERM)
	if code != ExitInterrupted || !b.result().Interrupted {
		t.Errorf("exit %d; want 130 and the interrupted result\n%s", code, b.Stderr())
	}
	if !strings.Contains(b.Stderr(), "fsbench: still stopping and cleaning up; Ctrl-C (SIGINT) quits at once") || strings.Contains(b.Stderr(), "interrupted again") {
		t.Errorf("stderr:\n%s", b.Stderr())
	}
	check()
}

// TestBenchSIGTERMToProcessAndGroup: one SIGTERM sent to the process and
// then to its process group, as coreutils' timeout sends it, is one
// interrupt: the run cleans up and exits 130, leaving nothing. The kernel
// merges the two when the first is still pending, so it is tried a few
// times. (A Ctrl-C delivered twice is told apart by time:
// TestInterruptRules.)
func TestBenchSIGTERMToProcessAndGroup(t *testing.T) {
	for range 4 {
		dir := benchDir(t, true)
		check := plant(t, dir)
		b := startBenchAttr(t, dir, &syscall.SysProcAttr{Setpgid: true}, smallFiles...)
		b.Await("write-small under way", 2*time.Minute, func() bool {
			p, n, _ := b.snapshot()
			return p == "write-small" && n >= 1
		})
		pid := b.Cmd.Process.Pid
		if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(-pid, syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		code, _ := b.Wait(2 * time.Minute)
		if code != ExitInterrupted || strings.Contains(b.Stderr(), "interrupted again") || !b.result().Interrupted {
			t.Fatalf("exit %d; want 130 after one interrupt, cleaned up\n%s", code, b.Stderr())
		}
		check()
	}
}

// TestBenchSIGTERM: SIGTERM is Ctrl-C: it stops the run, which cleans up
// and exits 130 (twice: TestBenchInterruptTwice).
func TestBenchSIGTERM(t *testing.T) {
	dir := benchDir(t, true)
	check := plant(t, dir)
	b := startBench(t, dir, smallFiles...)
	b.freezeIn("write-small", 1)
	b.stopWith(syscall.SIGTERM)
	if code, _ := b.Wait(time.Minute); code != ExitInterrupted || !b.result().Interrupted {
		t.Errorf("exit %d; want 130 and the interrupted result\n%s", code, b.Stderr())
	}
	check()
}

// stopTwice sends the frozen run sig twice, the second during the
// clean-up the first started, and checks that it ends at once naming the
// directory left behind.
func stopTwice(t *testing.T, b *benchRun, sig syscall.Signal) {
	t.Helper()
	b.stopWith(sig)
	code, took := b.stopAgainWith(sig)
	t.Logf("second %v: exit %v after it", sig, took.Round(time.Millisecond))
	checkLeftDir(t, b, code, took)
}

// checkLeftDir checks the end of a run interrupted twice: exit 130 within
// 2 s, and a last line naming the directory left behind with a command
// that removes it (run here, as the user would).
func checkLeftDir(t *testing.T, b *benchRun, code int, took time.Duration) {
	t.Helper()
	last := lastLine(b.Stderr())
	m := regexp.MustCompile(`^fsbench: interrupted again: left behind directory (\S+) \(remove it with: (rm -rf \S+)\)$`).FindStringSubmatch(last)
	if code != ExitInterrupted || m == nil {
		t.Fatalf("exit %d, last line %q; want 130 and the directory left behind\n%s", code, last, b.Stderr())
	}
	if took > 2*time.Second {
		t.Errorf("ended %v after the second Ctrl-C, want at once (2 s at most)", took)
	}
	if m[1] != b.runDir() {
		t.Errorf("the line names %s; the directory left is %s", m[1], b.runDir())
	}
	if out, err := exec.Command("sh", "-c", m[2]).CombinedOutput(); err != nil {
		t.Errorf("%s: %v %s", m[2], err, out)
	}
}

func lastLine(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return lines[len(lines)-1]
}

// TestJobInterrupt: a workload file (examples/metadata.yaml, eight times
// the files) interrupted once in its create phase cleans up and exits
// 130; interrupted twice, it ends at once naming what it leaves.
func TestJobInterrupt(t *testing.T) {
	job := []string{"-f", filepath.Join(testenv.RepoRoot(), "examples", "metadata.yaml"), "--files", "8000"}
	t.Run("once", func(t *testing.T) {
		dir := t.TempDir()
		check := plant(t, dir)
		b := startBench(t, dir, job...)
		b.freezeIn("create", 1000)
		b.interrupt()
		code, _ := b.Wait(2 * time.Minute)
		r := b.result()
		if code != ExitInterrupted || !r.Interrupted || len(r.Phases) != 1 || !r.Phases[0].Incomplete {
			t.Errorf("exit %d, interrupted %v, phases %d; want 130 and create incomplete\n%s", code, r.Interrupted, len(r.Phases), b.Stderr())
		}
		check()
	})
	t.Run("twice", func(t *testing.T) {
		dir := t.TempDir()
		check := plant(t, dir)
		b := startBench(t, dir, job...)
		b.freezeIn("create", 10000)
		stopTwice(t, b, syscall.SIGINT)
		check()
	})
}

// failsWith checks a run that failed on storage: exit 1 and, with -q, one
// line on stderr matching want, no panic.
func failsWith(t *testing.T, what string, code int, stderr string, want *regexp.Regexp) {
	t.Helper()
	if code != ExitRuntime || strings.Count(stderr, "\n") != 1 || !want.MatchString(stderr) {
		t.Errorf("%s: exit %d, stderr %q; want 1 and one line matching %s", what, code, stderr, want)
	}
	if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("%s panicked: %s", what, stderr)
	}
}

// TestBenchReadOnlyMount: a read-only mount is one line naming it, exit 1,
// before anything is written.
func TestBenchReadOnlyMount(t *testing.T) {
	src := t.TempDir()
	check := plant(t, src)
	dir := testenv.ReadOnlyBind(t, src)
	for _, args := range [][]string{{"bench", dir, "-q"}, {"bench", dir, "--rw", "write", "--file-size", "4M", "-q"}} {
		_, stderr, code := runFsbenchEnv(t, nil, args...)
		failsWith(t, strings.Join(args, " "), code, stderr, regexp.MustCompile(`^fsbench: prepare: path `+regexp.QuoteMeta(dir)+` is on a read-only mount`))
	}
	check()
}

// TestBenchMountVanishes: the file system is unmounted (umount -l) while
// the small files are written. The run fails with one line saying its
// directory vanished, exits 1, and still removes its directory from the
// detached file system through the handle it holds; the user's file there
// is untouched.
func TestBenchMountVanishes(t *testing.T) {
	dir := testenv.Tmpfs(t, "2g")
	check := plant(t, dir)
	held, err := os.OpenRoot(dir) // the detached tmpfs, seen after the unmount
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	b := startBench(t, dir, append(smallFiles, "-q")...)
	b.freezeIn("write-small", 1000)
	run := b.runDir()
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
		t.Fatal(err)
	}
	b.Signal(syscall.SIGCONT)
	code, _ := b.Wait(time.Minute)
	// The phase works beneath a handle on the run's directory: one that
	// had it open before the unmount may finish in the detached file
	// system, and the next phase, opening the directory by its path,
	// finds it gone.
	failsWith(t, "unmounted", code, b.Stderr(), regexp.MustCompile(`^fsbench: (Write|Read) small file: the benchmark directory `+regexp.QuoteMeta(run)+
		` vanished during the run \(unmounted or deleted\?\): (open|create) `+regexp.QuoteMeta(run)+`/small\.0\.\d+: no such file or directory\n$`))
	ents, err := fs.ReadDir(held.FS(), ".")
	if err != nil || len(ents) != 1 || ents[0].Name() != "users-file" {
		t.Errorf("the detached file system holds %v (%v), want only the user's file", ents, err)
	}
	if data, err := held.ReadFile("users-file"); err != nil || string(data) != "the user's data" {
		t.Errorf("the user's file on the detached file system: %q, %v", data, err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the mount point holds %v", ents)
	}
	_ = check // the mount point is empty now; the user's file was checked through the handle
}

// TestBenchDirectoryDeleted: someone deletes the run's directory while it
// runs: one line saying so, exit 1, nothing else touched.
func TestBenchDirectoryDeleted(t *testing.T) {
	dir := testenv.Tmpfs(t, "2g")
	check := plant(t, dir)
	b := startBench(t, dir, append(smallFiles, "-q")...)
	b.freezeIn("write-small", 1000)
	run := b.runDir()
	if err := os.RemoveAll(run); err != nil {
		t.Fatal(err)
	}
	b.Signal(syscall.SIGCONT)
	code, _ := b.Wait(time.Minute)
	failsWith(t, "deleted", code, b.Stderr(), regexp.MustCompile(`^fsbench: (Write|Read) small file: the benchmark directory `+regexp.QuoteMeta(run)+` vanished during the run`))
	check()
}

// asNobody returns a copy of the binary that an unprivileged user can run,
// and a directory the test owns that such a user may look into.
func asNobody(t *testing.T) (bin, base string) {
	t.Helper()
	testenv.RequireRoot(t)
	base, err := os.MkdirTemp("", "fsbench-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	data, err := os.ReadFile(testenv.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(base, "fsbench")
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	return bin, base
}

// runNobody runs bin as uid and gid 65534 and returns stderr and the exit
// code.
func runNobody(t *testing.T, bin string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var errb strings.Builder
	cmd.Stderr = &errb
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	return errb.String(), cmd.ProcessState.ExitCode()
}

// TestNoPermission: an unprivileged user runs fsbench on a directory it
// may not write to, and on one it may not even look into: one line naming
// the path and the refusal, exit 1, nothing created.
func TestNoPermission(t *testing.T) {
	bin, base := asNobody(t)
	readable := filepath.Join(base, "readable")
	closed := filepath.Join(base, "closed")
	for _, d := range []string{readable, closed} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	check := plant(t, readable)
	if err := os.Chmod(closed, 0o700); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(closed, "data")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", readable, "-q"}, `^fsbench: prepare: create benchmark directory in ` + regexp.QuoteMeta(readable) + `: permission denied\n$`},
		{[]string{"bench", readable, "--rw", "randread", "--file-size", "4M", "-q"}, `^fsbench: prepare: create benchmark directory in ` + regexp.QuoteMeta(readable) + `: permission denied\n$`},
		{[]string{"bench", inside, "-q"}, `^fsbench: prepare: path ` + regexp.QuoteMeta(inside) + `: permission denied\n$`},
		{[]string{"objbench", readable, "-q"}, `^fsbench: .*` + regexp.QuoteMeta(readable) + `.*permission denied\n$`},
	} {
		stderr, code := runNobody(t, bin, c.args...)
		failsWith(t, strings.Join(c.args, " "), code, stderr, regexp.MustCompile(c.want))
	}
	check()
}
