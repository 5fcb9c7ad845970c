package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// kneeIOPS is the planted knee: reads from the loop device limited to
// this many a second by a blkio cgroup.
const kneeIOPS = 200

// kneeArgs is an O_DIRECT 4 KiB random read on mnt, with extra flags.
func kneeArgs(mnt string, extra ...string) []string {
	return append([]string{"bench", mnt, "--rw", "randread", "--xfer-size", "4K", "--file-size", "16M", "--direct",
		"--duration", "1s", "-p", "4", "-q", "--json"}, extra...)
}

// runInCgroup runs fsbench ARGS in cgroup cg, returning its result and
// exit code.
func runInCgroup(t *testing.T, cg string, args ...string) (*report.Result, int, string) {
	t.Helper()
	cmd := inCgroup(t, cg, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var ee *exec.ExitError
	code := 0
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	var res report.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("%v: exit %d: %v\n%s", args, code, err, stderr.String())
	}
	return &res, code, stderr.String()
}

// inKnee reports whether v lies near the planted knee: generous for a
// loaded machine, and above for the throttle's first slice, which a 1 s
// run sees whole (231 ops/s once under load), but far from what the
// device does unthrottled (tens of thousands).
func inKnee(v float64) bool { return v >= 0.6*kneeIOPS && v <= 1.25*kneeIOPS }

// TestSLOFindsAPlantedKnee: on ext4 over a loop device whose reads a
// blkio cgroup limits to 200 a second, the search for p50<10ms answers
// near 200 ops/s (past the limit the throttle's queue grows without
// bound); --expect capacity>=400ops/s then fails (exit 3), and the same
// expectation passes on the device unthrottled.
func TestSLOFindsAPlantedKnee(t *testing.T) {
	testenv.NeedsServer(t, "a loop device and a blkio cgroup")
	mnt := testenv.LoopExt4(t, "128M")
	cg := blkioIOPSCgroup(t, mnt, kneeIOPS)
	res, code, stderr := runInCgroup(t, cg, kneeArgs(mnt, "--slo", "p50<10ms", "--expect", "capacity>=400ops/s")...)
	c := res.Capacity
	if c == nil || c.Answer == nil {
		t.Fatalf("no answer: %+v\n%s", c, stderr)
	}
	if !inKnee(c.Answer.OpsPerSec) || !inKnee(c.MaxOpsPerSec) {
		t.Errorf("limit %d reads/s: answer %.0f ops/s, maximum %.0f; want both near the limit\n%s", kneeIOPS, c.Answer.OpsPerSec, c.MaxOpsPerSec, stderr)
	}
	if code != ExitExpectation || len(res.Expectations) != 1 || res.Expectations[0].Pass {
		t.Errorf("capacity>=400ops/s under a 200 reads/s limit: exit %d, %+v; want exit 3", code, res.Expectations)
	}
	stdout, stderr, code := runFsbench(t, kneeArgs(mnt, "--slo", "p50<10ms", "--expect", "capacity>=400ops/s")...)
	if code != ExitOK {
		t.Errorf("unthrottled: exit %d, want 0\n%s\n%s", code, stderr, stdout)
	}
}

// TestCurveFindsAPlantedKnee: the curve on the same throttled device
// has its maximum and its knee near the limit, and each step below it
// does the rate it was asked.
func TestCurveFindsAPlantedKnee(t *testing.T) {
	testenv.NeedsServer(t, "a loop device and a blkio cgroup")
	mnt := testenv.LoopExt4(t, "128M")
	cg := blkioIOPSCgroup(t, mnt, kneeIOPS)
	res, code, stderr := runInCgroup(t, cg, kneeArgs(mnt, "--curve")...)
	c := res.Capacity
	if code != ExitOK || c == nil || len(c.Steps) != 7 || c.KneeStep == 0 {
		t.Fatalf("exit %d, capacity %+v\n%s", code, c, stderr)
	}
	if k := c.Steps[c.KneeStep]; !inKnee(c.MaxOpsPerSec) || !inKnee(k.OpsPerSec) {
		t.Errorf("limit %d reads/s: maximum %.0f, knee at %.0f ops/s; want both near the limit", kneeIOPS, c.MaxOpsPerSec, k.OpsPerSec)
	}
	for _, s := range c.Steps[1:5] { // 10% to 80%
		if s.OpsPerSec < 0.8*s.Rate || s.OpsPerSec > 1.1*s.Rate {
			t.Errorf("at %g%%: asked %.0f ops/s, done %.0f", s.Percent, s.Rate, s.OpsPerSec)
		}
	}
}

// blkioIOPSCgroup makes a blkio cgroup (v1) whose reads from the block
// device of dir are limited to iops a second, removed at the end.
func blkioIOPSCgroup(t *testing.T, dir string, iops int) string {
	t.Helper()
	root := "/sys/fs/cgroup/blkio"
	if _, err := os.Stat(filepath.Join(root, "blkio.throttle.read_iops_device")); err != nil {
		testenv.Unavailable(t, "no blkio cgroup (v1) at %s: %v", root, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	cg := filepath.Join(root, fmt.Sprintf("fsbench-knee-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(cg) })
	limit := fmt.Sprintf("%d:%d %d", unix.Major(st.Dev), unix.Minor(st.Dev), iops)
	if err := os.WriteFile(filepath.Join(cg, "blkio.throttle.read_iops_device"), []byte(limit), 0o644); err != nil {
		t.Fatalf("limit %s: %v", limit, err)
	}
	return cg
}
