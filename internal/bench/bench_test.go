package bench

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/juicefs"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

func small(path string) Options {
	o := Defaults()
	o.Path = path
	o.BigFileSize = 8 * units.MiB
	o.SmallFileCount = 20
	o.SmallFileSize = 64 * units.KiB
	o.Threads = 2
	return o
}

// preexisting plants a file that the benchmark must leave alone and returns
// a check that it did.
func preexisting(t *testing.T, dir string) func() {
	t.Helper()
	p := filepath.Join(dir, "precious.txt")
	content := []byte("not fsbench's data\n")
	if err := os.WriteFile(p, content, 0o640); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(p, old, old); err != nil {
		t.Fatal(err)
	}
	return func() {
		t.Helper()
		got, err := os.ReadFile(p)
		if err != nil || !bytes.Equal(got, content) {
			t.Errorf("pre-existing file changed: %q, %v", got, err)
		}
		st, err := os.Stat(p)
		if err != nil || !st.ModTime().Equal(old) || st.Mode().Perm() != 0o640 {
			t.Errorf("pre-existing file's metadata changed: %v", st)
		}
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if e.Name() != "precious.txt" {
				t.Errorf("left behind in %s: %s", dir, e.Name())
			}
		}
	}
}

func run(t *testing.T, o Options) (*report.Result, error) {
	t.Helper()
	res := &report.Result{}
	err := Run(context.Background(), o, res)
	return res, err
}

func checkComplete(t *testing.T, res *report.Result, o Options) {
	t.Helper()
	names := []string{"write-big", "read-big", "write-small", "read-small", "stat"}
	if len(res.Phases) != len(names) {
		t.Fatalf("phases = %d, want %d", len(res.Phases), len(names))
	}
	for i, p := range res.Phases {
		if p.Name != names[i] {
			t.Errorf("phase %d = %s, want %s", i, p.Name, names[i])
		}
		if p.Errors != 0 || p.Incomplete {
			t.Errorf("%s: errors %d incomplete %v: %v", p.Name, p.Errors, p.Incomplete, p.ErrorSamples)
		}
		if p.Seconds <= 0 || p.Value.Value <= 0 || p.Latency.Count != p.Ops || p.Latency.P50 <= 0 || p.Latency.Max < p.Latency.P99 {
			t.Errorf("%s: implausible measurement %+v", p.Name, p)
		}
	}
	if res.Threads != o.Threads {
		t.Errorf("result says %d threads, ran %d", res.Threads, o.Threads)
	}
	T := int64(o.Threads)
	big, smallN := o.BigFileSize*T, int64(o.SmallFileCount)*T
	want := map[string][3]int64{ // ops, items, bytes
		"write-big":   {T * o.BigFileSize / o.BlockSize, T, big},
		"read-big":    {T * o.BigFileSize / o.BlockSize, T, big},
		"write-small": {smallN, smallN, smallN * o.SmallFileSize},
		"read-small":  {smallN, smallN, smallN * o.SmallFileSize},
		"stat":        {smallN, smallN, 0},
	}
	for _, p := range res.Phases {
		w := want[p.Name]
		if p.Ops != w[0] || p.Items != w[1] || p.Bytes != w[2] {
			t.Errorf("%s: ops/items/bytes = %d/%d/%d, want %v", p.Name, p.Ops, p.Items, p.Bytes, w)
		}
	}
}

// runSmall runs the small benchmark on dir, with --verify when asked,
// checks that it completed and left a file of the user's alone, and
// returns its result.
func runSmall(t *testing.T, dir string, verify bool) *report.Result {
	t.Helper()
	check := preexisting(t, dir)
	o := small(dir)
	o.Verify = verify
	res, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, res, o)
	check()
	return res
}

func TestRunTempDir(t *testing.T) {
	dir := t.TempDir()
	res := runSmall(t, dir, true)
	if res.Target.Path != dir || res.Target.FSType == "" || res.CacheDrop == "" {
		t.Errorf("target = %+v, cache drop %q", res.Target, res.CacheDrop)
	}
}

func TestRunTmpfs(t *testing.T) {
	res := runSmall(t, testenv.Tmpfs(t, "64m"), false)
	if res.Target.FSType != "tmpfs" {
		t.Errorf("fs type = %q, want tmpfs", res.Target.FSType)
	}
}

func TestRunFUSE(t *testing.T) {
	dir := testenv.Bindfs(t, t.TempDir())
	res := runSmall(t, dir, true)
	if !strings.HasPrefix(res.Target.FSType, "fuse") || res.Target.MountPoint != dir {
		t.Errorf("target = %+v, want a fuse mount at %s", res.Target, dir)
	}
}

