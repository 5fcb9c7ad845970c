package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
)

func TestProbeFlags(t *testing.T) {
	parse := func(args ...string) (*ProbeOptions, error) {
		var got *ProbeOptions
		app, _, _ := testApp(nil)
		cmd := newProbeCmdWith(app, func(_ context.Context, o *ProbeOptions) error { got = o; return nil })
		cmd.SetArgs(args)
		cmd.SilenceErrors, cmd.SilenceUsage = true, true
		err := cmd.Execute()
		return got, err
	}
	o, err := parse("--interval", "2s", "--expect", "write.p99<5ms", "bench", "/mnt/x", "--rw", "write", "--interval", "1s")
	if err != nil {
		t.Fatal(err)
	}
	if o.Interval != 2*time.Second || len(o.exprs) != 1 || strings.Join(o.Args, " ") != "bench /mnt/x --rw write --interval 1s" {
		t.Fatalf("parsed %+v", o)
	}
	for _, bad := range [][]string{
		{},
		{"stats", "/mnt/x"},
		{"bench", "/mnt/x", "--json"},
		{"bench", "/mnt/x", "-o", "json"},
		{"bench", "/mnt/x", "--result-file=r.json"},
		{"bench", "/mnt/x", "--keep"},
		{"bench", "/mnt/x", "--expect", "write>1MiB/s"},
		{"bench", "/mnt/x", "--hosts", "a:1"},
		{"--interval", "0s", "bench", "/mnt/x"},
		{"--duration", "-1s", "bench", "/mnt/x"},
		{"--expect", "nonsense", "bench", "/mnt/x"},
		{"--push", "ftp://gw", "bench", "/mnt/x"},
		{"--push", "gw:9091", "bench", "/mnt/x"},
		{"--push", "http://gw:9091/?access_token=SECRET", "bench", "/mnt/x"},
		{"--push", "http://gw:9091/#SECRET", "bench", "/mnt/x"},
		{"bench", "/mnt/x", "--history", "h"},
		{"--history", "ftp://x/y", "bench", "/mnt/x"},
		{"--history", "h", "--history-every", "0", "bench", "/mnt/x"},
		{"--history-every", "2", "bench", "/mnt/x"},
	} {
		if _, err := parse(bad...); err == nil || ExitCode(err) != ExitUsage || strings.Contains(err.Error(), "SECRET") {
			t.Errorf("probe %v: %v, want a usage error that shows no secret", bad, err)
		}
	}
}

// probeLine matches a round's log line.
var probeLine = regexp.MustCompile(`(?m)^time=\S+ round=(\d+) result=(pass|fail|error) seconds=\S+(?: cause="(.*)")?`)

// rounds returns the results of the rounds logged so far, and the causes
// of those that ended in error.
func rounds(log string) (results []string, causes []string) {
	for _, m := range probeLine.FindAllStringSubmatch(log, -1) {
		results = append(results, m[2])
		if m[2] == "error" {
			causes = append(causes, m[3])
		}
	}
	return results, causes
}

