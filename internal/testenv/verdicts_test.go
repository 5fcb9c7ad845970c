package testenv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
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
	cmd := exec.CommandContext(ctx, "bash", append([]string{filepath.Join(RepoRoot(), "benchmarks", "scripts", "verdicts.sh")}, args...)...)
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

// TestVerdictsQuickSlowBadInput: quick-slow refuses each wrong setting
// with one line and exit 2 before it makes anything: no scratch directory
// (TMPDIR stays empty), no image in IMG_DIR, no cgroup.
func TestVerdictsQuickSlowBadInput(t *testing.T) {
	script := filepath.Join(RepoRoot(), "benchmarks", "scripts", "verdicts.sh")
	before, _ := filepath.Glob("/sys/fs/cgroup/blkio/fsbench-verdicts-slow-*")
	for _, c := range []struct {
		env  string
		args []string
		want string
	}{
		{"RUNS=0", nil, "verdicts.sh: RUNS is a count of runs, not 0"},
		{"RUNS=ten", nil, "verdicts.sh: RUNS is a count of runs, not ten"},
		{"SLOW_BPS=20MiB", nil, "verdicts.sh: SLOW_BPS is a limit in bytes/s of at least 100000, not 20MiB"},
		{"SLOW_BPS=4096", nil, "verdicts.sh: SLOW_BPS is a limit in bytes/s of at least 100000, not 4096"},
		{"IMG_DIR=/nonexistent/fsbench", nil, "verdicts.sh: IMG_DIR is a directory, not /nonexistent/fsbench"},
		{"CLEAN_RUNS=-1", nil, "verdicts.sh: CLEAN_RUNS is a count of runs, not -1"},
		{"RUNS=1", []string{"bench", "fio"}, "verdicts.sh: quick-slow runs bench, checkpoint, io500, train or objbench, not fio"},
	} {
		tmp, img := t.TempDir(), t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, "bash", append([]string{script, "quick-slow"}, c.args...)...)
		cmd.Env = append(os.Environ(), "FSBENCH="+filepath.Join(tmp, "no-fsbench"), "TMPDIR="+tmp, "IMG_DIR="+img, c.env)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("%s %v: %v, want exit status 2\n%s", c.env, c.args, err, stderr.String())
			continue
		}
		if got := strings.TrimSpace(stderr.String()); got != c.want {
			t.Errorf("%s %v: stderr %q, want %q", c.env, c.args, got, c.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("%s %v: printed %q", c.env, c.args, stdout.String())
		}
		for _, dir := range []string{tmp, img} {
			if ents, _ := os.ReadDir(dir); len(ents) != 0 {
				t.Errorf("%s %v: made %v in %s", c.env, c.args, ents, dir)
			}
		}
	}
	if after, _ := filepath.Glob("/sys/fs/cgroup/blkio/fsbench-verdicts-slow-*"); len(after) != len(before) {
		t.Errorf("cgroups made: %v", after)
	}
}

