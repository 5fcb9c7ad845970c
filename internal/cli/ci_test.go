package cli

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/schema"
)

func TestQuickPreset(t *testing.T) {
	tests := []struct {
		args       []string
		big        int64
		smallCount int
		quick      bool
	}{
		{[]string{"/mnt", "--quick"}, 64 * units.MiB, 1000, true},
		{[]string{"/mnt", "--quick", "--big-file-size", "8M"}, 8 * units.MiB, 1000, true},
		{[]string{"/mnt", "--small-file-count", "3", "--quick"}, 64 * units.MiB, 3, true},
		{[]string{"/mnt"}, units.GiB, 100, false},
	}
	for _, tt := range tests {
		o, code, msg := parseBench(t, nil, tt.args...)
		if code != 0 {
			t.Fatalf("%q: exit %d: %s", tt.args, code, msg)
		}
		if o.BigFileSize != tt.big || o.SmallFileCount != tt.smallCount || o.CI.Quick != tt.quick {
			t.Errorf("%q: big %d, small count %d", tt.args, o.BigFileSize, o.SmallFileCount)
		}
	}
}

func TestExpectFlags(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.expect", "# team thresholds\nwrite-big >= 100MiB/s # 1 GiB files\n\nstat.p99<5ms\n")
	bad := write("bad.expect", "errors==0\nstat.p99 < 5 furlongs\n")
	empty := write("empty.expect", "# nothing yet\n")
	compareDir := filepath.Join(testenv.RepoRoot(), "testdata", "compare")

	o, code, msg := parseBench(t, nil, "/mnt", "--expect", "errors==0", "--expect-file", good, "--expect", "read-big>1GiB/s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	var got []string
	for _, e := range o.CI.Exprs {
		got = append(got, e.String())
	}
	if strings.Join(got, " ") != "errors==0 read-big>1GiB/s write-big>=100MiB/s stat.p99<5ms" {
		t.Errorf("expressions %q", got)
	}
	o, code, msg = parseBench(t, nil, "/mnt", "--baseline", filepath.Join(compareDir, "old.json"), "--threshold", "10%", "--baseline-metrics", "throughput,p99")
	if code != 0 || o.CI.base == nil || *o.CI.Threshold != 10 || strings.Join(o.CI.Kinds, ",") != "throughput,p99" {
		t.Errorf("baseline: exit %d: %s", code, msg)
	}

	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"--expect", "write-big>=200"}, "a throughput needs a unit"},
		{[]string{"--expect", "stat>=5MiB/s"}, "stat moves no data"},
		{[]string{"--expect", "stat.p99<5MiB/s"}, "stat.p99 is a latency"},
		{[]string{"--expect", "upload>=5MiB/s"}, `bench measures no metric "upload"`},
		{[]string{"--expect", "functional"}, "bench runs no functional checks"},
		{[]string{"--expect", "write-big=>5MiB/s"}, "write >= instead of =>"},
		{[]string{"--expect", "write-big>=5MiB/s", "--big-file-size", "0"}, "write-big is not measured in this run (--big-file-size 0)"},
		{[]string{"--expect", "stat>=5files/s", "--small-file-count", "0"}, "stat is not measured in this run (--small-file-count 0)"},
		{[]string{"--expect-file", filepath.Join(dir, "missing")}, "no such file or directory"},
		{[]string{"--expect-file", bad}, "bad.expect:2: "},
		{[]string{"--expect-file", empty}, "no expectations in it"},
		{[]string{"--threshold", "10%"}, "--threshold needs --baseline"},
		{[]string{"--baseline", filepath.Join(compareDir, "old.json"), "--threshold", "lots"}, "--threshold"},
		{[]string{"--baseline", filepath.Join(compareDir, "objbench.json")}, `is a "objbench" result, not "bench"`},
		{[]string{"--baseline", filepath.Join(compareDir, "not-a-result.json")}, "not an fsbench result"},
		{[]string{"--baseline", filepath.Join(dir, "missing.json")}, "no such file or directory"},
		{[]string{"--baseline", filepath.Join(compareDir, "old.json"), "--baseline-metrics", "p95"}, "unknown metric kind"},
	} {
		_, code, msg := parseBench(t, nil, append([]string{"/mnt"}, tt.args...)...)
		if code != ExitUsage || !strings.Contains(msg, tt.want) {
			t.Errorf("%q: exit %d, %q; want 2 and %q", tt.args, code, msg, tt.want)
		}
	}
}

