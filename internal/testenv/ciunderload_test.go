package testenv

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestCIUnderLoadBadInput: ci-under-load.sh (the whole suite beside busy
// loops, which CI does not run) refuses a wrong setting or a directory
// that is no repository with exit status 2 and one line, before it clones
// anything or starts a loop.
func TestCIUnderLoadBadInput(t *testing.T) {
	script := filepath.Join(RepoRoot(), "benchmarks", "scripts", "ci-under-load.sh")
	notRepo := t.TempDir()
	out := filepath.Join(t.TempDir(), "logs")
	for _, c := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{notRepo, "1"}, "", "ci-under-load.sh: " + notRepo + " is not a git repository"},
		{[]string{RepoRoot(), "two"}, "", "ci-under-load.sh: RUNS is a whole number, not two"},
		{[]string{RepoRoot(), "1"}, "HOGS=-1", "ci-under-load.sh: HOGS is a whole number, not -1"},
		{[]string{RepoRoot(), "1"}, "LIMIT=45m", "ci-under-load.sh: LIMIT is a whole number, not 45m"},
		{[]string{RepoRoot(), "010"}, "", "ci-under-load.sh: RUNS is a whole number, not 010"},
		{[]string{RepoRoot(), "0"}, "", "ci-under-load.sh: RUNS is at least 1, not 0"},
		{[]string{RepoRoot(), "1"}, "LIMIT=0", "ci-under-load.sh: LIMIT is at least 1, not 0"},
	} {
		cmd := exec.Command("bash", append([]string{script}, c.args...)...)
		cmd.Env = append(os.Environ(), "OUT="+out, "HOGS=2", "LIMIT=60")
		if c.env != "" {
			cmd.Env = append(cmd.Env, c.env)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 || strings.TrimSpace(stderr.String()) != c.want || stdout.Len() > 0 {
			t.Errorf("%v %s: %v, stdout %q, stderr %q; want exit 2 and %q", c.args, c.env, err, stdout.String(), stderr.String(), c.want)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("%s made for a run that was refused", out)
	}
}

// TestCIUnderLoadStops: SIGTERM stops a run at once, all of it (the
// suite's own children included), and removes its clone; the script
// exits 130.
func TestCIUnderLoadStops(t *testing.T) {
	script := filepath.Join(RepoRoot(), "benchmarks", "scripts", "ci-under-load.sh")
	repo, mark := t.TempDir(), filepath.Join(t.TempDir(), "mark")
	if err := os.MkdirAll(filepath.Join(repo, ".ci"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A suite that starts a child of its own and waits.
	run := "#!/usr/bin/env bash\nsleep 600 &\necho $! > \"$MARK.tmp\"\npwd >> \"$MARK.tmp\"\nmv \"$MARK.tmp\" \"$MARK\"\nwait\n"
	if err := os.WriteFile(filepath.Join(repo, ".ci", "run"), []byte(run), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "suite"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	cmd := exec.Command("bash", script, repo, "2")
	cmd.Env = append(os.Environ(), "OUT="+t.TempDir(), "HOGS=1", "LIMIT=900", "MARK="+mark)
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its busy loop goes with it on a failure
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var b []byte
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if b, err = os.ReadFile(mark); err == nil {
			break
		}
		if time.Now().After(deadline) {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			t.Fatalf("the suite never started:\n%s", stdout.String())
		}
	}
	lines := strings.Fields(string(b))
	child, _ := strconv.Atoi(lines[0])
	clone := lines[1]
	cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(time.Minute): // the suite's child sleeps ten
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		syscall.Kill(child, syscall.SIGKILL)
		t.Fatalf("still running a minute after SIGTERM:\n%s", stdout.String())
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("after SIGTERM: %v, want exit status 130\n%s", err, stdout.String())
	}
	if syscall.Kill(child, 0) == nil {
		syscall.Kill(child, syscall.SIGKILL)
		t.Errorf("the suite's child %d outlived the stop", child)
	}
	if _, err := os.Stat(clone); err == nil {
		t.Errorf("the clone %s is left", clone)
	}
	if strings.Contains(stdout.String(), "| 2 |") {
		t.Errorf("a second run began after the stop:\n%s", stdout.String())
	}
}
