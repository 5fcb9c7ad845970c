package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

func reportFixture(name string) string {
	return filepath.Join(testenv.RepoRoot(), "testdata", "report", name)
}

// TestReportErrors: bad input is a usage error (exit 2) with one line that
// names the file, and no page is written.
func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	notResult := filepath.Join(testenv.RepoRoot(), "testdata", "compare", "not-a-result.json")
	negative := filepath.Join(testenv.RepoRoot(), "testdata", "compare", "negative-figure.json")
	garbage := filepath.Join(dir, "garbage.json")
	if err := os.WriteFile(garbage, []byte("<html>"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"report"}, "expects one or more result files"},
		{[]string{"report", filepath.Join(dir, "nope.json"), "--html", out}, "nope.json: no such file or directory"},
		{[]string{"report", notResult, "--html", out}, "not an fsbench result"},
		{[]string{"report", garbage, "--html", out}, "garbage.json: not JSON: invalid character"},
		{[]string{"report", negative, "--html", out}, `negative-figure.json: phase "read-big": bytes_per_sec is -`},
		{[]string{"report", reportFixture("bench.json"), "--html", filepath.Join(dir, "no", "r.html")}, "directory " + filepath.Join(dir, "no") + " does not exist"},
		{[]string{"report", reportFixture("bench.json"), "--threshold", "ten", "--html", out}, "--threshold"},
	}
	for _, tt := range tests {
		code, _, stderr := runCLI(t, tt.args...)
		if code != ExitUsage || !strings.Contains(stderr, tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tt.args, code, stderr, tt.want)
		}
		if first := strings.SplitN(stderr, "\n", 2)[0]; !strings.HasPrefix(first, "fsbench: ") {
			t.Errorf("%q: first line of stderr %q", tt.args, first)
		}
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a page was written despite the errors")
	}
}

func TestReportWritesFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r.html")
	code, stdout, stderr := runCLI(t, "report", reportFixture("bench.json"), reportFixture("bench-b.json"), "--html", out, "--threshold", "5%", "--title", "Nightly")
	if code != ExitOK || stdout != "" || !strings.Contains(stderr, "Wrote "+out+" (2 results") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	page := mustRead(t, out)
	for _, want := range []string{"<title>Nightly</title>", `<svg class="chart"`, "bench → bench-b", "threshold of 5%"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

func TestReportStdoutAndMixed(t *testing.T) {
	code, stdout, stderr := runCLI(t, "report", reportFixture("bench.json"), reportFixture("objbench.json"), "--html", "-")
	if code != ExitOK || !strings.HasPrefix(stdout, "<!DOCTYPE html>") {
		t.Fatalf("exit %d, stderr %q, stdout starts %.40q", code, stderr, stdout)
	}
	if !strings.Contains(stderr, "different commands (bench, objbench)") {
		t.Errorf("no warning about mixed commands: %q", stderr)
	}
	if !strings.Contains(stdout, "not compared") || strings.Contains(stdout, `id="comparison"`) {
		t.Error("mixed results: the page should say they are not compared, and compare nothing")
	}
}

// TestHTMLFlag runs the real binary: bench, a workload with interval
// samples, and objbench on a directory each write their page beside the
// usual output.
func TestHTMLFlag(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name string
		args []string
		want []string
	}{
		{"bench", benchArgs(filepath.Join(dir, "b")), []string{"Latency of write-big", "Throughput in files/s"}},
		{"job", []string{"bench", filepath.Join(dir, "j"), "--rw", "randread", "--file-size", "4M", "--xfer-size", "4K", "--duration", "1s", "--interval", "250ms", "-p", "2"},
			[]string{"Throughput of randread over time", "p99 latency of randread over time"}},
		{"objbench", []string{"objbench", filepath.Join(dir, "o"), "--quick", "-p", "2"}, []string{"Functional checks", "Check matrix"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := os.MkdirAll(tt.args[1], 0o755); err != nil {
				t.Fatal(err)
			}
			page := filepath.Join(dir, tt.name+".html")
			stdout, stderr, code := runFsbench(t, append(tt.args, "--html", page, "-q")...)
			if code != ExitOK {
				t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
			}
			if !strings.Contains(stdout, "Benchmark finished!") {
				t.Errorf("the usual table is missing from stdout: %q", stdout)
			}
			got := mustRead(t, page)
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("page lacks %q", w)
				}
			}
		})
	}
	if _, stderr, code := runFsbench(t, benchArgs(dir, "--html", filepath.Join(dir, "missing", "x.html"))...); code != ExitUsage || !strings.Contains(stderr, "--html") {
		t.Errorf("--html into a missing directory: exit %d, %q", code, stderr)
	}
}

// TestOutputOverwritingInputRefused: an output that is one of the inputs
// (the result a page is made from, a baseline) or another output is a
// usage error, found before anything is read or run; the same file is
// recognised by another spelling of its name and through a symlink, and
// what was there is unchanged.
func TestOutputOverwritingInputRefused(t *testing.T) {
	dir := t.TempDir()
	res := filepath.Join(dir, "r.json")
	orig := mustRead(t, reportFixture("bench.json"))
	if err := os.WriteFile(res, []byte(orig), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink("r.json", link); err != nil {
		t.Fatal(err)
	}
	bdir := filepath.Join(dir, "b")
	if err := os.Mkdir(bdir, 0o755); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(dir, "F")
	again := filepath.Join(bdir, "..", "F")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"report", res, "--html", res}, "--html " + res + " would overwrite the input " + res},
		{[]string{"report", reportFixture("bench-b.json"), res, "--html", filepath.Join(bdir, "..", "r.json")}, "would overwrite the input " + res},
		{[]string{"report", res, "--html", link}, "--html " + link + " would overwrite the input " + res},
		{[]string{"bench", bdir, "--quick", "--result-file", fresh, "--html", fresh}, "--result-file " + fresh + " would overwrite --html " + fresh},
		{[]string{"bench", bdir, "--quick", "--result-file", fresh, "--html", again}, "would overwrite --html " + again},
		{[]string{"bench", bdir, "--rw", "stat", "--access-log", fresh, "--html", fresh}, "--html " + fresh + " would overwrite --access-log " + fresh},
		{[]string{"bench", bdir, "--quick", "--result-file", res, "--baseline", res}, "--result-file " + res + " would overwrite the input --baseline " + res},
		{[]string{"objbench", "--storage", "file", bdir, "--quick", "--html", link, "--baseline", res}, "--html " + link + " would overwrite the input --baseline " + res},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != ExitUsage || !strings.HasPrefix(stderr, "fsbench: ") || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", c.args, code, stderr, c.want)
		}
	}
	if got := mustRead(t, res); got != orig {
		t.Errorf("the result was overwritten: %.60q", got)
	}
	if _, err := os.Lstat(fresh); err == nil {
		t.Error("an output was written despite the refusal")
	}
	if left, _ := os.ReadDir(bdir); len(left) != 0 {
		t.Errorf("a refused run wrote in %s: %v", bdir, left)
	}
	// Different files are no clash: the page beside its result.
	page := filepath.Join(dir, "r.html")
	if code, _, stderr := runCLI(t, "report", res, "--html", page); code != ExitOK {
		t.Errorf("report to another file: exit %d, %s", code, stderr)
	}
}
