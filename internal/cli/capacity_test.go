package cli

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

func TestCapacityFlags(t *testing.T) {
	o, code, msg := parseBench(t, nil, "/x", "--rw", "randread", "--duration", "2s", "--slo", "p99<5ms and p50<1ms")
	if code != 0 || len(o.Cap.SLO) != 2 || o.Cap.SLO.String() != "p99<5ms,p50<1ms" {
		t.Fatalf("--slo: exit %d %s, %+v", code, msg, o.Cap)
	}
	o, code, msg = parseBench(t, nil, "/x", "--rw", "randread", "--duration", "2s", "--curve")
	if code != 0 || len(o.Cap.Curve) != 6 || o.Cap.Curve[0] != 10 {
		t.Fatalf("--curve alone: exit %d %s, %+v", code, msg, o.Cap)
	}
	o, code, msg = parseBench(t, nil, "/x", "--rw", "stat", "--duration", "2s", "--curve=50,95,100")
	if code != 0 || len(o.Cap.Curve) != 3 || o.capacityRun().phase != "stat" {
		t.Fatalf("--curve=50,95,100: exit %d %s, %+v", code, msg, o.Cap)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rw", "randread", "--duration", "2s", "--slo", "p99>5ms"}, "--slo: invalid objective \"p99>5ms\": an objective is an upper bound"},
		{[]string{"--rw", "randread", "--duration", "2s", "--slo", "q99<5ms"}, "unknown statistic"},
		{[]string{"--rw", "randread", "--duration", "2s", "--slo", "p99<5"}, "needs a unit"},
		{[]string{"--rw", "randread", "--duration", "2s", "--slo", ""}, "need a value"},
		{[]string{"--rw", "randread", "--duration", "2s", "--curve=0,50"}, "--curve"},
		{[]string{"--rw", "randread", "--duration", "2s", "--curve", "10,50,100"}, "write --curve=10,50,100"},
		{[]string{"--slo", "p99<5ms"}, "workload"},
		{[]string{"--read-existing", "--slo", "p99<5ms"}, "workload"},
		{[]string{"--rw", "randread", "--slo", "p99<5ms"}, "give --duration"},
		{[]string{"--rw", "randread", "--duration", "2s", "--slo", "p99<5ms", "--rate", "100"}, "--rate sets one rate"},
		{[]string{"--rw", "randread", "--duration", "2s", "--slo", "p99<5ms", "--curve"}, "give one of them"},
		{[]string{"--rw", "randread", "--duration", "2s", "--expect", "capacity>=5000ops/s"}, "give --slo too"},
		{[]string{"--rw", "randread", "--duration", "2s", "--slo", "p99<5ms", "--expect", "capacity>=5ms"}, "capacity is a rate"},
	} {
		_, code, msg := parseBench(t, nil, append([]string{"/x"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line saying %q", c.args, code, msg, c.want)
		}
	}
}

func TestCapacityFlagsObjbench(t *testing.T) {
	o, code, msg := parseObjbench(t, nil, "--storage", "file", "/tmp/x/", "--workload", "get", "--duration", "1s", "--slo", "p99<5ms")
	if code != 0 || len(o.Cap.SLO) != 1 {
		t.Fatalf("exit %d %s", code, msg)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--slo", "p99<5ms"}, "give one, e.g. --workload get"},
		{[]string{"--workload", "get", "--slo", "p99<5ms"}, "give --duration"},
		{[]string{"--workload", "get", "--duration", "1s", "--curve=5,x"}, "--curve"},
		{[]string{"--workload", "get", "--duration", "1s", "--expect", "capacity>=1ops/s"}, "give --slo too"},
	} {
		_, code, msg := parseObjbench(t, nil, append([]string{"--storage", "file", "/tmp/x/"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line saying %q", c.args, code, msg, c.want)
		}
	}
}

// capacityResult runs fsbench with args and reads its JSON result.
func capacityResult(t *testing.T, wantCode int, args ...string) (*report.Result, string) {
	t.Helper()
	stdout, stderr, code := runFsbench(t, append(args, "--json")...)
	if code != wantCode {
		t.Fatalf("%v: exit %d, want %d\n%s", args, code, wantCode, stderr)
	}
	checkSchema(t, args[0]+" --slo or --curve", []byte(stdout))
	var res report.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, stdout)
	}
	return &res, stderr
}

// TestSLOOnTmpfs runs the search on tmpfs: a loose objective is met at
// some rate, the answer lies in its interval with samples enough at
// every probe, and --expect capacity passes below the answer and fails
// (exit 3) above it.
func TestSLOOnTmpfs(t *testing.T) {
	dir := testenv.Tmpfs(t, "64M")
	args := []string{"bench", dir, "--rw", "randread", "--xfer-size", "4K", "--file-size", "4M", "--duration", "300ms", "-p", "2",
		"--slo", "p99<100ms,errors<=0%", "-q"}
	res, _ := capacityResult(t, ExitOK, append(args, "--expect", "capacity>=1ops/s")...)
	c := res.Capacity
	if c == nil || c.Answer == nil || c.Objective != "p99<100ms,errors<=0%" || c.Phase != "randread" {
		t.Fatalf("capacity %+v", c)
	}
	a := c.Answer
	if !(a.OpsPerSec > 0 && a.Low == a.OpsPerSec && a.High >= a.Low && a.High <= c.MaxOpsPerSec) || a.Latency.P99 >= 100e3 {
		t.Errorf("answer %+v, max %g", a, c.MaxOpsPerSec)
	}
	if c.Steps[0].Rate != 0 || len(c.Steps) < 2 || len(res.Phases) != 1 || res.Phases[0].Name != "randread" {
		t.Errorf("steps %d (first at %g), phases %d", len(c.Steps), c.Steps[0].Rate, len(res.Phases))
	}
	for _, s := range c.Steps[1:] {
		if s.Holds == nil || *s.Holds && s.Ops < 1000 {
			t.Errorf("step at %g: holds %v with %d ops (p99 needs 1000)", s.Rate, s.Holds, s.Ops)
		}
	}
	if len(res.Expectations) != 1 || !res.Expectations[0].Pass {
		t.Errorf("capacity>=1ops/s: %+v", res.Expectations)
	}
	above := a.High*10 + 1e6
	res, stderr := capacityResult(t, ExitExpectation, append(args, "--expect", "capacity>="+ratef(above)+"ops/s")...)
	if len(res.Expectations) != 1 || res.Expectations[0].Pass || !strings.Contains(stderr, "expectations failed: capacity>=") {
		t.Errorf("capacity above the answer: %+v\n%s", res.Expectations, stderr)
	}
}

// TestCurveOnTmpfs runs --curve on a metadata workload: the maximum,
// then each step as a phase of its own, at its share of the maximum, each
// run twice (--repeat 2).
func TestCurveOnTmpfs(t *testing.T) {
	dir := testenv.Tmpfs(t, "64M")
	res, stderr := capacityResult(t, ExitOK, "bench", dir, "--rw", "stat", "--files", "50", "--duration", "200ms", "-p", "2", "--curve=25,50,100", "--repeat", "2")
	c := res.Capacity
	if c == nil || c.Answer != nil || len(c.Steps) != 4 || len(res.Phases) != 3 {
		t.Fatalf("capacity %+v, %d phases\n%s", c, len(res.Phases), stderr)
	}
	for i, want := range []string{"stat.25pct", "stat.50pct", "stat.100pct"} {
		s := c.Steps[i+1]
		if res.Phases[i].Name != want || s.Percent != []float64{25, 50, 100}[i] || s.Rate <= 0 || s.Ops == 0 || s.Runs != 2 {
			t.Errorf("step %d: phase %s, %+v", i, res.Phases[i].Name, s)
		}
	}
}

func ratef(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }

// TestSLOInterrupted: Ctrl-C during a search exits 130 with the steps done
// so far in the result (and what the interrupted run measured, if it got
// as far as its phase), and leaves no file behind.
func TestSLOInterrupted(t *testing.T) {
	dir := testenv.Tmpfs(t, "64M")
	cmd := exec.Command(testenv.Binary(t), "bench", dir, "--rw", "randread", "--xfer-size", "4K", "--file-size", "4M",
		"--duration", "1s", "-p", "2", "--slo", "p99<1ns", "--json")
	var stdout bytes.Buffer
	cmd.Stdout = &stdout
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	for sc.Scan() { // the first open-loop rate judged: the search is under way
		if strings.Contains(sc.Text(), "does not hold") {
			break
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	go io.Copy(io.Discard, stderr)
	_ = cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Fatalf("exit %d, want %d", code, ExitInterrupted)
	}
	var res report.Result
	if err := json.Unmarshal(stdout.Bytes(), &res); err != nil {
		t.Fatalf("%v\n%s", err, stdout.String())
	}
	if !res.Interrupted || res.Capacity == nil || len(res.Capacity.Steps) < 2 || res.Capacity.Answer != nil || len(res.Phases) > 1 {
		t.Errorf("interrupted %v, capacity %+v, %d phases", res.Interrupted, res.Capacity, len(res.Phases))
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind in %s: %v", dir, left)
	}
}
