package cli

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
)

// oneLine fails t unless stderr is exactly one line starting with
// "fsbench: " and holding want, with no sign of a panic.
func oneLine(t *testing.T, what, stderr, want string) {
	t.Helper()
	if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "fsbench: ") || !strings.Contains(stderr, want) {
		t.Errorf("%s: stderr %q; want one line mentioning %q", what, stderr, want)
	}
	if strings.Contains(stderr, "panic") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("%s panicked: %s", what, stderr)
	}
}

// TestRuntimeErrorsReadingLikeUsage: a failure at run time exits 1
// whatever its text says: paths whose names read like cobra's usage
// messages, and a real EINVAL from the kernel ("invalid argument": hugetlbfs
// refuses write(2)).
func TestRuntimeErrorsReadingLikeUsage(t *testing.T) {
	// Below a regular file: the run fails preparing it (a PATH that does
	// not exist at all is a usage error).
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"unknown command", "invalid argument", "accepts 1 arg(s)", "requires at least 1 arg(s)", "unknown flag: --x"} {
		_, stderr, code := runFsbenchEnv(t, nil, "bench", filepath.Join(file, name), "-q")
		if code != ExitRuntime {
			t.Errorf("bench %q: exit %d, want 1", name, code)
		}
		oneLine(t, name, stderr, "not a directory")
	}
	huge := testenv.MountFS(t, "hugetlbfs", "")
	_, stderr, code := runFsbenchEnv(t, nil, "bench", huge, "--big-file-size", "4M", "-q")
	if code != ExitRuntime {
		t.Errorf("write(2) on hugetlbfs: exit %d, want 1", code)
	}
	oneLine(t, "hugetlbfs", stderr, "write "+huge)
	if !strings.Contains(stderr, "invalid argument") || strings.Count(stderr, "Write big file") != 1 {
		t.Errorf("hugetlbfs: stderr %q; want the kernel's EINVAL, the phase named once", stderr)
	}
	if left, _ := os.ReadDir(huge); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestUsageErrorsOneLine: mistakes on the command line exit 2 with one
// line that says what is wrong and where the help is.
func TestUsageErrorsOneLine(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a-file")
	if err := os.WriteFile(file, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"bnech", dir}, "did you mean bench?"},
		{[]string{"bench"}, "expects one PATH"},
		{[]string{"bench", dir, dir}, "expects one PATH"},
		{[]string{"bench", dir, "--no-such-flag"}, "unknown flag: --no-such-flag"},
		{[]string{"bench", dir, "-p", "many"}, `invalid argument "many"`},
		{[]string{"bench", dir, "--block-size", "1X"}, "--block-size"},
		{[]string{"bench", file}, "is not a directory"},
		{[]string{"bench", file, "--rw", "read", "--file-size", "4K"}, "is not a directory"},
		{[]string{"bench", dir, "-f", filepath.Join(dir, "missing.yaml")}, "missing.yaml"},
		{[]string{"bench", dir, "--rw", "read", "--duration", "NaN"}, `duration "NaN" out of range`},
		{[]string{"completion", "bash", "extra"}, `unknown command "extra"`},
		{[]string{"objbench", "--storage", "nosuch", dir}, "nosuch"},
		{[]string{"compare", file}, "expects two results, OLD and NEW"},
		{[]string{"bench", dir, "--hosts", ""}, "--hosts names no agent"},
		{[]string{"bench", dir, "--hosts="}, "--hosts names no agent"},
		{[]string{"objbench", "--storage", "file", dir, "--hosts", ""}, "--hosts names no agent"},
		{[]string{"bench", dir, "--hosts-file", ""}, "--hosts-file names no file"},
		{[]string{"bench", dir, "-f", ""}, "--job names no file"},
		{[]string{"train", dir, "--job="}, "--job names no file"},
		{[]string{"bench", dir, "--access-log", ""}, "--access-log names no file"},
		{[]string{"bench", dir, "--access-log", dir}, "is a directory"},
		{[]string{"bench", dir, "--baseline", " "}, "--baseline names no file"},
		{[]string{"checkpoint", dir, "--result-file", ""}, "--result-file names no file"},
		{[]string{"objbench", dir, "--ca-cert", ""}, "--ca-cert names no file"},
		{[]string{"replay", file, dir, "--expect-file", ""}, "--expect-file names no file"},
		{[]string{"bench", dir, "--hosts", "127.0.0.1:1", "--access-log", filepath.Join(dir, "ops.log")}, "--access-log does not go with --hosts"},
	} {
		_, stderr, code := runFsbenchEnv(t, nil, c.args...)
		if code != ExitUsage {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", c.args, code, stderr)
		}
		oneLine(t, strings.Join(c.args, " "), stderr, c.want)
		if !strings.Contains(stderr, "--help')") {
			t.Errorf("%q: %q does not point at the help", c.args, stderr)
		}
	}
	if b, _ := os.ReadFile(file); string(b) != "mine" {
		t.Errorf("the file given as PATH changed: %q", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("a refused command wrote in %s: %v", dir, entries)
	}
}

