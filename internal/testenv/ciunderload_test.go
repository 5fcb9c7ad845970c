package testenv

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
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