func TestFinishCI(t *testing.T) {
	app, _, _ := testApp(nil)
	res := &report.Result{Command: "objbench", Checks: []report.Check{
		{Category: "basic", Name: "put an object", Status: report.CheckPass},
		{Category: "sync", Name: "multipart upload", Status: report.CheckNotSupport},
	}}
	if err := app.finishCI(res, &CIOptions{}); err != nil {
		t.Errorf("all checks passed: %v", err)
	}
	res.Checks = append(res.Checks, report.Check{Category: "basic", Name: "list objects", Status: report.CheckFailed})
	err := app.finishCI(res, &CIOptions{})
	if !errors.Is(err, ErrExpectation) || ExitCode(err) != ExitExpectation || err.Error() != "1 functional check failed: basic/list objects" {
		t.Errorf("failed check: %v", err)
	}
}

// runFsbench runs the real binary and returns stdout, stderr and exit code.
func runFsbench(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runFsbenchEnv(t, nil, args...)
}

// runFsbenchEnv is runFsbench with extra environment variables.
func runFsbenchEnv(t *testing.T, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(testenv.Binary(t), args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.String(), errb.String(), ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errb.String(), 0
}

var smallBench = []string{"-p", "2", "--big-file-size", "4M", "--small-file-count", "5"}

func benchArgs(dir string, extra ...string) []string {
	return append(append([]string{"bench", dir}, smallBench...), extra...)
}

// TestCIExitCodes runs the real binary: expectations that hold exit 0, one
// that fails exits 3 with the result still written, a bad expectation
// exits 2 before anything touches the storage.
func TestCIExitCodes(t *testing.T) {
	dir := t.TempDir()

	stdout, stderr, code := runFsbench(t, benchArgs(dir, "--expect", "write-big>0MiB/s", "--expect", "stat.p99>=0ms", "--expect", "errors==0")...)
	if code != ExitOK {
		t.Fatalf("passing expectations: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{"EXPECTATION", "write-big>0MiB/s", "| PASS"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("table lacks %q:\n%s", want, stdout)
		}
	}

	// 32 blocks of 1 MiB: enough operations to judge the rate.
	stdout, stderr, code = runFsbench(t, benchArgs(dir, "--big-file-size", "16M", "--expect", "errors==0", "--expect", "write-big>=1000000TiB/s", "--json")...)
	if code != ExitExpectation {
		t.Fatalf("failing expectation: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "fsbench: 1 of 2 expectations failed: write-big>=1000000TiB/s") {
		t.Errorf("stderr: %s", stderr)
	}
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatalf("no result written on a failed expectation: %v\n%s", err, stdout)
	}
	if len(r.Expectations) != 2 || !r.Expectations[0].Pass || r.Expectations[1].Pass ||
		r.Expectations[1].Unit != "TiB/s" || r.Expectations[1].Measured <= 0 || !strings.Contains(r.Expectations[1].Reason, "is not >= 1000000 TiB/s") {
		t.Errorf("expectations in JSON: %+v", r.Expectations)
	}

	for _, args := range [][]string{
		{"--expect", "stat>=5MiB/s"},
		{"--expect", "nonsense>=1MiB/s"},
		{"--expect", "write-big>>1MiB/s"},
		{"--expect-file", filepath.Join(dir, "nope")},
	} {
		stdout, stderr, code := runFsbench(t, benchArgs(dir, args...)...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "(see 'fsbench bench --help')") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d\nstdout %s\nstderr %s", args, code, stdout, stderr)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}

	// compare, through main's os.Exit.
	pairs := filepath.Join(testenv.RepoRoot(), "testdata", "compare")
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"old.json", "new-within.json", "--threshold", "10%"}, ExitOK},
		{[]string{"old.json", "new-regression.json", "--threshold", "10%"}, ExitExpectation},
		{[]string{"old.json", "new-regression.json"}, ExitOK},
		{[]string{"old.json", "objbench.json"}, ExitUsage},
		{[]string{"old.json", "missing.json"}, ExitUsage},
	} {
		args := []string{"compare", filepath.Join(pairs, tc.args[0]), filepath.Join(pairs, tc.args[1])}
		if _, stderr, code := runFsbench(t, append(args, tc.args[2:]...)...); code != tc.code {
			t.Errorf("compare %q: exit %d, want %d: %s", tc.args, code, tc.code, stderr)
		}
	}
}

