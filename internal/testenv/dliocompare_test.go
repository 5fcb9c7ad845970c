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

// runScript runs one of the comparison scripts with env added to the
// environment and returns its exit code (-1 if it did not exit), stdout
// and stderr.
func runScript(t *testing.T, script string, env ...string) (int, string, string) {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		Unavailable(t, "bash: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, filepath.Join(RepoRoot(), "benchmarks", "scripts", script))
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, stdout.String(), stderr.String()
	case errors.As(err, &exit):
		return exit.ExitCode(), stdout.String(), stderr.String()
	}
	return -1, stdout.String(), stderr.String()
}

// TestDLIOCompareNamesMissingVenv runs dlio-compare.sh and
// dlio-s3-compare.sh without a usable DLIO_VENV: each must stop at once,
// before making its mount point or work directory (or starting anything),
// with one line that names the variable and a non-zero exit.
func TestDLIOCompareNamesMissingVenv(t *testing.T) {
	for _, sc := range []struct{ script, dirVar string }{
		{"dlio-compare.sh", "MNT"},
		{"dlio-s3-compare.sh", "WORK"},
	} {
		notVenv := t.TempDir() // a directory without bin/dlio_benchmark
		dir := filepath.Join(notVenv, "dir")
		for _, venv := range []string{"", notVenv, filepath.Join(notVenv, "absent")} {
			code, stdout, stderr := runScript(t, sc.script, "DLIO_VENV="+venv, sc.dirVar+"="+dir)
			if code <= 0 {
				t.Fatalf("%s DLIO_VENV=%q: exit %d, want a non-zero exit; stderr %q", sc.script, venv, code, stderr)
			}
			msg := strings.TrimSuffix(stderr, "\n")
			if strings.Contains(msg, "\n") || !strings.Contains(msg, "DLIO_VENV=") || !strings.Contains(msg, "dlio_benchmark") {
				t.Errorf("%s DLIO_VENV=%q: stderr %q, want one line naming DLIO_VENV and dlio_benchmark", sc.script, venv, msg)
			}
			if stdout != "" {
				t.Errorf("%s DLIO_VENV=%q: stdout %q, want nothing", sc.script, venv, stdout)
			}
			if _, err := os.Stat(dir); err == nil {
				t.Errorf("%s DLIO_VENV=%q: the script made %s before checking the venv", sc.script, venv, sc.dirVar)
			}
		}
	}
}

// TestDLIOS3CompareNeedsS3Reader gives dlio-s3-compare.sh a venv whose
// dlio_benchmark cannot import DLIO's S3 reader (as dlio-benchmark 2.0.0
// from PyPI cannot): it must say so in one line and stop before starting
// MinIO or making its work directory.
func TestDLIOS3CompareNeedsS3Reader(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		Unavailable(t, "python3: %v", err)
	}
	venv := t.TempDir()
	bin := filepath.Join(venv, "bin")
	if err := os.Mkdir(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "dlio_benchmark"), []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A Python without dlio_benchmark on its path.
	if err := os.Symlink(python, filepath.Join(bin, "python")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(venv, "work")
	code, stdout, stderr := runScript(t, "dlio-s3-compare.sh", "DLIO_VENV="+venv, "WORK="+dir, "PYTHONPATH=")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
	}
	msg := strings.TrimSuffix(stderr, "\n")
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "S3 reader") || !strings.Contains(msg, "DLIO_VENV="+venv) {
		t.Errorf("stderr %q, want one line naming DLIO_VENV and the missing S3 reader", msg)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	if _, err := os.Stat(dir); err == nil {
		t.Error("the script made its work directory before checking the venv")
	}
}
