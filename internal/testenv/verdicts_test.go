package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// runVerdicts runs verdicts.sh with one pair of two runs a side.
func runVerdicts(t *testing.T, env []string, args ...string) string {
	t.Helper()
	if _, err := LookPath("python3"); err != nil {
		Unavailable(t, "python3: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(RepoRoot(), "internal", "testenv", "verdicts.sh")}, args...)...)
	cmd.Env = append(append(os.Environ(), "FSBENCH="+Binary(t), "PAIRS=1", "REPEAT=2"), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("verdicts.sh %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// TestVerdictsFalseAlarms: the script of docs/statistics.md compares a
// pair of identical jobs and counts what compare called; two runs a side
// can never be significant, so no change may be called.
func TestVerdictsFalseAlarms(t *testing.T) {
	dir := t.TempDir()
	out := runVerdicts(t, nil, "false-alarms", dir)
	want := `(?m)^false alarms, bench on .*, --repeat 2: exit 0 in 1/1 at default settings \(0 regressions\), in 1/1 with --threshold 10% \(0 regressions\); a change was called in 0/1 comparisons \(0 figures\)$`
	if !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("summary does not match %s:\n%s", want, out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left in %s: %v", dir, ents)
	}
}

// TestVerdictsDetect: the planted slowdown is real: with a limit at a
// fiftieth of the device's speed, the NEW side's big-file phases are
// flagged, and the loop device, mount and cgroup are gone afterwards. (At
// a tenth, on a machine whose load went from 20 to 80 within the test, the
// unthrottled side read slower than the limit set from the probe run
// before it, and read-big was "same".)
func TestVerdictsDetect(t *testing.T) {
	if os.Geteuid() != 0 {
		Unavailable(t, "detect needs root")
	}
	before, _ := filepath.Glob("/sys/fs/cgroup/blkio/fsbench-verdicts-*")
	out := runVerdicts(t, []string{"SLOW=0.02", "BIG=32M", "REPEAT=4"}, "detect")
	want := `(?m)^detection, bench --direct on a loop device slowed to 0.02, --repeat 4: write-big flagged in 1/1, read-big in 1/1, both in 1/1$`
	if !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("summary does not match %s:\n%s", want, out)
	}
	if after, _ := filepath.Glob("/sys/fs/cgroup/blkio/fsbench-verdicts-*"); len(after) != len(before) {
		t.Errorf("cgroups left: %v", after)
	}
}
