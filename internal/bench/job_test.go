package bench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/workload"
)

func jobOptions(dir string) Options {
	o := Defaults()
	o.Path = dir
	o.DropCaches = runenv.DropNever
	o.Threads = 2
	return o
}

func parseJob(t *testing.T, src string) *jobfile.Job {
	t.Helper()
	j, err := jobfile.Parse([]byte(src), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return j
}

// leftovers lists what a run left in dir, but for the trees it keeps.
func leftovers(t *testing.T, dir string, keep ...string) []string {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		found := false
		for _, k := range keep {
			found = found || e.Name() == k
		}
		if !found {
			out = append(out, e.Name())
		}
	}
	return out
}

// Every example file runs to completion at a tiny size: the same phases
// on smaller files, fewer of them, for less time.
func TestExamplesRun(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if len(files) < 8 {
		t.Fatalf("%d example files", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			j, err := jobfile.Parse(data, f)
			if err != nil {
				t.Fatal(err)
			}
			j.Shrink(jobfile.Limits{FileSize: 256 << 10, Duration: 300 * time.Millisecond, Files: 24, Ops: 500})
			dir := t.TempDir()
			if j.Direct {
				if _, err := sysio.ProbeDirect(dir, ""); err != nil {
					t.Logf("no O_DIRECT on %s (%v): running buffered", dir, err)
					j.Direct = false
				}
			}
			var res report.Result
			if err := RunJob(context.Background(), jobOptions(dir), j, &res); err != nil {
				t.Fatalf("%v (warnings %v)", err, res.Warnings)
			}
			if len(res.Phases) < len(j.Phases) {
				t.Fatalf("%d phases reported, %d in the file", len(res.Phases), len(j.Phases))
			}
			for _, p := range res.Phases {
				if p.Ops == 0 || p.Errors != 0 || p.Incomplete || p.Value.Value <= 0 {
					t.Errorf("phase %s: ops %d errors %d incomplete %v value %v", p.Name, p.Ops, p.Errors, p.Incomplete, p.Value)
				}
			}
			for i, p := range j.Phases {
				if ph := res.FindPhase(p.Name); ph == nil {
					t.Errorf("phase %s missing", p.Name)
				} else if p.Interval > 0 && p.Duration > 0 && len(ph.Series) == 0 {
					t.Errorf("phase %d (%s) has an interval but no series", i, p.Name)
				}
			}
			var keep []string
			if j.Tree != nil && j.Tree.Dir != "" {
				keep = append(keep, j.Tree.Dir)
			}
			if left := leftovers(t, dir, keep...); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func countTreeFiles(t *testing.T, root string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != workload.TreeMarker {
			n++
		}
		return nil
	})
	return n
}

func TestJobTreeReuseAndRebuild(t *testing.T) {
	dir := t.TempDir()
	src := `tree: {dir: trees/t, depth: 2, width: 3, files: 4, file_size: 8K}
phases:
  - {name: read, op: read, access: random, select: random, xfer_size: 4K, duration: 100ms}
`
	run := func(j *jobfile.Job) *report.Result {
		t.Helper()
		var res report.Result
		o := jobOptions(dir)
		o.Verify = true
		if err := RunJob(context.Background(), o, j, &res); err != nil {
			t.Fatal(err)
		}
		if p := res.FindPhase("read"); p == nil || p.Errors != 0 || p.Ops == 0 {
			t.Fatalf("read phase: %+v", p)
		}
		return &res
	}
	root := filepath.Join(dir, "trees", "t")
	res := run(parseJob(t, src))
	if res.Phases[0].Name != "format" || res.Phases[0].Items != 36 {
		t.Fatalf("first run: phases %v", res.Phases)
	}
	// Depth 2, width 3: 3^2 = 9 leaf directories of 4 files.
	if n := countTreeFiles(t, root); n != 36 {
		t.Fatalf("tree holds %d files, want 36", n)
	}
	info, err := workload.ReadTreeInfo(root)
	if err != nil || info.State != workload.TreeFormatted {
		t.Fatalf("marker %+v, %v", info, err)
	}
	// Same shape: reused (no format, the data verifies with the tree's seed).
	res = run(parseJob(t, src))
	if len(res.Phases) != 1 || !strings.Contains(strings.Join(res.Warnings, "\n"), "reusing the tree") {
		t.Fatalf("second run: phases %d, warnings %v", len(res.Phases), res.Warnings)
	}
	// Another shape: rebuilt.
	res = run(parseJob(t, strings.Replace(src, "files: 4", "files: 2", 1)))
	if res.Phases[0].Name != "format" || countTreeFiles(t, root) != 18 {
		t.Fatalf("third run: phases %v, %d files", res.Phases, countTreeFiles(t, root))
	}
	// format: yes rebuilds even a matching tree.
	res = run(parseJob(t, strings.Replace(strings.Replace(src, "files: 4", "files: 2", 1), "file_size: 8K", "file_size: 8K, format: yes", 1)))
	if res.Phases[0].Name != "format" {
		t.Fatalf("format yes: phases %v", res.Phases)
	}
	if left := leftovers(t, dir, "trees"); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}

	// A directory fsbench did not make is neither used nor touched.
	mine := filepath.Join(dir, "mine")
	os.MkdirAll(mine, 0o755)
	os.WriteFile(filepath.Join(mine, "precious"), []byte("x"), 0o644)
	var r2 report.Result
	err = RunJob(context.Background(), jobOptions(dir), parseJob(t, strings.Replace(src, "trees/t", "mine", 1)), &r2)
	if !errors.Is(err, workload.ErrNotOurs) {
		t.Fatalf("unmarked tree dir: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(mine, "precious")); string(b) != "x" {
		t.Error("a file fsbench did not create was touched")
	}
}

func TestJobTimeLimitAndSeries(t *testing.T) {
	dir := t.TempDir()
	j := parseJob(t, `phases:
  - {name: w, op: randwrite, file_size: 256K, xfer_size: 4K, duration: 400ms, warmup: 100ms, interval: 100ms}
`)
	var lines int
	o := jobOptions(dir)
	o.Hooks.Interval = func(p *workload.FilePhase, s report.Sample) { lines++ }
	var res report.Result
	t0 := time.Now()
	if err := RunJob(context.Background(), o, j, &res); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	p := res.Phases[0]
	if took < 500*time.Millisecond || took > 20*time.Second || p.Seconds < 0.4 || p.Seconds > 20 {
		t.Errorf("a 100ms+400ms phase took %v, measured %.3fs", took, p.Seconds)
	}
	if len(p.Series) < 3 || lines != len(p.Series) {
		t.Errorf("series %d samples, %d interval lines", len(p.Series), lines)
	}
	var ops int64
	for _, s := range p.Series {
		ops += s.Ops
	}
	if ops != p.Ops || p.Latency.Count != p.Ops {
		t.Errorf("series ops %d, total %d, latency count %d", ops, p.Ops, p.Latency.Count)
	}
}

func TestJobOpenLoop(t *testing.T) {
	dir := t.TempDir()
	j := parseJob(t, `phases:
  - {name: ol, op: randread, file_size: 256K, xfer_size: 4K, rate: 500, duration: 400ms}
`)
	var res report.Result
	if err := RunJob(context.Background(), jobOptions(dir), j, &res); err != nil {
		t.Fatal(err)
	}
	p := res.Phases[0]
	s := p.ServiceTime
	if s == nil || s.Count != p.Ops || p.Ops == 0 {
		t.Fatalf("service time %+v, ops %d", s, p.Ops)
	}
	if p.Latency.Mean < s.Mean || p.Latency.P50 < s.P50 || p.Latency.P99 < s.P99 || p.Latency.Max < s.Max {
		t.Errorf("response time %+v is below service time %+v", p.Latency, *s)
	}
	if !strings.Contains(p.LatencyOf, "response time") {
		t.Errorf("latency of %q", p.LatencyOf)
	}
}

func TestJobCancelCleansUp(t *testing.T) {
	dir := t.TempDir()
	j := parseJob(t, `tree: {depth: 1, width: 2, files: 3, file_size: 64K}
phases:
  - {name: r, op: read, duration: 1h}
`)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var res report.Result
	t0 := time.Now()
	err := RunJob(ctx, jobOptions(dir), j, &res)
	if !errors.Is(err, context.DeadlineExceeded) || !res.Interrupted || time.Since(t0) > 20*time.Second {
		t.Fatalf("err %v, interrupted %v, after %v", err, res.Interrupted, time.Since(t0))
	}
	if left := leftovers(t, dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// Without a tree, files are laid out before the first read, and reads
// after writes of another transfer size verify.
func TestJobFilesLayoutAndVerify(t *testing.T) {
	dir := t.TempDir()
	j := parseJob(t, `verify: true
phases:
  - {name: r1, op: read, file_size: 200K, xfer_size: 64K}
  - {name: w, op: randwrite, file_size: 200K, xfer_size: 4K}
  - {name: r2, op: randread, file_size: 200K, xfer_size: 8K}
  - {name: m, op: rw, read_pct: 30, file_size: 200K, xfer_size: 16K, ops: 50}
  - {name: st, op: stat}
  - {name: rm, op: unlink}
`)
	var res report.Result
	if err := RunJob(context.Background(), jobOptions(dir), j, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 6 {
		t.Fatalf("phases %v", res.Phases)
	}
	for _, p := range res.Phases {
		if p.Errors != 0 {
			t.Errorf("%s: %d errors: %v", p.Name, p.Errors, p.ErrorSamples)
		}
	}
	if r := res.FindPhase("r1"); r.Bytes != 2*200<<10 || r.Ops != 2*4 {
		t.Errorf("r1: %d bytes in %d ops", r.Bytes, r.Ops)
	}
	if m := res.FindPhase("m"); m.Ops != 50 {
		t.Errorf("m: %d ops, want 50", m.Ops)
	}
	if left := leftovers(t, dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// A workload on a full disk says so, and does not blame a vanished
// directory (its own clean-up removed it after the failure). The disk is
// a tmpfs out of inodes once the run's directory is made, as the check of
// the free space refuses a workload larger than its bytes.
func TestRunJobDiskFull(t *testing.T) {
	dir := testenv.MountFS(t, "tmpfs", "size=64m,nr_inodes=2")
	j, err := jobfile.Parse([]byte("phases:\n  - name: fill\n    op: write\n    file_size: 16M\n"), "fill.yaml")
	if err != nil {
		t.Fatal(err)
	}
	o := Defaults()
	o.Path = dir
	err = RunJob(context.Background(), o, j, &report.Result{})
	if !errors.Is(err, syscall.ENOSPC) || strings.Contains(err.Error(), "vanished") {
		t.Fatalf("err = %v, want ENOSPC and no word of a vanished directory", err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
