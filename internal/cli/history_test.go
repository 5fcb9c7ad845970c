package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
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
		{"history", "show", "--history", h, "--html", filepath.Join(dir, "no", "such", "p.html")},
		{"compare", "--history", h, slow, slow},
		{"compare", "--history", h, "--threshold", "5%", slow},
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