func TestRunDirectOnExt4(t *testing.T) {
	dir := testenv.Ext4(t, "128M")
	m, err := sysio.FindMount(dir)
	if err != nil || m.FSType != "ext4" {
		t.Fatalf("%s is on %q, not ext4 (%v)", dir, m.FSType, err)
	}
	check := preexisting(t, dir)
	o := small(dir)
	o.Direct, o.Verify, o.Fsync = true, true, true
	res, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	checkComplete(t, res, o)
	if res.Parameters.Get("direct") != true {
		t.Errorf("direct not recorded: %v", res.Parameters)
	}
	check()

	o.BlockSize = 1000
	if _, err := run(t, o); err == nil || !strings.Contains(err.Error(), "alignment") {
		t.Errorf("unaligned --direct block size: err = %v", err)
	}
	check()
}

func TestRunReadOnlyMount(t *testing.T) {
	src := t.TempDir()
	dir := testenv.ReadOnlyBind(t, src)
	_, err := run(t, small(dir))
	if err == nil || !strings.Contains(err.Error(), "read-only") || !strings.Contains(err.Error(), dir) {
		t.Fatalf("err = %v, want a read-only error naming %s", err, dir)
	}
}

// TestRunDiskFull: a file system full once the run has begun (a tmpfs out
// of inodes once the run's directory is made, whose bytes pass the check of
// the free space).
func TestRunDiskFull(t *testing.T) {
	dir := testenv.MountFS(t, "tmpfs", "size=64m,nr_inodes=3") // its root, the file planted, the run's directory
	check := preexisting(t, dir)
	o := small(dir)
	res, err := run(t, o)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("err = %v, want ENOSPC", err)
	}
	var be *runenv.Error
	if !errors.As(err, &be) || be.Phase != "Write big file" || !strings.Contains(err.Error(), dir) {
		t.Errorf("error %q does not name the phase and path", err)
	}
	if len(res.Phases) != 1 || !res.Phases[0].Incomplete || res.Phases[0].Errors == 0 {
		t.Errorf("phases = %+v", res.Phases)
	}
	check()
}

func TestRunMissingAndNotDir(t *testing.T) {
	dir := t.TempDir()
	if _, err := run(t, small(filepath.Join(dir, "nope"))); err == nil || !strings.Contains(err.Error(), "no such file") {
		t.Errorf("missing path: %v", err)
	}
	f := filepath.Join(dir, "file")
	os.WriteFile(f, nil, 0o644)
	if _, err := run(t, small(f)); err == nil || !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("file as path: %v", err)
	}
}

func TestRunCancel(t *testing.T) {
	dir := t.TempDir()
	check := preexisting(t, dir)
	o := small(dir)
	o.BigFileSize = 4 * units.GiB
	ctx, cancel := context.WithCancel(context.Background())
	o.Hooks.PhaseStart = func(e *workload.Runner, p *workload.FilePhase, total int64) {
		go func() {
			for e.Live.Ops.Load() < 4 {
				time.Sleep(time.Millisecond)
			}
			cancel()
		}()
	}
	res := &report.Result{}
	err := Run(ctx, o, res)
	if !errors.Is(err, context.Canceled) || !res.Interrupted {
		t.Fatalf("err = %v, interrupted = %v", err, res.Interrupted)
	}
	if len(res.Phases) != 1 || !res.Phases[0].Incomplete || res.Phases[0].Ops < 4 {
		t.Errorf("phases = %+v", res.Phases)
	}
	check()
}

func TestRunKeep(t *testing.T) {
	dir := t.TempDir()
	o := small(dir)
	o.Keep = true
	if _, err := run(t, o); err != nil {
		t.Fatal(err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), "fsbench-") {
		t.Fatalf("entries = %v", entries)
	}
	files, _ := os.ReadDir(filepath.Join(dir, entries[0].Name()))
	if len(files) != 2+2*20 {
		t.Errorf("kept %d files, want 42", len(files))
	}
}

