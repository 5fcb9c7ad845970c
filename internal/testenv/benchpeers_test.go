package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestMain(m *testing.M) { Main(m) }

// TestBenchPeersWithoutWarp runs bench-peers.sh on two rows, one pair of
// one second each, against its own MinIO, with no warp: the script must
// name warp as missing, warn that an odd RUNS favours one side, run
// fsbench's rows alone and print a table with a figure, a peak memory and
// a CPU time for each, and remove its MinIO and data.
func TestBenchPeersWithoutWarp(t *testing.T) {
	NeedsServer(t, "a MinIO server")
	minio, err := LookPath("minio")
	if err != nil {
		Unavailable(t, "minio: %v", err)
	}
	if _, err := os.Stat("/usr/bin/time"); err != nil {
		Unavailable(t, "/usr/bin/time: %v", err)
	}
	tmp := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(RepoRoot(), "benchmarks", "scripts", "bench-peers.sh"))
	cmd.Env = append(os.Environ(), "FSBENCH="+Binary(t), "MINIO="+minio, "WARP="+filepath.Join(tmp, "no-warp"),
		"RUNS=1", "DURATION=1s", "THREADS=2", "ONLY=^(stat|put) 4KiB", "TMPDIR="+tmp, "RESULTS_FILE="+filepath.Join(tmp, "results"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench-peers: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "warp not found") {
		t.Errorf("stderr does not name warp as missing:\n%s", stderr.String())
	}
	if !strings.Contains(stderr.String(), "RUNS=1 is odd") {
		t.Errorf("stderr does not warn that an odd RUNS gives one tool the first run more often:\n%s", stderr.String())
	}
	for _, row := range []string{"put 4KiB", "stat 4KiB"} {
		// operation, unit, fsbench's figure, no warp figure, ..., fsbench's
		// MiB, ..., fsbench's CPU seconds, ...
		re := regexp.MustCompile(`(?m)^` + row + `\s+obj/s\s+[0-9]+\.[0-9]\s+-\s+-\s+-\s+-\s+[0-9]+\s+-\s+-\s+[0-9]+\.[0-9]\s+-\s+-$`)
		if !re.MatchString(stdout.String()) {
			t.Errorf("no %q row with fsbench's figure alone:\n%s", row, stdout.String())
		}
	}
	results, err := os.ReadFile(filepath.Join(tmp, "results"))
	line := regexp.MustCompile(`(?m)^(put|stat) 4KiB\|fsbench\|[0-9.]+\|[0-9]+\|[0-9]+\.[0-9]{2}$`)
	if err != nil || len(line.FindAll(results, -1)) != 2 || strings.Contains(string(results), "|warp") {
		t.Errorf("RESULTS_FILE: %q, %v; want two fsbench lines ROW|fsbench|VALUE|RSS_KIB|CPU_S", results, err)
	}
	left, _ := filepath.Glob(filepath.Join(tmp, "fsbench-peers.*"))
	if len(left) != 0 {
		t.Errorf("the script left %v behind", left)
	}
}
