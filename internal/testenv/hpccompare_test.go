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

// TestHPCCompareBadInput runs hpc-compare.sh (the comparison with IOR and
// mdtest, which CI does not run whole) with each setting wrong: it must
// stop with exit status 2 and a one-line error that names the setting,
// before it mounts or touches anything.
func TestHPCCompareBadInput(t *testing.T) {
	script := filepath.Join(RepoRoot(), "internal", "testenv", "hpc-compare.sh")
	disk := filepath.Join(t.TempDir(), "disk")
	var env []string // the caller's, without the script's own settings
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		case "FRESH", "DATA", "DROP", "WARMUP", "FS", "RANKS":
		default:
			env = append(env, kv)
		}
	}
	for _, c := range []struct{ env, want string }{
		{"FRESH=2", "hpc-compare.sh: FRESH is 0 or 1, not 2"},
		{"DATA=offset", "hpc-compare.sh: DATA is random or timestamp, not offset"},
		{"DROP=yes", "hpc-compare.sh: DROP is 0 or 1, not yes"},
		{"WARMUP=-1", "hpc-compare.sh: WARMUP is a count of runs, not -1"},
		{"FS=xfs", "hpc-compare.sh: FS is tmpfs, disk or both, not xfs"},
		{"RANKS=hosts", "hpc-compare.sh: RANKS is processes or threads, not hosts"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, "bash", script, t.TempDir(), "1", disk)
		cmd.Env = append(env[:len(env):len(env)], c.env)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("%s: %v, want exit status 2\n%s", c.env, err, stderr.String())
			continue
		}
		if got := strings.TrimSpace(stderr.String()); got != c.want {
			t.Errorf("%s: stderr %q, want %q", c.env, got, c.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("%s: printed %q", c.env, stdout.String())
		}
		if _, err := os.Stat(disk); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the disk directory was made (%v)", c.env, err)
		}
	}
}
