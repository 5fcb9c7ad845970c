package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMissingPathOneLine: a run in a directory that does not exist says so
// in one line, with no "Benchmarking PATH ..." announcement before it.
func TestMissingPathOneLine(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent")
	log := filepath.Join("..", "..", "testdata", "replay", "juicefs.log")
	if _, err := os.Stat(log); err != nil {
		log = writeJuiceFSLog(t)
	}
	parm := filepath.Join(t.TempDir(), "small.parm")
	if err := os.WriteFile(parm, []byte("fsd=fsd1,anchor="+missing+"/vdb,depth=1,width=1,files=2,size=4k\n"+
		"fwd=fwd1,fsd=fsd1,operation=read\nrd=rd1,fwd=fwd1,fwdrate=max,format=yes,elapsed=1,interval=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"bench", missing, "-p", "1"},
		{"fio", "--name=x", "--directory=" + missing, "--rw=read", "--size=1m"},
		{"vdbench", parm},
		{"bench", missing, "--rw", "read"},
		{"train", missing, "--quick"},
		{"checkpoint", missing, "--quick"},
		{"replay", log, missing},
		{"io500", missing, "--quick"},
		{"stats", missing},
		{"profile", missing},
		{"probe", "--interval", "1m", "bench", missing, "--quick"},
		{"bench", missing, "--read-existing"},
		{"verify", "--journal", missing + ".journal", missing},
	} {
		code, _, stderr := runCLI(t, args...)
		if code != ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, missing+": no such file or directory") ||
			!strings.HasPrefix(stderr, "fsbench: ") {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line naming the missing path", strings.Join(args, " "), code, stderr)
		}
	}
}

// TestMissingPathEveryCommand: every command whose usage takes a local
// path (PATH, MOUNTPOINT, LOG) is in TestMissingPathOneLine's table, so a
// new command cannot miss the rule.
func TestMissingPathEveryCommand(t *testing.T) {
	tested := map[string]bool{"bench": true, "fio": true, "vdbench": true, "train": true, "checkpoint": true, "replay": true, "io500": true,
		"stats": true, "profile": true, "probe": true, "verify": true}
	// Commands whose arguments are not a directory to run in: result files
	// (their missing file is exit 2 in their own tests), a store's URL
	// (objbench creates a missing directory, as juicefs objbench does).
	other := map[string]bool{"compare": true, "history": true, "report": true, "objbench": true, "agent": true, "completion": true, "help": true}
	app, _, _ := testApp(nil)
	for _, c := range NewRoot(app).Commands() {
		if !tested[c.Name()] && !other[c.Name()] {
			t.Errorf("%s (%s): add it to TestMissingPathOneLine, or to the commands without a path here", c.Name(), c.Use)
		}
	}
}

// writeJuiceFSLog writes a two-line JuiceFS access log.
func writeJuiceFSLog(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "access.log")
	lines := "2024.01.01 00:00:00.000000 [uid:0,gid:0,pid:1] mkdir (1,d,0755): OK (2,[drwxr-xr-x:0040755,1,0,0,0,0,0,0]) <0.000100>\n" +
		"2024.01.01 00:00:00.000200 [uid:0,gid:0,pid:1] rmdir (1,d): OK <0.000100>\n"
	if err := os.WriteFile(p, []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestOneIsSingular: announcements and tables with one thread, phase,
// epoch or accelerator use the singular.
func TestOneIsSingular(t *testing.T) {
	dir := t.TempDir()
	plural := regexp.MustCompile(`\b1 (threads|phases|ranks|hosts|epochs|results|streams|accelerators)\b|\b1 emulated \S+ accelerators`)
	for _, args := range [][]string{
		{"bench", dir, "--rw", "write", "--file-size", "64K", "--files", "2", "-p", "1"},
		{"train", dir, "--quick", "-p", "1", "--epochs", "1", "--dataset-files", "2"},
	} {
		code, stdout, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", strings.Join(args, " "), code, stderr)
		}
		if m := plural.FindString(stdout + stderr); m != "" {
			t.Errorf("%s: %q in\n%s%s", strings.Join(args, " "), m, stderr, stdout)
		}
		if !strings.Contains(stdout+stderr, "1 ") {
			t.Errorf("%s: no count printed:\n%s%s", strings.Join(args, " "), stderr, stdout)
		}
	}
}

// TestAgentWeakToken: an agent started with a short token warns and says
// how to make a good one; a long token gets no warning.
func TestAgentWeakToken(t *testing.T) {
	if w := weakToken("secret"); !strings.Contains(w, "6 characters") || !strings.Contains(w, "/dev/urandom") {
		t.Errorf("weakToken(secret) = %q", w)
	}
	if w := weakToken("correct horse battery staple"); w != "" {
		t.Errorf("a 28-character token warned: %q", w)
	}
}

// TestJobFlag: bench's and train's job file is --job (-f); the former
// --workload FILE still runs, with a notice, and is not in the help, where
// --workload is objbench's name of a workload.
func TestJobFlag(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(t.TempDir(), "job.yaml")
	if err := os.WriteFile(job, []byte("threads: 1\nphases:\n  - {name: w, op: write, file_size: 64K, xfer_size: 64K}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, flag := range []string{"--job", "-f", "--workload"} {
		code, stdout, stderr := runCLI(t, "bench", dir, flag, job)
		notice := strings.Contains(stderr, "bench --workload FILE is now --job FILE")
		if code != 0 || !strings.Contains(stdout, "Workload: ") || notice != (flag == "--workload") {
			t.Errorf("bench %s FILE: exit %d, notice %v\n%s%s", flag, code, notice, stderr, stdout)
		}
	}
	for _, c := range []string{"bench", "train"} {
		_, help, _ := runCLI(t, c, "--help")
		if !strings.Contains(help, "-f, --job FILE") || strings.Contains(help, "--workload") {
			t.Errorf("%s --help: no -f, --job FILE, or a --workload:\n%s", c, help)
		}
	}
}
