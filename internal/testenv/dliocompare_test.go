package testenv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestDLIOCompareNamesMissingVenv runs dlio-compare.sh without a usable
// DLIO_VENV: it must stop at once, before mounting anything, with one line
// that names the variable and a non-zero exit.
func TestDLIOCompareNamesMissingVenv(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		Unavailable(t, "bash: %v", err)
	}
	script := filepath.Join(RepoRoot(), "internal", "testenv", "dlio-compare.sh")
	notVenv := t.TempDir() // a directory without bin/dlio_benchmark
	for _, venv := range []string{"", notVenv, filepath.Join(notVenv, "absent")} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, bash, script)
		cmd.Env = append(os.Environ(), "DLIO_VENV="+venv, "MNT="+filepath.Join(notVenv, "mnt"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() == 0 {
			t.Fatalf("DLIO_VENV=%q: %v, want a non-zero exit; stderr %q", venv, err, stderr.String())
		}
		msg := strings.TrimSuffix(stderr.String(), "\n")
		if strings.Contains(msg, "\n") || !strings.Contains(msg, "DLIO_VENV=") || !strings.Contains(msg, "dlio_benchmark") {
			t.Errorf("DLIO_VENV=%q: stderr %q, want one line naming DLIO_VENV and dlio_benchmark", venv, msg)
		}
		if stdout.Len() != 0 {
			t.Errorf("DLIO_VENV=%q: stdout %q, want nothing", venv, stdout.String())
		}
		if _, err := os.Stat(filepath.Join(notVenv, "mnt")); err == nil {
			t.Errorf("DLIO_VENV=%q: the script made its mount point before checking the venv", venv)
		}
	}
}