// TestCIJUnit checks -o junit from the real binary, with a failing
// expectation (the maximum of the 10 stats, judged however few they are)
// and one too short to judge (their p99 against a bound its interval
// straddles: 10 samples cannot bound a p99 from above), which is skipped.
func TestCIJUnit(t *testing.T) {
	stdout, stderr, code := runFsbench(t, benchArgs(t.TempDir(), "-o", "junit", "--expect", "errors==0",
		"--expect", "stat.max<0.000001us", "--expect", "stat.p99<3600s")...)
	if code != ExitExpectation {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var doc report.JUnitSuites
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not JUnit XML: %v\n%s", err, stdout)
	}
	s := doc.Suites[0]
	if len(doc.Suites) != 1 || s.Tests != 8 || s.Failures != 1 || s.Errors != 0 || s.Skipped != 1 {
		t.Fatalf("suite: %d tests, %d failures, %d errors, %d skipped\n%s", s.Tests, s.Failures, s.Errors, s.Skipped, stdout)
	}
	var names []string
	for _, c := range s.Cases {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "write-big,read-big,write-small,read-small,stat,errors==0,stat.max<0.000001us,stat.p99<3600s" {
		t.Errorf("testcases %q", names)
	}
	f := s.Cases[6].Failure
	if f == nil || !strings.Contains(f.Message, "us is not < 1e-06 us") && !strings.Contains(f.Message, "is not < 0.000001 us") {
		t.Errorf("failure %+v", f)
	}
	if sk := s.Cases[7].Skipped; sk == nil || sk.Message != "too short to judge: 10 latency samples, p99 needs 1000: a longer run or --repeat" {
		t.Errorf("skipped %+v", sk)
	}
}

// TestCITooShort runs the real binary with an expectation the run holds
// too few samples to judge: it neither passes nor fails; exit 0, a
// warning saying what would make it judgeable, and the verdict in JSON.
// With --strict the same run fails (exit 3); and a bound that every
// plausible value of the p99 breaks fails however few the samples.
func TestCITooShort(t *testing.T) {
	dir := t.TempDir()
	stdout, stderr, code := runFsbench(t, benchArgs(dir, "--json", "--expect", "errors==0", "--expect", "stat.p99<3600s")...)
	if code != ExitOK {
		t.Fatalf("exit %d, want 0: %s", code, stderr)
	}
	want := "Warning: stat.p99<3600s: too short to judge: 10 latency samples, p99 needs 1000: a longer run or --repeat"
	if !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatal(err)
	}
	if x := r.Expectations; len(x) != 2 || x[0].Verdict != report.VerdictPass || x[1].Verdict != report.VerdictTooShort || !x[1].Pass {
		t.Errorf("expectations in JSON: %+v", x)
	}

	stdout, stderr, code = runFsbench(t, benchArgs(dir, "--json", "--strict", "--expect", "errors==0", "--expect", "stat.p99<3600s")...)
	if code != ExitExpectation || !strings.Contains(stderr, "1 of 2 expectations failed: stat.p99<3600s") {
		t.Fatalf("--strict: exit %d, want 3: %s", code, stderr)
	}
	if r, err = report.ReadJSON(strings.NewReader(stdout)); err != nil {
		t.Fatal(err)
	}
	if x := r.Expectations[1]; x.Pass || x.Verdict != report.VerdictFail || !strings.HasPrefix(x.Reason, "too short to judge (--strict): 10 latency samples") {
		t.Errorf("--strict: expectation in JSON: %+v", x)
	}

	// Every one of the 10 stats takes longer than a nanosecond: the p99's
	// interval lies wholly above it.
	_, stderr, code = runFsbench(t, benchArgs(dir, "--expect", "stat.p99<0.001us")...)
	if code != ExitExpectation || !strings.Contains(stderr, "expectations failed: stat.p99<0.001us") {
		t.Errorf("a p99 of 10 samples wholly above its bound: exit %d, want 3: %s", code, stderr)
	}
}