// TestVerdictsQuickSlow: one real run of bench --quick on the loop device
// whose reads are limited to 20 MiB/s fails read-big>=40MiB/s (exit 3,
// counted), as objbench --quick on a directory there fails
// download>=40MiB/s (its gets read the device, not the page cache its
// puts filled), while its unthrottled run passes, judged; the loop
// device, mount and cgroups are gone afterwards.
func TestVerdictsQuickSlow(t *testing.T) {
	if os.Geteuid() != 0 {
		Unavailable(t, "quick-slow needs root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device"); err != nil {
		Unavailable(t, "no blkio cgroup (v1): %v", err)
	}
	before, _ := filepath.Glob("/sys/fs/cgroup/blkio/fsbench-verdicts-slow-*")
	img := t.TempDir()
	out := runVerdicts(t, []string{"RUNS=1", "IMG_DIR=" + img}, "quick-slow", "bench", "objbench")
	t.Log(out)
	for _, want := range []string{
		`(?m)^bench --quick, reads limited to 20 MiB/s: exit 3 in 1/1 runs \(exits: 3\)$`,
		`(?m)^objbench --quick, unthrottled: exit 0 in 1/1 runs, every expectation judged in 1/1$`,
		`(?m)^objbench --quick, reads limited to 20 MiB/s: exit 3 in 1/1 runs \(exits: 3\)$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("summary does not match %s:\n%s", want, out)
		}
	}
	if after, _ := filepath.Glob("/sys/fs/cgroup/blkio/fsbench-verdicts-slow-*"); len(after) != len(before) {
		t.Errorf("cgroups left: %v", after)
	}
	if ents, _ := os.ReadDir(img); len(ents) != 0 {
		t.Errorf("left in %s: %v", img, ents)
	}
}

// TestVerdictsSlowdownKeepRecompare: slowdown runs a pair with the NEW
// side stopped for a share of the time, keeps both results where KEEP
// says, and recompare compares the kept pair again; two runs a side can
// never be significant, so neither exits 3.
func TestVerdictsSlowdownKeepRecompare(t *testing.T) {
	dir, keep := t.TempDir(), t.TempDir()
	out := runVerdicts(t, []string{"KEEP=" + keep}, "slowdown", dir)
	want := `(?m)^slowdown, bench on .* stopped for 0.3 of the time, --repeat 2: exit 3 in 0/1 with --threshold 10%$`
	if !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("summary does not match %s:\n%s", want, out)
	}
	for _, f := range []string{"1-old.json", "1-new.json"} {
		if _, err := os.Stat(filepath.Join(keep, f)); err != nil {
			t.Errorf("not kept: %v", err)
		}
	}
	out = runVerdicts(t, nil, "recompare", keep)
	want = `(?m)^pair 1: exit 0, \d+ figures tested, 0 regressions: $`
	if !regexp.MustCompile(want).MatchString(out) || !strings.Contains(out, "recompare "+keep+": exit 3 in 0/1 pairs with --threshold 10%") {
		t.Errorf("recompare:\n%s", out)
	}
}

// TestVerdictsCapped: a loop device capped at 100 MiB/s for OLD and 70
// MiB/s for NEW, five runs a side: the 30% slowdown is a regression at
// --threshold 10% (exit 3), and the cgroups are gone afterwards.
func TestVerdictsCapped(t *testing.T) {
	if os.Geteuid() != 0 {
		Unavailable(t, "capped needs root")
	}
	if _, err := os.Stat("/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device"); err != nil {
		Unavailable(t, "no blkio cgroup (v1): %v", err)
	}
	before, _ := filepath.Glob("/sys/fs/cgroup/blkio/fsbench-verdicts-*")
	out := runVerdicts(t, []string{"REPEAT=5", "BIG=32M"}, "capped")
	want := `(?m)^capped, bench --direct on a loop device capped at 100 MiB/s \(OLD\) and 70 MiB/s \(NEW\), --repeat 5: exit 3 in 1/1 with --threshold 10%$`
	if !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("summary does not match %s:\n%s", want, out)
	}
	if after, _ := filepath.Glob("/sys/fs/cgroup/blkio/fsbench-verdicts-*"); len(after) != len(before) {
		t.Errorf("cgroups left: %v", after)
	}
}

// TestVerdictsRated: rated probes the job, holds the NEW side to 70% of
// the probe's rate and compares the throughput only; two runs a side can
// never be significant, so it does not exit 3.
func TestVerdictsRated(t *testing.T) {
	dir := t.TempDir()
	out := runVerdicts(t, []string{"BIG=8M"}, "rated", dir)
	want := `(?m)^pair 1: --rate [0-9.]+; --threshold 10% exit 0, 0 regressions; NEW/OLD throughput write [0-9.]+$`
	if !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("pair does not match %s:\n%s", want, out)
	}
	want = `(?m)^rated, bench --rw write on .*, NEW at 0.7 of a probe's rate, --repeat 2: exit 3 in 0/1 with --threshold 10%$`
	if !regexp.MustCompile(want).MatchString(out) {
		t.Errorf("summary does not match %s:\n%s", want, out)
	}
}
