package cli

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// runCLI runs one fsbench command line in this process and returns its exit
// code, stdout and stderr.
func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	app := &App{IO: IO{In: strings.NewReader(""), Out: &out, Err: &errb, Getenv: func(string) string { return "" }}}
	code := Run(context.Background(), app, args)
	return code, out.String(), errb.String()
}

// TestCompareGolden runs `fsbench compare` on the result pairs under
// testdata/compare and checks exit code, stdout and stderr against the
// golden files in testdata/compare/golden (go test -run TestCompareGolden
// ./internal/cli -update rewrites them).
func TestCompareGolden(t *testing.T) {
	tests := []struct {
		name string
		args string
	}{
		{"regression", "old.json new-regression.json --threshold 10%"},
		{"regression-json", "old.json new-regression.json --threshold 10% -o json"},
		{"no-threshold", "old.json new-regression.json --metrics throughput"},
		{"within", "old.json new-within.json --threshold 10% --metrics throughput,p99"},
		{"small-only", "old.json new-small-only.json --threshold 10% --metrics throughput,p50"},
		{"mismatch", "old.json objbench.json --threshold 10%"},
		{"missing-file", "old.json nope.json"},
		{"not-a-result", "old.json not-a-result.json"},
		{"negative-figure", "old.json negative-figure.json"},
		{"negative-schema", "negative-schema.json old.json"},
		{"bad-threshold", "old.json new-within.json --threshold ten"},
	}
	dir := filepath.Join(testenv.RepoRoot(), "testdata", "compare")
	t.Chdir(dir)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"compare"}, strings.Fields(tt.args)...)
			code, stdout, stderr := runCLI(t, args...)
			got := fmt.Sprintf("$ fsbench %s\nexit %d\n--- stdout\n%s--- stderr\n%s", strings.Join(args, " "), code, stdout, stderr)
			checkGoldenFile(t, filepath.Join("golden", tt.name+".txt"), got)
		})
	}
}

func TestCompareFlags(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"compare", "a.json"}, ExitUsage, "expects two results, OLD and NEW"},
		{[]string{"compare", "a.json", "b.json", "-o", "csv"}, ExitUsage, "compare writes table or json"},
		{[]string{"compare", "a.json", "b.json", "--json", "-o", "csv"}, ExitUsage, "contradict"},
		{[]string{"compare", "a.json", "b.json", "--metrics", "p95"}, ExitUsage, `unknown metric kind "p95"`},
		{[]string{"compare", "a.json", "b.json", "--threshold", "-1%"}, ExitUsage, "non-negative"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, tt.args...)
		if code != tt.code || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", tt.args, code, stderr, tt.code, tt.want)
		}
	}
	var got *CompareOptions
	cmd := newCompareCmdWith(&App{}, func(_ context.Context, o *CompareOptions) error { got = o; return nil })
	cmd.SetArgs([]string{"a.json", "b.json", "--threshold", "12.5%", "--metrics", "throughput,p99", "--json"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Old != "a.json" || got.New != "b.json" || *got.Threshold != 12.5 || strings.Join(got.Kinds, ",") != "throughput,p99" || !got.JSON {
		t.Errorf("options %+v", got)
	}
}

// TestCompareDirectoryErrors: a directory side that holds no results, or
// results that are not runs of one job, is bad input with one line (exit
// 2); TestCompareRepeatedRuns compares directories of real runs.
func TestCompareDirectoryErrors(t *testing.T) {
	fixtures := filepath.Join(testenv.RepoRoot(), "testdata", "compare")
	dir := func(files ...string) string {
		d := filepath.Join(t.TempDir(), "runs[1]") // a name that is no glob
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for i, f := range files {
			b, err := os.ReadFile(filepath.Join(fixtures, f))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, fmt.Sprintf("%d.json", i+1)), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return d
	}
	old := filepath.Join(fixtures, "old.json")
	for _, tt := range []struct {
		side, want string
	}{
		{dir(), "no result files (*.json) in it"},
		{dir("old.json", "objbench.json"), "2.json are not runs of one job: " + "1.json is from fsbench bench"},
		{dir("old.json", "new-within.json", "not-a-result.json"), "3.json: "},
		{dir("old.json", "new-within.json"), "no stored histogram (written by an older fsbench)"},
	} {
		code, stdout, stderr := runCLI(t, "compare", old, tt.side, "--threshold", "10%")
		lines := strings.Split(strings.TrimSpace(stderr), "\n")
		if code != ExitUsage || !strings.Contains(stderr, tt.want) || len(lines) != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", tt.side, code, stdout, stderr, tt.want)
		}
	}
}
