package cli

import (
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
	"github.com/fsbench/fsbench/internal/verdict"
)

// quickVerdicts runs `fsbench ARGS --quick -o json` with the
// expectations its help and docs show (judged: each must pass or fail,
// never be too short to judge) and impossible ones, which must fail: the
// run exits 3. It returns the result.
func quickVerdicts(t *testing.T, args, judged, impossible []string) *report.Result {
	t.Helper()
	testenv.NeedsServer(t, "a --quick run of the real binary")
	args = append(args, "--quick", "-o", "json")
	for _, e := range append(append([]string{}, judged...), impossible...) {
		args = append(args, "--expect", e)
	}
	stdout, stderr, code := runFsbench(t, args...)
	if code != ExitExpectation {
		t.Fatalf("%q: exit %d, want 3 (impossible expectations)\n%s", args, code, stderr)
	}
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("%q: %v\n%s", args, err, stderr)
	}
	verdicts := map[string]report.Expectation{}
	for _, x := range r.Expectations {
		verdicts[x.Expr] = x
	}
	for _, e := range judged {
		x, ok := verdicts[e]
		if !ok || x.Verdict != report.VerdictPass && x.Verdict != report.VerdictFail {
			t.Errorf("%s: %q (%s), want judged: pass or fail", e, x.Verdict, x.Reason)
		}
	}
	for _, e := range impossible {
		if x := verdicts[e]; x.Verdict != report.VerdictFail {
			t.Errorf("%s: %q (%s), want fail", e, x.Verdict, x.Reason)
		}
	}
	return r
}

// TestQuickBenchJudged: bench --quick with its help's expectations
// (write-big>=200MiB/s, stat.p99<5ms) judges both: its 1,000 small files
// a thread hold the 1,000 stats a p99 needs.
func TestQuickBenchJudged(t *testing.T) {
	quickVerdicts(t, []string{"bench", t.TempDir(), "-p", "4"},
		[]string{"write-big>=200MiB/s", "read-big>=100MiB/s", "write-small>=50files/s", "read-small>=100files/s", "stat>=1000files/s", "stat.p99<5ms", "stat.p50<20ms"},
		[]string{"write-big>=1000000TiB/s", "stat.p99<0.001us"})
}

// TestQuickObjbenchJudged: objbench --quick on the file store judges the
// rates and the p99 its docs show.
func TestQuickObjbenchJudged(t *testing.T) {
	quickVerdicts(t, []string{"objbench", "--storage", "file", t.TempDir(), "-p", "4"},
		[]string{"functional", "upload>=100MiB/s", "download>=50MiB/s", "put-small>=20objects/s", "get-small.p99<20ms", "head.p50<100ms"},
		[]string{"upload>=1000000TiB/s", "get-small.p99<0.001us"})
}

// TestQuickCheckpointJudged: checkpoint --quick judges the expectations
// of docs/checkpoint.md, read.p99 too (1,024 reads of 256 KiB).
func TestQuickCheckpointJudged(t *testing.T) {
	quickVerdicts(t, []string{"checkpoint", t.TempDir()},
		[]string{"write>=500MiB/s", "read.p99<50ms", "read>=100MiB/s"},
		[]string{"read>=1000000TiB/s", "read.p99<0.001us"})
}

// TestQuickIO500Judged: io500 --quick judges every phase's rate (ior-easy
// wrote 16 transfers a rank before, too few for one) and the p99 of
// ior-hard and mdtest-hard.
func TestQuickIO500Judged(t *testing.T) {
	quickVerdicts(t, []string{"io500", t.TempDir()},
		[]string{"ior-hard-write>=1GiB/s", "ior-easy-write>=100MiB/s", "ior-easy-read>=100MiB/s", "ior-hard-read>=100MiB/s",
			"ior-hard-write.p99<1s", "mdtest-hard-write.p99<1s", "mdtest-easy-stat.p99<1s"},
		[]string{"ior-easy-write>=1000000TiB/s", "mdtest-hard-stat.p99<0.001us"})
}