// TestProbeScrapedAndPushed runs a probe of a small bench: a real
// Prometheus server scrapes it and a real pushgateway receives its rounds.
func TestProbeScrapedAndPushed(t *testing.T) {
	testenv.NeedsServer(t, "Prometheus and a pushgateway")
	gw := testenv.StartPushgateway(t)
	dir := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	probe := testenv.StartProcess(t, exec.Command(testenv.Binary(t), "probe", "--interval", "1s", "--metrics-listen", addr,
		"--push", gw.URL, "--expect", "write.p50<60s", "--expect", "write>1000TiB/s",
		"bench", dir, "--rw", "write", "--file-size", "256K", "--xfer-size", "64K", "--rate", "100", "--duration", "1s", "-p", "2"))
	prom := testenv.StartPrometheus(t, addr)
	probe.Await("rounds counted by Prometheus", 3*time.Minute, func() bool {
		return prom.Query(t, `fsbench_probe_rounds_total{result="fail"}`, "result")["fail"] >= 2
	})
	// The rate of operations while rounds run: 100/s in each 1 s round.
	probe.Await("a rate of the probe's phase", 2*time.Minute, func() bool {
		return prom.Query(t, `sum(rate(fsbench_operations_total{phase="write"}[20s]))`, "")[""] > 10
	})
	exp := prom.Query(t, `fsbench_probe_expectation_pass`, "expectation")
	if exp["write.p50<60s"] != 1 || exp["write>1000TiB/s"] != 0 {
		t.Errorf("expectations of the last round: %v", exp)
	}
	if n := prom.Query(t, `fsbench_probe_rounds_total{result=~"pass|error"}`, "result"); n["pass"] != 0 || n["error"] != 0 {
		t.Errorf("rounds that passed or failed to run: %v", n)
	}
	page := gw.Metrics(t)
	for _, want := range []string{`fsbench_probe_rounds_total{host="`, `instance="`, `job="fsbench_probe"`, `fsbench_probe_phase_bytes_per_second{`, `op="write"`} {
		if !strings.Contains(page, want) {
			t.Errorf("the pushgateway lacks %s", want)
		}
	}
	probe.Signal(syscall.SIGINT)
	if code, _ := probe.Wait(time.Minute); code != 130 {
		t.Errorf("exit %d after Ctrl-C; stderr:\n%s", code, probe.Stderr())
	}
	results, _ := rounds(probe.Stderr())
	if len(results) < 2 || strings.Contains(probe.Stdout(), "{") {
		t.Errorf("rounds %v, stdout %q", results, probe.Stdout())
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestProbeMountGoesAndComes unmounts a bindfs mount under a running
// probe and mounts it again: the rounds meanwhile fail with the cause, the
// later ones pass, and nothing is left in the file system.
func TestProbeMountGoesAndComes(t *testing.T) {
	src := t.TempDir()
	mnt := testenv.Bindfs(t, src)
	probe, count := startMountProbe(t, mnt)
	probe.Await("two rounds that pass", 2*time.Minute, func() bool { return count("pass") >= 2 })
	// The mount goes away while a round writes in it.
	awaitRoundWriting(probe, src)
	if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v %s", err, out)
	}
	probe.Await("two rounds in error", 2*time.Minute, func() bool { return count("error") >= 2 })
	if ents, _ := os.ReadDir(mnt); len(ents) != 0 {
		t.Fatalf("the probe wrote %v in the directory under the mount", ents)
	}
	remount(t, src, mnt)
	passed := count("pass")
	probe.Await("rounds that pass again", 2*time.Minute, func() bool { return count("pass") >= passed+2 })
	probe.Signal(syscall.SIGINT)
	probe.Wait(time.Minute)
	t.Logf("probe log:\n%s", probe.Stderr())
	_, causes := rounds(probe.Stderr())
	for _, c := range causes {
		// Before a round: the mount is gone; during one: its directory
		// vanished.
		if !strings.Contains(c, mnt) || !strings.Contains(c, "the mount is gone") && !strings.Contains(c, "vanished during the run (unmounted") {
			t.Errorf("cause %q does not say the mount at %s went away", c, mnt)
		}
	}
	if code := probe.Cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("exit %d; stderr:\n%s", code, probe.Stderr())
	}
	for _, d := range []string{src, mnt} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("left in %s: %v", d, ents)
		}
	}
}

// startMountProbe starts a probe of small write rounds on mnt, and
// returns it with a count of its rounds by result so far.
func startMountProbe(t *testing.T, mnt string) (*testenv.Process, func(result string) int) {
	probe := testenv.StartProcess(t, exec.Command(testenv.Binary(t), "probe", "--interval", "300ms",
		"bench", mnt, "--rw", "write", "--file-size", "256K", "--xfer-size", "64K", "--rate", "200", "--duration", "1s", "-p", "2"))
	return probe, func(want string) int {
		results, _ := rounds(probe.Stderr())
		n := 0
		for _, r := range results {
			if r == want {
				n++
			}
		}
		return n
	}
}

