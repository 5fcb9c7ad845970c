package cli

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

func TestBenchJobFlags(t *testing.T) {
	// The default benchmark stays the default.
	o, code, msg := parseBench(t, nil, "/x")
	if code != 0 || o.Job.Job != nil {
		t.Fatalf("default: exit %d (%s), job %v", code, msg, o.Job.Job)
	}

	o, code, msg = parseBench(t, nil, "/x", "--rw", "randread", "--xfer-size", "4K", "--file-size", "1G", "--duration", "30s", "-p", "4", "--direct", "--interval", "2s", "--warmup", "5s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	j := o.Job.Job
	p := j.Phases[0]
	if len(j.Phases) != 1 || j.Tree != nil || p.Name != "randread" || p.Op != jobfile.OpRead || p.Access != workload.Random ||
		p.XferSize != 4096 || p.FileSize != units.GiB || p.Duration != 30*time.Second || p.Warmup != 5*time.Second ||
		p.Interval != 2*time.Second || o.Threads != 4 || !o.Direct {
		t.Errorf("ad-hoc job = %+v, phase %+v", j, p)
	}

	o, code, msg = parseBench(t, nil, "/x", "--depth", "2", "--width", "3", "--files", "4", "--rw", "stat", "--file-select", "random", "--tree-dir", "t", "--rate", "100", "--ops", "1000")
	if code != 0 {
		t.Fatalf("tree: exit %d: %s", code, msg)
	}
	j = o.Job.Job
	if tr := j.Tree; tr == nil || tr.Shape != (workload.Shape{Depth: 2, Width: 3, Files: 4, FileSize: 128 * units.KiB}) || tr.Dir != "t" || tr.Format != "restart" {
		t.Fatalf("tree = %+v", j.Tree)
	}
	if p := j.Phases[0]; p.Op != jobfile.OpStat || p.Select != workload.Random || p.Rate != 100 || p.Ops != 1000 {
		t.Errorf("tree phase = %+v", p)
	}

	// A file, with flags that override each phase, -p over threads, and
	// an expectation on one of its phases.
	f := filepath.Join(testenv.RepoRoot(), "examples", "vdbench-4k.yaml")
	o, code, msg = parseBench(t, nil, "/x", "-f", f, "--duration", "1s", "--files", "2", "-p", "3", "--expect", "rd2-rand-read>=1MiB/s")
	if code != 0 {
		t.Fatalf("-f: exit %d: %s", code, msg)
	}
	j = o.Job.Job
	if len(j.Phases) != 5 || j.Tree.Files != 2 || j.Threads != 0 || o.Threads != 3 || len(o.CI.Exprs) != 1 {
		t.Fatalf("-f job = %+v, threads %d", j, o.Threads)
	}
	for _, p := range j.Phases {
		if p.Duration != time.Second || p.XferSize != 4096 {
			t.Errorf("phase %s: duration %v xfer %d", p.Name, p.Duration, p.XferSize)
		}
	}
	// --quick shrinks a workload.
	o, code, msg = parseBench(t, nil, "/x", "-f", f, "--quick")
	if code != 0 || o.Job.Job.Phases[0].Duration > 10*time.Second || o.Job.Job.Tree.FileSize > 64*units.MiB {
		t.Fatalf("--quick: exit %d (%s)", code, msg)
	}
	// --quick shrinks the files of the default size too (1 GiB for reads
	// and writes) of an ad-hoc workload, as it does those of a file.
	noSize := filepath.Join(t.TempDir(), "no-size.yaml")
	if err := os.WriteFile(noSize, []byte("phases:\n  - name: w\n    op: write\n  - name: r\n    op: read\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"--rw", "read"}, {"--rw", "randwrite", "--duration", "1m"}, {"-f", noSize}} {
		o, code, msg = parseBench(t, nil, append([]string{"/x", "--quick"}, args...)...)
		if code != 0 {
			t.Fatalf("--quick %q: exit %d (%s)", args, code, msg)
		}
		for _, p := range o.Job.Job.Phases {
			if p.FileSize != 64*units.MiB || p.Duration > 10*time.Second {
				t.Errorf("--quick %q: phase %s of %s for %v, want 64 MiB for at most 10s", args, p.Name, units.FormatBytes(p.FileSize), p.Duration)
			}
		}
	}
}

func TestBenchJobUsageErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	os.WriteFile(bad, []byte("threads: 2\nphases:\n  - name: a\n    op: raed\n"), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--rw", "bogus"}, `--rw "bogus"`},
		{[]string{"--rw", "read", "--block-size", "4K"}, "--block-size is a flag of the default benchmark"},
		{[]string{"-f", filepath.Join(dir, "missing.yaml")}, "missing.yaml: no such file or directory"},
		{[]string{"-f", bad}, "bad.yaml:4: phases[0].op: unknown operation \"raed\""},
		{[]string{"-f", bad, "--rw", "read"}, "--rw describes an ad-hoc phase"},
		{[]string{"--rw", "read", "--read-pct", "70"}, "read_pct applies to op rw"},
		{[]string{"--rw", "rw", "--read-pct", "170"}, "--read-pct 170"},
		{[]string{"--duration", "soon"}, "--duration: "},
		{[]string{"--xfer-size", "4Q"}, "--xfer-size: "},
		{[]string{"--xfer-size", "0"}, "--xfer-size must be greater than 0"},
		{[]string{"--rw", "read", "--file-size", "0"}, "--file-size 0: phase read reads or writes"},
		{[]string{"--rw", "randwrite", "--file-size", "0K"}, "--file-size 0: phase randwrite reads or writes"},
		{[]string{"--rate", "0"}, "--rate must be more than 0"},
		{[]string{"--rw", "mkdir"}, "op mkdir needs a tree"},
		{[]string{"--depth", "1", "--width", "0"}, "--width"},
		{[]string{"--rw", "read", "--tree-format", "yes"}, "--tree-format applies to a tree"},
		{[]string{"--rw", "read", "--warmup", "2s"}, "warmup needs a duration"},
		{[]string{"--rw", "randread", "--expect", "write-big>=1MiB/s"}, `measures no metric "write-big"`},
		{[]string{"--rw", "create", "--duration", "1s"}, "op create does each file once"},
	} {
		_, code, msg := parseBench(t, nil, append([]string{dir}, c.args...)...)
		if code != ExitUsage || !strings.Contains(msg, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 and %q", c.args, code, msg, c.want)
		}
		if strings.Count(strings.TrimSpace(msg), "\n") > 0 {
			t.Errorf("%v: message spans lines: %q", c.args, msg)
		}
	}
}

// A workload runs through the command: interval lines and the summary on
// stderr, the JSON result (with the series) on stdout, nothing left behind.
func TestBenchJobRun(t *testing.T) {
	dir := t.TempDir()
	app, out, errb := testApp(map[string]string{"SKIP_DROP_CACHES": "true"})
	code := Run(context.Background(), app, []string{"bench", dir, "--rw", "randrw", "--read-pct", "70", "--xfer-size", "4K",
		"--file-size", "256K", "--duration", "300ms", "--interval", "100ms", "-p", "2", "--json"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	res, err := report.ReadJSON(out)
	if err != nil {
		t.Fatal(err)
	}
	p := res.FindPhase("randrw")
	if p == nil || p.Ops == 0 || len(p.Series) < 2 || p.Latency.Count != p.Ops || !strings.Contains(p.LatencyOf, "70% reads") {
		t.Fatalf("result phase %+v", p)
	}
	if !strings.Contains(errb.String(), "ops/s") || !strings.Contains(errb.String(), "randrw: ") {
		t.Errorf("stderr lacks interval or summary lines:\n%s", errb)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestRateBeyondReachEndsAtDuration: --rate far above what the machine
// does (10⁹ stats per second) still ends at --duration, for bench and for
// objbench's stat workload, and the result says how many scheduled
// operations were not begun: with those done, 10⁹ per second of duration.
func TestRateBeyondReachEndsAtDuration(t *testing.T) {
	for _, args := range [][]string{
		{"bench", "DIR", "--rw", "stat", "--files", "4"},
		{"objbench", "--storage", "file", "DIR", "--workload", "stat", "--objects", "4"},
	} {
		dir := t.TempDir()
		args[slices.Index(args, "DIR")] = dir
		args = append(args, "--duration", "1s", "--rate", "1e9", "--json")
		// A guard against a hang only: thirty times the duration.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		app, out, errb := testApp(map[string]string{"SKIP_DROP_CACHES": "true"})
		code := Run(ctx, app, args)
		cancel()
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", args[0], code, errb)
		}
		res, err := report.ReadJSON(out)
		if err != nil || len(res.Phases) == 0 {
			t.Fatalf("%s: %v", args[0], err)
		}
		p := res.Phases[len(res.Phases)-1]
		if p.Incomplete || p.Ops == 0 || p.Ops+p.Missed != 1e9 {
			t.Errorf("%s: %d done + %d not begun (incomplete %v); want 10⁹ scheduled in 1s", args[0], p.Ops, p.Missed, p.Incomplete)
		}
		if len(res.Warnings) == 0 || !strings.Contains(strings.Join(res.Warnings, "\n"), "the rate was not kept") {
			t.Errorf("%s: warnings %q", args[0], res.Warnings)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("%s: left behind: %v", args[0], left)
		}
	}
}

// Ctrl-C during a time-limited workload: the binary cleans up, prints what
// it measured and exits 130.
func TestBenchJobInterruptBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := testenv.Binary(t)
	dir := t.TempDir()
	cmd := exec.Command(bin, "bench", dir, "--depth", "1", "--width", "2", "--files", "3", "--rw", "randread",
		"--xfer-size", "4K", "--duration", "1h", "--json", "-q")
	var out strings.Builder
	cmd.Stdout = &out
	// Once the tree's marker says every file is at full size, the reads
	// of the hour-long phase come next.
	interruptWhen(t, cmd, func() bool {
		roots, _ := filepath.Glob(filepath.Join(dir, "fsbench-*", "tree"))
		for _, r := range roots {
			if info, err := workload.ReadTreeInfo(r); err == nil && info.State == workload.TreeFormatted {
				return true
			}
		}
		return false
	})
	if code := cmd.ProcessState.ExitCode(); code != ExitInterrupted {
		t.Errorf("exit %d, want 130", code)
	}
	var res report.Result
	if err := json.Unmarshal([]byte(out.String()), &res); err != nil || !res.Interrupted {
		t.Errorf("result: interrupted=%v, %v", res.Interrupted, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