// TestQuickTrainJudged: train --quick measures the steps a verdict on
// the AU needs (100 for 90%); with accelerators that compute in 1 ms, far
// faster than the storage feeds them 400 samples, the same preset fails
// its AU (exit 3), as it does with the 61 steps of a one-epoch run too
// short to pass: the interval lies wholly below the threshold.
func TestQuickTrainJudged(t *testing.T) {
	testenv.NeedsServer(t, "a --quick run of the real binary")
	dir := t.TempDir()
	stdout, stderr, code := runFsbench(t, "train", dir, "--quick", "-o", "json", "-q")
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("exit %d: %v\n%s", code, err, stderr)
	}
	// Enough steps: a pass or a failure, unless this busy machine's AU lies
	// so near the threshold that its interval straddles it.
	au := r.Training
	if au == nil || au.MeasuredSteps < verdict.MinSteps(au.Threshold) || strings.Contains(au.VerdictReason, "measured steps") {
		t.Fatalf("train --quick: %+v (exit %d)\n%s", au, code, stderr)
	}
	if au.Verdict == report.VerdictTooShort {
		t.Logf("AU %.2f%%: %s", au.AU, au.VerdictReason)
	}
	if want := map[string]int{report.VerdictPass: ExitOK, report.VerdictFail: ExitExpectation, report.VerdictTooShort: ExitOK}[au.Verdict]; code != want {
		t.Errorf("AU %s: exit %d, want %d", au.Verdict, code, want)
	}
	for _, extra := range [][]string{{}, {"--epochs", "1", "--dataset-files", "20"}} {
		args := append([]string{"train", dir, "--quick", "-o", "json", "-q", "--compute-time", "1ms"}, extra...)
		stdout, stderr, code = runFsbench(t, args...)
		if r, err = report.ReadJSON(strings.NewReader(stdout)); err != nil {
			t.Fatalf("%q: exit %d: %v\n%s", args, code, err, stderr)
		}
		if au = r.Training; code != ExitExpectation || au == nil || au.Verdict != report.VerdictFail {
			t.Errorf("%q: exit %d, AU %+v, want a failed AU and exit 3\n%s", args, code, au, stderr)
		}
	}
}

// TestQuickBenchSlowDevice: the same bench, on ext4 over a loop device,
// meets read-big>=8MiB/s; run in a blkio cgroup that limits reads from
// the device to 2 MiB/s, it fails it (exit 3): the check fails when the
// storage is slow, not only when the bound is impossible.
func TestQuickBenchSlowDevice(t *testing.T) {
	testenv.NeedsServer(t, "a loop device and a blkio cgroup")
	mnt := testenv.LoopExt4(t, "128M")
	cg := blkioCgroup(t, mnt, 2<<20)
	args := []string{"bench", mnt, "--quick", "-p", "1", "--big-file-size", "16M", "--block-size", "256K", "--small-file-count", "0",
		"--direct", "--expect", "read-big>=8MiB/s"}
	if _, stderr, code := runFsbench(t, args...); code != ExitOK {
		t.Fatalf("unthrottled: exit %d, want 0\n%s", code, stderr)
	}
	out, err := inCgroup(t, cg, args...).CombinedOutput()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
	code := 0
	if ee != nil {
		code = ee.ExitCode()
	}
	if code != ExitExpectation || !strings.Contains(string(out), "expectations failed: read-big>=8MiB/s") {
		t.Errorf("reads limited to 2 MiB/s: exit %d, want 3\n%s", code, out)
	}
}

// inCgroup is the command of fsbench ARGS run in cgroup cg (v1): a shell
// joins it, then becomes fsbench.
func inCgroup(t *testing.T, cg string, args ...string) *exec.Cmd {
	return exec.Command("sh", append([]string{"-c", `echo $$ >"$0/cgroup.procs" && exec "$@"`, cg, testenv.Binary(t)}, args...)...)
}

// blkioCgroup makes a blkio cgroup (v1) whose reads from the block device
// of dir are limited to bps bytes a second, removed at the end.
func blkioCgroup(t *testing.T, dir string, bps int64) string {
	t.Helper()
	root := "/sys/fs/cgroup/blkio"
	if _, err := os.Stat(filepath.Join(root, "blkio.throttle.read_bps_device")); err != nil {
		testenv.Unavailable(t, "no blkio cgroup (v1) at %s: %v", root, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	cg := filepath.Join(root, fmt.Sprintf("fsbench-test-%d", os.Getpid()))
	if err := os.Mkdir(cg, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Remove(cg) })
	limit := fmt.Sprintf("%d:%d %d", unix.Major(st.Dev), unix.Minor(st.Dev), bps)
	if err := os.WriteFile(filepath.Join(cg, "blkio.throttle.read_bps_device"), []byte(limit), 0o644); err != nil {
		t.Fatalf("limit %s: %v", limit, err)
	}
	return cg
}