// TestCIBaseline compares a run with a saved result: with a threshold too
// tight for a baseline that is 1000 times faster, it exits 3; against
// itself with a wide threshold it passes.
func TestCIBaseline(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(t.TempDir(), "base.json")
	if _, stderr, code := runFsbench(t, benchArgs(dir, "-q", "--result-file", saved)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, _ := os.ReadFile(saved)
	fast := fasterBaseline(t, b)

	stdout, stderr, code := runFsbench(t, benchArgs(dir, "--baseline", fast, "--threshold", "10%", "--baseline-metrics", "throughput", "--json")...)
	if code != ExitExpectation {
		t.Fatalf("regression: exit %d\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "Baseline comparison:") || !strings.Contains(stderr, "REGRESSION") {
		t.Errorf("stderr lacks the comparison:\n%s", stderr)
	}
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Expectations) != 5 || r.Expectations[0].Pass || r.Expectations[0].Metric != "write-big" ||
		r.Expectations[0].Expr != "write-big within 10% of baseline" {
		t.Errorf("expectations %+v", r.Expectations)
	}

	stdout, stderr, code = runFsbench(t, benchArgs(dir, "--baseline", saved, "--threshold", "100000%", "--baseline-metrics", "throughput")...)
	if code != ExitOK || !strings.Contains(stdout, "no regression beyond 100000% vs baseline") {
		t.Errorf("no regression: exit %d\n%s\n%s", code, stdout, stderr)
	}
}

// TestCIInterrupt sends SIGINT to a bench with expectations once its run
// directory has a file: the exit code is 130, not 3, and the partial
// result (with the expectations) is printed.
func TestCIInterrupt(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(testenv.Binary(t), "bench", dir, "--big-file-size", bigButFits(t, dir, 1), "-p", "1", "--expect", "write-big>0B/s", "--json")
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	interruptWhen(t, cmd, func() bool {
		m, _ := filepath.Glob(filepath.Join(dir, "fsbench-*", "*"))
		return len(m) > 0
	})
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Fatalf("exit %d, want 130; stderr: %s", code, errb.String())
	}
	r, err := report.ReadJSON(&out)
	if err != nil {
		t.Fatalf("no partial result: %v", err)
	}
	if !r.Interrupted || len(r.Expectations) != 1 {
		t.Errorf("interrupted %v, expectations %+v", r.Interrupted, r.Expectations)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestCIObjbenchMinIO runs objbench with the CI flags against a real MinIO
// server: functional checks and expectations pass (exit 0) and show in
// JUnit; then an unmet expectation, one on an item S3 does not support, and
// a baseline 1000 times faster fail it (exit 3).
func TestCIObjbenchMinIO(t *testing.T) {
	m := testenv.NewMinIO(t)
	env := []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + m.SecretKey}
	url := m.URL("ci-smoke")
	small := []string{"--quick", "--big-object-size", "8M", "--small-objects", "10", "-p", "2", "-q"}
	saved := filepath.Join(t.TempDir(), "objbench.json")

	args := append([]string{"objbench", "--storage", "minio", url, "-o", "junit", "--result-file", saved,
		"--expect", "functional", "--expect", "upload>0MiB/s", "--expect", "put-small>0objects/s", "--expect", "errors==0"}, small...)
	stdout, stderr, code := runFsbenchEnv(t, env, args...)
	if code != ExitOK {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	var doc report.JUnitSuites
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not JUnit: %v\n%s", err, stdout)
	}
	classes := map[string]int{}
	for _, c := range doc.Suites[0].Cases {
		classes[strings.SplitN(c.ClassName, ".", 3)[1]]++
		if c.Failure != nil || c.Error != nil {
			t.Errorf("case %s %s failed: %+v %+v", c.ClassName, c.Name, c.Failure, c.Error)
		}
	}
	if classes["functional"] < 16 || classes["phase"] < 7 || classes["expectation"] != 4 {
		t.Errorf("testcases by class: %v", classes)
	}
	if strings.Contains(stdout+stderr, m.SecretKey) {
		t.Errorf("the secret key leaked into the output")
	}

	b, err := os.ReadFile(saved)
	if err != nil {
		t.Fatal(err)
	}
	checkSchema(t, "objbench result", b)
	fast := fasterBaseline(t, b)
	// 32 uploads of 1 MiB: enough to judge the rate.
	args = append([]string{"objbench", "--storage", "minio", url, "--json", "--skip-functional-tests",
		"--expect", "upload>=1000000TiB/s", "--expect", "chmod>=1ops/s",
		"--baseline", fast, "--threshold", "50%", "--baseline-metrics", "throughput"}, append(small, "--big-object-size", "32M", "--block-size", "1M")...)
	stdout, stderr, code = runFsbenchEnv(t, env, args...)
	if code != ExitExpectation {
		t.Fatalf("exit %d, want 3\n%s", code, stderr)
	}
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil {
		t.Fatal(err)
	}
	var reasons []string
	for _, x := range r.Expectations {
		if !x.Pass {
			reasons = append(reasons, x.Metric+": "+x.Reason)
		}
	}
	all := strings.Join(reasons, "\n")
	for _, want := range []string{"upload: 0.0", "is not >= 1000000 TiB/s", "chmod: chmod is not supported by this storage", "put-small: -", "% vs baseline"} {
		if !strings.Contains(all, want) {
			t.Errorf("failed expectations lack %q:\n%s", want, all)
		}
	}
}

// checkSchema validates a JSON result against pkg/schema/result.schema.json.
func checkSchema(t *testing.T, what string, data []byte) {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema.Result))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("result.schema.json", doc); err != nil {
		t.Fatal(err)
	}
	sch, err := c.Compile("result.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("%s does not match pkg/schema/result.schema.json: %v", what, err)
	}
}

// fasterBaseline writes the result b with every value a thousand times
// higher: a baseline that any run falls short of.
func fasterBaseline(t *testing.T, b []byte) string {
	t.Helper()
	var base report.Result
	if err := json.Unmarshal(b, &base); err != nil {
		t.Fatal(err)
	}
	for i := range base.Phases {
		base.Phases[i].Value.Value *= 1000
	}
	fast := filepath.Join(t.TempDir(), "fast.json")
	b, _ = json.Marshal(&base)
	if err := os.WriteFile(fast, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return fast
}