// TestRunJuiceFSMount runs on a real FUSE mount whose type is fuse.juicefs
// and whose root holds a .stats file, changed during the run from a real
// before-snapshot to a real after-snapshot.
func TestRunJuiceFSMount(t *testing.T) {
	src := t.TempDir()
	before, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata/juicefs/jfs-stats-before.txt"))
	if err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(filepath.Join(testenv.RepoRoot(), "testdata/juicefs/jfs-stats-after.txt"))
	os.WriteFile(filepath.Join(src, ".stats"), before, 0o644)
	dir := testenv.Bindfs(t, src, "subtype=juicefs")
	o := small(dir)
	o.Hooks.PhaseStart = func(*workload.Runner, *workload.FilePhase, int64) {
		os.WriteFile(filepath.Join(src, ".stats"), after, 0o644)
	}
	res, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Target.FSType != "fuse.juicefs" {
		t.Fatalf("fs type = %q", res.Target.FSType)
	}
	if res.Internal == nil || len(res.Internal.Rows) != 7 {
		t.Fatalf("internal = %+v", res.Internal)
	}
	if r := res.Internal.Rows[2]; r.Name != "Put object" || r.Count != 712 || r.Unknown {
		t.Errorf("put row = %+v", r)
	}
	if res.Internal.ClientCPUPercent == nil || res.Internal.ClientMemoryBytes == nil {
		t.Fatalf("client usage missing: %+v", res.Internal)
	}
	// CPU% is over the phases' time, not the cache drops between them.
	phases := 0.0
	for _, p := range res.Phases {
		phases += p.Seconds
	}
	cpu := (9.181194 - 0.061854) / phases * 100
	if got := *res.Internal.ClientCPUPercent; math.Abs(got-cpu) > 1e-9*cpu {
		t.Errorf("client CPU %.6f%%, want %.6f%% (CPU seconds over the %.4f s the phases ran)", got, cpu, phases)
	}
}

// TestJuiceFSCPUOverPhaseTime: the client's CPU% is its CPU seconds over
// the time the phases ran, with the fixture's counters.
func TestJuiceFSCPUOverPhaseTime(t *testing.T) {
	before := juicefs.Stats{"juicefs_cpu_usage": 10.5, "juicefs_uptime": 100}
	after := juicefs.Stats{"juicefs_cpu_usage": 16.5, "juicefs_uptime": 130, "juicefs_memory": 1 << 30}
	// 30 s passed between the readings; the phases ran 2.5 + 1.5 s.
	in := jfsInternal(before, after, []report.PhaseResult{{Name: "write-big", Seconds: 2.5}, {Name: "read-big", Seconds: 1.5}})
	if in.ClientCPUPercent == nil || *in.ClientCPUPercent != 150 {
		t.Errorf("client CPU = %v, want 150%% (6 CPU seconds in 4 s of phases)", in.ClientCPUPercent)
	}
	if in.ClientMemoryBytes == nil || *in.ClientMemoryBytes != 1<<30 {
		t.Errorf("client memory = %v", in.ClientMemoryBytes)
	}
}

func TestValidate(t *testing.T) {
	bad := []func(*Options){
		func(o *Options) { o.Threads = 0 },
		func(o *Options) { o.Threads = -1 },
		func(o *Options) { o.BlockSize = 0 },
		func(o *Options) { o.BlockSize = 2 * units.GiB },
		func(o *Options) { o.SmallFileCount = -1 },
		func(o *Options) { o.SmallFileSize = 0 },
		func(o *Options) { o.BigFileSize = 0; o.SmallFileCount = 0 },
		func(o *Options) { o.DropCaches = "sometimes" },
		func(o *Options) { o.Path = "" },
	}
	for i, f := range bad {
		o := Defaults()
		o.Path = "/x"
		f(&o)
		if err := o.Validate(); err == nil {
			t.Errorf("case %d: %+v validated", i, o)
		}
	}
	o := Defaults()
	o.Path = "/x"
	if err := o.Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestThresholds(t *testing.T) {
	th, _ := ThresholdFor("write-big", 1, units.GiB)
	for v, g := range map[float64]report.Grade{250: report.Good, 150: report.Fair, 50: report.Poor, 200: report.Fair, 100: report.Poor} {
		if got := th.GradeValue(v); got != g {
			t.Errorf("write-big %v MiB/s = %s, want %s", v, got, g)
		}
	}
	for c, g := range map[float64]report.Grade{5: report.Good, 20: report.Fair, 60: report.Poor} {
		if got := th.GradeCost(c); got != g {
			t.Errorf("write-big %v s/file = %s, want %s", c, got, g)
		}
	}
	// Small-file rates scale with threads; big-file costs with file size.
	st4, _ := ThresholdFor("stat", 4, units.GiB)
	if st4.Good != 4000 || st4.Fair != 80 || st4.CostGood != 1 {
		t.Errorf("stat at 4 threads = %+v", st4)
	}
	bw, _ := ThresholdFor("write-big", 4, 64*units.MiB)
	if bw.Good != 200 || bw.CostGood != 10.0/16 {
		t.Errorf("write-big at 64 MiB = %+v", bw)
	}
	if _, ok := ThresholdFor("nope", 1, 0); ok {
		t.Error("unknown item has thresholds")
	}
}
