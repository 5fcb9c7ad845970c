package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
)

// parseResult parses a result written to stdout with -o json.
func parseResult(t *testing.T, stdout string) *report.Result {
	t.Helper()
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("%v\n%s", err, stdout)
	}
	return r
}

// checkRuns checks a repeated result: n runs, and each summary phase made
// from them (the median VALUE with every run's value in order, counts
// added up, the latency of every run's operations).
func checkRuns(t *testing.T, r *report.Result, n int) {
	t.Helper()
	if r.SchemaVersion != report.SchemaVersion || len(r.Runs) != n {
		t.Fatalf("schema %d, %d runs, want %d", r.SchemaVersion, len(r.Runs), n)
	}
	for _, p := range r.Phases {
		var ops, lat int64
		var values []float64
		for _, run := range r.Runs {
			for _, rp := range run.Phases {
				if rp.Name == p.Name {
					ops += rp.Ops
					lat += rp.Latency.Count
					values = append(values, rp.Value.Value)
				}
			}
		}
		s := p.Spread
		if s == nil || s.Runs != n || len(s.Values) != n {
			t.Fatalf("%s: spread %+v over %d runs", p.Name, s, n)
		}
		for i := range values {
			if s.Values[i] != values[i] {
				t.Errorf("%s: spread values %v, runs' values %v", p.Name, s.Values, values)
			}
		}
		if p.Value.Value < s.Min || p.Value.Value > s.Max || p.Ops != ops || p.Latency.Count != lat {
			t.Errorf("%s: value %v outside %v..%v, or ops %d/%d latency samples %d/%d not every run's",
				p.Name, p.Value.Value, s.Min, s.Max, p.Ops, ops, p.Latency.Count, lat)
		}
	}
}

// TestRepeatBench: --repeat keeps every run, summarises them, leaves
// nothing behind, and a comparison of two repeated results tests the runs.
func TestRepeatBench(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := runFsbench(t, benchArgs(dir, "--repeat", "3", "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parseResult(t, stdout)
	checkRuns(t, r, 3)
	if len(r.Phases) != 5 || !strings.Contains(stderr, "Run 3 of 3") {
		t.Errorf("%d phases; stderr %s", len(r.Phases), stderr)
	}
	if l := leftIn(t, dir); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
	stdout, _, code = runFsbench(t, benchArgs(dir, "--repeat", "2")...)
	if code != 0 || !strings.Contains(stdout, "RUNS: MIN-MAX") || !strings.Contains(stdout, "medians of 2 runs") {
		t.Errorf("table of a repeated run (exit %d):\n%s", code, stdout)
	}
}

// TestRepeatCompare: two repeated results compare over their runs; the
// figures of a result against itself are the same, and the verdict names
// the runs and the test.
func TestRepeatCompare(t *testing.T) {
	dir := t.TempDir()
	a := writeRun(t, dir, "a.json", "--repeat", "4")
	stdout, stderr, code := runFsbench(t, "compare", a, a, "--threshold", "0%")
	if code != 0 || !strings.Contains(stdout, "4 against 4 runs") || strings.Contains(stdout, "REGRESSION") {
		t.Errorf("a result against itself (exit %d): %s%s", code, stdout, stderr)
	}
	stdout, _, _ = runFsbench(t, "compare", a, a, "-o", "json")
	if !strings.Contains(stdout, `"old_runs": 4`) || !strings.Contains(stdout, `"p_value"`) {
		t.Errorf("json comparison of repeated results: %s", stdout)
	}
}

func writeRun(t *testing.T, dir, name string, extra ...string) string {
	t.Helper()
	path := dir + "/" + name
	_, stderr, code := runFsbench(t, benchArgs(t.TempDir(), append(extra, "--result-file", path, "-q")...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	return path
}

// TestRepeatOtherCommands: checkpoint and objbench repeat too; objbench's
// functional checks run once, in the first run.
func TestRepeatOtherCommands(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := runFsbench(t, "checkpoint", dir, "-p", "2", "--size", "8M", "--repeat", "2", "-o", "json")
	if code != 0 {
		t.Fatalf("checkpoint: exit %d: %s", code, stderr)
	}
	checkRuns(t, parseResult(t, stdout), 2)
	store := t.TempDir()
	stdout, stderr, code = runFsbench(t, "objbench", "--storage", "file", store+"/", "-p", "2", "--big-object-size", "8M",
		"--small-objects", "10", "--repeat", "2", "-o", "json")
	if code != 0 {
		t.Fatalf("objbench: exit %d: %s", code, stderr)
	}
	r := parseResult(t, stdout)
	checkRuns(t, r, 2)
	if len(r.Checks) == 0 || strings.Count(stderr, "Start Functional Testing") != 1 {
		t.Errorf("functional checks: %d in the result, started %d times", len(r.Checks), strings.Count(stderr, "Start Functional Testing"))
	}
	if l := leftIn(t, store); len(l) != 0 {
		t.Errorf("left in the store: %v", l)
	}
}

func TestRepeatBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{benchArgs(t.TempDir(), "--repeat", "0"), "--repeat 0: want 1 or more runs"},
		{[]string{"train", t.TempDir(), "--repeat", "2", "--find-max"}, "--repeat and --find-max"},
	} {
		_, stderr, code := runFsbench(t, c.args...)
		if code != ExitUsage || !strings.Contains(stderr, c.msg) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d, %q", c.args, code, stderr)
		}
	}
}

// leftIn lists what is left in dir.
func leftIn(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// TestBenchIntervalKeepsDefault: --interval records the default
// benchmark's series instead of turning bench into a one-phase workload,
// and a default-benchmark flag refused with a workload names the flag
// that made it one.
func TestBenchIntervalKeepsDefault(t *testing.T) {
	stdout, stderr, code := runFsbench(t, benchArgs(t.TempDir(), "--interval", "20ms", "-o", "json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r := parseResult(t, stdout)
	if len(r.Phases) != 5 || r.Parameters.Get("workload") != nil {
		t.Fatalf("phases %d, workload %v: want the default benchmark", len(r.Phases), r.Parameters.Get("workload"))
	}
	for _, p := range r.Phases {
		if len(p.Series) == 0 {
			t.Errorf("%s: no series", p.Name)
		}
	}
	if !strings.Contains(stderr, "write-big          time") {
		t.Errorf("no interval header on stderr: %s", stderr)
	}
	_, stderr, code = runFsbench(t, "bench", t.TempDir(), "--rw", "read", "--big-file-size", "1G")
	if code != ExitUsage || !strings.Contains(stderr, "--big-file-size is a flag of the default benchmark, and --rw makes this run a workload") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}
