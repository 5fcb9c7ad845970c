package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
)

// writeRead writes a result of one read phase at value MiB/s, run i
// minutes after a fixed time, and returns its path.
func writeRead(t *testing.T, dir string, i int, value float64) string {
	t.Helper()
	res := &report.Result{SchemaVersion: report.SchemaVersion, Tool: "fsbench", Command: "bench",
		StartedAt: time.Date(2026, 12, 1, 0, i, 0, 0, time.UTC), Target: report.Target{Path: "/mnt/data"},
		Parameters: report.Params{{Key: "threads", Value: 2}},
		Phases:     []report.PhaseResult{{Name: "read", Title: "read", Value: report.Measure{Value: value, Unit: report.UnitMiBPerSec}}}}
	p := filepath.Join(dir, fmt.Sprintf("r%02d.json", i))
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// history check (and compare --history) exits 3 only for a result outside
// its series; a too short history is exit 0 and says how many runs it
// needs; a history of an unknown scheme is a usage error.
func TestHistoryCheckExits(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "h")
	var files []string
	for i, v := range []float64{100, 97, 103} {
		files = append(files, writeRead(t, dir, i, v))
	}
	slow := writeRead(t, dir, 30, 60)
	failed, _ := readResult(writeRead(t, dir, 40, 1))
	failed.Error = "read /mnt/data/x: input/output error"
	b, _ := json.Marshal(failed)
	failedFile := filepath.Join(dir, "failed.json")
	if err := os.WriteFile(failedFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCLI(t, "history", "add", "--history", h, failedFile); code != 0 || !strings.Contains(stderr, "not kept") {
		t.Errorf("a failed run: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, append([]string{"history", "add", "--history", h, "--label", "abc"}, files...)...); code != 0 || !strings.Contains(stderr, "starts series") {
		t.Fatalf("add: exit %d: %s", code, stderr)
	}
	code, out, _ := runCLI(t, "history", "check", "--history", h, slow)
	if code != 0 || !strings.Contains(out, "2 more needed") {
		t.Errorf("short history: exit %d:\n%s", code, out)
	}
	for i, v := range []float64{99, 101, 98, 102} {
		files = append(files, writeRead(t, dir, 10+i, v))
	}
	if code, _, stderr := runCLI(t, append([]string{"history", "add", "--history", h, "--label", "def"}, files[3:]...)...); code != 0 {
		t.Fatalf("add: exit %d: %s", code, stderr)
	}
	for _, args := range [][]string{{"history", "check", "--history", h}, {"compare", "--history", h}} {
		code, out, stderr := runCLI(t, append(args, slow)...)
		if code != ExitExpectation || !strings.Contains(out, "OUTSIDE") || !strings.Contains(stderr, "outside its history") {
			t.Errorf("%v slow: exit %d:\n%s%s", args[:2], code, out, stderr)
		}
		code, out, _ = runCLI(t, append(args, writeRead(t, dir, 31, 99))...)
		if code != 0 || !strings.Contains(out, "within its history") {
			t.Errorf("%v like the others: exit %d:\n%s", args[:2], code, out)
		}
		// --threshold: the smallest change that counts. slow is 40% below.
		code, out, _ = runCLI(t, append(args, "--threshold", "50%", slow)...)
		if code != 0 || !strings.Contains(out, "within the threshold, beyond the bound") || !strings.Contains(out, "1 beyond the bound by no more than the 50% threshold") {
			t.Errorf("%v slow, --threshold 50%%: exit %d:\n%s", args[:2], code, out)
		}
		if code, out, _ = runCLI(t, append(args, "--threshold", "30%", slow)...); code != ExitExpectation {
			t.Errorf("%v slow, --threshold 30%%: exit %d:\n%s", args[:2], code, out)
		}
	}
	page := filepath.Join(dir, "trend.html")
	code, out, _ = runCLI(t, "history", "show", "--history", h, "--last", "3", "--html", page)
	if code != 0 || !strings.Contains(out, "7 runs") || !strings.Contains(out, "latest: def") {
		t.Errorf("show: exit %d:\n%s", code, out)
	}
	if b, err := os.ReadFile(page); err != nil || !strings.Contains(string(b), `<a href="h/results/`) {
		t.Errorf("trend page: %v", err)
	}
	for _, args := range [][]string{
		{"history", "show", "--history", "ftp://host/h"},
		{"history", "show"},
		{"history", "foo"},
		{"history", "show", "--history", h, "--html", filepath.Join(dir, "no", "such", "p.html")},
		{"compare", "--history", h, slow, slow},
		{"compare", "--history", h, "--metrics", "throughput", slow},
		{"history", "check", "--history", h, "--threshold", "lots", slow},
		{"compare", "--history", h, "--threshold", "-5%", slow},
		{"history", "check", "--history", h, "--false-alarm", "70%", slow},
		{"bench", dir, "--history", "ftp://host/h"},
	} {
		if code, _, stderr := runCLI(t, args...); code != ExitUsage || !strings.HasPrefix(stderr, "fsbench: ") {
			t.Errorf("%v: exit %d: %s", args, code, stderr)
		}
	}
}

// --history on a benchmark keeps its result: a second run of the same job
// joins the first's series, one with other parameters starts its own and
// says which differ.
func TestHistoryFlagKeepsResult(t *testing.T) {
	dir, h := t.TempDir(), filepath.Join(t.TempDir(), "h")
	job := []string{"fio", "--name=r", "--rw=read", "--bs=64k", "--size=1M", "--directory=" + dir, "-q", "--history", h}
	for i, want := range []string{"starts series", "added to series"} {
		if code, _, stderr := runCLI(t, job...); code != 0 || !strings.Contains(stderr, want) {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr)
		}
	}
	job[3] = "--bs=128k"
	code, _, stderr := runCLI(t, job...)
	if code != 0 || !strings.Contains(stderr, "starts series") || !strings.Contains(stderr, "parameters differ") {
		t.Fatalf("other block size: exit %d: %s", code, stderr)
	}
}

// --expect NAME.vs_history judges the run against its series in
// --history before the run joins it: too short a series is no failure, a
// run far below its series fails (exit 3), one inside a wide series
// passes; without --history the clause is a usage error.
func TestExpectVsHistory(t *testing.T) {
	dir, hdir := t.TempDir(), t.TempDir()
	job := []string{"fio", "--name=r", "--rw=read", "--bs=64k", "--size=1M", "--directory=" + dir, "-q"}
	first := filepath.Join(hdir, "first.json")
	if code, _, stderr := runCLI(t, append(job, "--result-file", first)...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, append(job, "--expect", "r.vs_history")...); code != ExitUsage || !strings.Contains(stderr, "give --history") {
		t.Errorf("without --history: exit %d: %s", code, stderr)
	}
	res, err := readResult(first)
	if err != nil {
		t.Fatal(err)
	}
	v := res.Phases[0].Value.Value
	// fill writes a history of runs of this job at the values factors x v.
	fill := func(h string, factors ...float64) {
		for i, f := range factors {
			res.StartedAt = res.StartedAt.Add(-time.Duration(i+1) * time.Hour)
			res.Phases[0].Value.Value = v * f
			p := filepath.Join(hdir, fmt.Sprintf("h%d.json", i))
			b, _ := json.Marshal(res)
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			if code, _, stderr := runCLI(t, "history", "add", "--history", h, p); code != 0 {
				t.Fatalf("add: %s", stderr)
			}
		}
	}
	short, fast, wide := filepath.Join(hdir, "short"), filepath.Join(hdir, "fast"), filepath.Join(hdir, "wide")
	fill(short, 1, 1)
	fill(fast, 100, 101, 99, 100, 102, 98)
	fill(wide, 0.01, 10, 0.1, 5, 0.5, 20)
	for _, c := range []struct {
		h, want string
		code    int
	}{{short, "too short to judge", 0}, {fast, "beyond the bound", ExitExpectation}, {wide, "", 0}} {
		code, out, stderr := runCLI(t, append(job, "--expect", "r.vs_history", "--history", c.h, "--json")...)
		if code != c.code || !strings.Contains(out+stderr, c.want) {
			t.Errorf("%s: exit %d:\n%s", filepath.Base(c.h), code, stderr)
		}
	}
}

// A history under a bucket prefix of MinIO, reached with the credentials
// of ACCESS_KEY and SECRET_KEY: add and show work through the binary, and
// the secret is never printed.
func TestHistoryOnMinIO(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	bucket := "history-" + time.Now().Format("150405000000")
	s, err := object.Open(context.Background(), "minio", m.URL(bucket), object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	env := []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + m.SecretKey}
	dir, h := t.TempDir(), m.URL(bucket)+"/ci/history"
	for i := range 3 {
		if _, stderr, code := runFsbenchEnv(t, env, "history", "add", "--history", h, writeRead(t, dir, i, 100)); code != 0 {
			t.Fatalf("add: exit %d: %s", code, stderr)
		}
	}
	stdout, stderr, code := runFsbenchEnv(t, env, "history", "show", "--history", h)
	if code != 0 || !strings.Contains(stdout, "3 runs") || strings.Contains(stdout+stderr, m.SecretKey) {
		t.Errorf("show: exit %d:\n%s%s", code, stdout, stderr)
	}
	if _, stderr, code := runFsbenchEnv(t, []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=wrong"}, "history", "show", "--history", h); code == 0 || strings.Contains(stderr, m.SecretKey) {
		t.Errorf("a wrong secret: exit %d: %s", code, stderr)
	} else {
		t.Logf("a wrong secret: exit %d: %s", code, stderr)
	}
	probe := []string{"probe", "--interval", "1ms", "--rounds", "3", "--history", m.URL(bucket) + "/probe",
		"bench", dir, "--rw", "write", "--file-size", "64K", "--xfer-size", "16K", "--ops", "8", "-p", "2"}
	if _, stderr, code := runFsbenchEnv(t, env, probe...); code != 0 || strings.Count(stderr, " history=") != 3 {
		t.Fatalf("probe --history on MinIO: exit %d: %s", code, stderr)
	}
	if stdout, stderr, code := runFsbenchEnv(t, env, "history", "show", "--history", m.URL(bucket)+"/probe"); code != 0 || !strings.Contains(stdout, "3 runs") {
		t.Errorf("show of the probe's history: exit %d:\n%s%s", code, stdout, stderr)
	}
	_, stderr, code = runFsbenchEnv(t, []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=wrong"}, probe...)
	// The history refuses the first round: the probe ends, exit 1,
	// rather than run for weeks keeping nothing.
	if strings.Contains(stderr, m.SecretKey) || code != 1 || !strings.Contains(stderr, "fsbench: --history: ") {
		t.Errorf("probe with a wrong secret: exit %d: %s", code, stderr)
	}
	t.Logf("probe with a wrong secret: exit %d: %s", code, stderr)
}

// report --history ends the page with the trend of the results' series:
// every run of the series a point linked to its result in the history;
// a history that holds no series of the results is an error, and a
// history of an unknown scheme a usage error.
func TestReportHistoryTrend(t *testing.T) {
	dir := t.TempDir()
	h := filepath.Join(dir, "h")
	var files []string
	for i := range 12 {
		files = append(files, writeRead(t, dir, i, 100+float64(i%3)))
	}
	if code, _, stderr := runCLI(t, append([]string{"history", "add", "--history", h}, files...)...); code != 0 {
		t.Fatalf("add: exit %d: %s", code, stderr)
	}
	page := filepath.Join(dir, "report.html")
	if code, _, stderr := runCLI(t, "report", files[11], "--history", h, "--html", page); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{`<a href="#trend">Trend</a>`, `<section id="trend">`, `<a href="h/results/`} {
		if !strings.Contains(s, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// 12 runs of one figure, read (the results have no latencies).
	if n := strings.Count(s, `<circle class="pt"`); n != 12 {
		t.Errorf("%d points in the trend, want 12", n)
	}
	if code, _, stderr := runCLI(t, "report", files[0], "--history", filepath.Join(dir, "empty"), "--html", page); code != 1 ||
		!strings.Contains(stderr, "holds no series of these results") {
		t.Errorf("an empty history: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "report", files[0], "--history", "ftp://x/y", "--html", page); code != 2 {
		t.Errorf("an ftp history: exit %d: %s", code, stderr)
	}
}