// awaitRoundWriting waits until a round has files in its directory under
// src, the source of the probe's mount.
func awaitRoundWriting(probe *testenv.Process, src string) {
	probe.Await("a round in progress", 2*time.Minute, func() bool {
		m, _ := filepath.Glob(filepath.Join(src, "fsbench-*", "*"))
		return len(m) > 0
	})
}

// remount mounts src at mnt again with bindfs.
func remount(t *testing.T, src, mnt string) {
	t.Helper()
	bindfs, _ := testenv.LookPath("bindfs")
	if out, err := exec.Command(bindfs, src, mnt).CombinedOutput(); err != nil {
		t.Fatalf("bindfs: %v %s", err, out)
	}
}

// bindfsPID is the process id of the bindfs daemon serving mnt.
func bindfsPID(t *testing.T, mnt string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if len(args) > 1 && filepath.Base(args[0]) == "bindfs" && args[len(args)-1] == mnt {
			var pid int
			fmt.Sscanf(filepath.Base(filepath.Dir(p)), "%d", &pid)
			return pid
		}
	}
	t.Fatalf("no bindfs daemon serving %s", mnt)
	return 0
}

// TestProbeMountDaemonDies kills the FUSE daemon under a round: the round
// cannot remove its directory, the rounds fail while the mount is dead,
// and once it is mounted again a round removes what the dead one left.
func TestProbeMountDaemonDies(t *testing.T) {
	src := t.TempDir()
	mnt := testenv.Bindfs(t, src)
	probe, count := startMountProbe(t, mnt)
	probe.Await("a round that passes", 2*time.Minute, func() bool { return count("pass") >= 1 })
	awaitRoundWriting(probe, src)
	if err := syscall.Kill(bindfsPID(t, mnt), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	probe.Await("two rounds in error", 2*time.Minute, func() bool { return count("error") >= 2 })
	if m, _ := filepath.Glob(filepath.Join(src, "fsbench-*")); len(m) == 0 {
		t.Fatal("the round under the dead mount removed its directory: nothing to test")
	}
	if out, err := exec.Command("umount", "-l", mnt).CombinedOutput(); err != nil {
		t.Fatalf("umount: %v %s", err, out)
	}
	remount(t, src, mnt)
	passed := count("pass")
	probe.Await("rounds that pass again", 2*time.Minute, func() bool { return count("pass") >= passed+2 })
	probe.Signal(syscall.SIGINT)
	probe.Wait(time.Minute)
	t.Logf("probe log:\n%s", probe.Stderr())
	_, causes := rounds(probe.Stderr())
	for _, c := range causes {
		if !strings.Contains(c, "the file system's daemon is gone") && !strings.Contains(c, "the mount is gone") {
			t.Errorf("cause %q does not say the mount failed", c)
		}
	}
	if ents, _ := os.ReadDir(src); len(ents) != 0 {
		t.Errorf("left in %s: %v", src, ents)
	}
}

// TestProbeExpectsAPhaseItLacks ends the probe after its first round, with
// a usage error naming the phases there are, rather than failing every
// round for a typing mistake.
func TestProbeExpectsAPhaseItLacks(t *testing.T) {
	testenv.NeedsServer(t, "the fsbench binary")
	dir := t.TempDir()
	out, err := exec.Command(testenv.Binary(t), "probe", "--interval", "10ms", "--expect", "wirte.p50<1s",
		"bench", dir, "--rw", "write", "--file-size", "64K", "--xfer-size", "16K", "--ops", "8").CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != ExitUsage {
		t.Fatalf("exit %v, want %d:\n%s", err, ExitUsage, out)
	}
	if !strings.Contains(string(out), "no phase wirte (it has write)") {
		t.Errorf("output:\n%s", out)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