// TestAdHocWorkloadErrorsExact: a workload built from flags has no file,
// so its mistakes read without a file name in front (no "fsbench: : ").
func TestAdHocWorkloadErrorsExact(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", dir, "--rw", "write", "--rate", "1e-10"},
			"fsbench: phase write: rate 1e-10 per second is not between 1e-06 and 1e+09 (see 'fsbench bench --help')\n"},
		{[]string{"bench", dir, "--depth", "100", "--width", "2"},
			"fsbench: tree: tree of depth 100, width 2 and 1 files per directory has more than 50000000 files (see 'fsbench bench --help')\n"},
	} {
		app, _, errb := testApp(nil)
		if code := Run(context.Background(), app, c.args); code != ExitUsage {
			t.Errorf("%q: exit %d, want 2", c.args, code)
		}
		if errb.String() != c.want {
			t.Errorf("%q: stderr\n%q\nwant\n%q", c.args, errb.String(), c.want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestAgentUsageErrors: an agent refuses what it cannot serve with before
// it starts, in one line and with nothing before it (not even the warning
// about a short token): an empty --allow-root is not the working
// directory, and a malformed --listen is a usage error, not a failure.
func TestAgentUsageErrors(t *testing.T) {
	dir := t.TempDir()
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--allow-root", ""}, "--allow-root names no directory"},
		{[]string{"--allow-root", dir, "--allow-root", " "}, "--allow-root names no directory"},
		{[]string{"--allow-root", dir, "--listen", "nosuch"}, `--listen "nosuch": want HOST:PORT`},
		{[]string{"--allow-root", dir, "--listen", "127.0.0.1:99999"}, `--listen "127.0.0.1:99999"`},
		{[]string{"--allow-root", dir, "--max-connections", "0"}, "--max-connections must be at least 1"},
		{[]string{"--allow-root", dir, "--tls-cert", token, "--tls-key", token}, "--tls-cert/--tls-key"},
	} {
		args := append([]string{"agent", "--token-file", token, "--listen", "127.0.0.1:0"}, c.args...)
		p := testenv.StartProcess(t, exec.Command(testenv.Binary(t), args...))
		code, _ := p.Wait(time.Minute) // an agent that starts serves until killed
		stderr := p.Stderr()
		if code != ExitUsage {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", c.args, code, stderr)
		}
		oneLine(t, strings.Join(c.args, " "), stderr, c.want)
	}
}

// TestOutputFileCheckedBeforeRun: a --result-file or --html that cannot
// be written (a directory, a read-only mount) is refused before the run,
// exit 2, instead of failing once the run is over.
func TestOutputFileCheckedBeforeRun(t *testing.T) {
	dir := t.TempDir()
	ro := testenv.ReadOnlyBind(t, t.TempDir())
	result := filepath.Join(t.TempDir(), "r.json")
	if _, stderr, code := runFsbenchEnv(t, nil, benchArgs(dir, "-q", "--result-file", result)...); code != ExitOK {
		t.Fatalf("bench: exit %d: %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{benchArgs(dir, "--result-file", dir), "--result-file " + dir + " is a directory"},
		{benchArgs(dir, "--html", dir), "--html " + dir + " is a directory"},
		{benchArgs(dir, "--result-file", filepath.Join(ro, "r.json")), "cannot write in " + ro + ": read-only file system"},
		{[]string{"report", result, "--html", dir}, "--html " + dir + " is a directory"},
		{[]string{"report", result, "--html", filepath.Join(ro, "r.html")}, "cannot write in " + ro + ": read-only file system"},
	} {
		_, stderr, code := runFsbenchEnv(t, nil, c.args...)
		if code != ExitUsage {
			t.Errorf("%q: exit %d, want 2 (stderr %q)", c.args, code, stderr)
		}
		oneLine(t, strings.Join(c.args, " "), stderr, c.want)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a refused run wrote in %s: %v", dir, left)
	}
}
