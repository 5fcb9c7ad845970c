package workload

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func jobNames(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = "job." + strconv.Itoa(i)
	}
	return out
}

func generalRunner(t *testing.T, workers int, verify bool, tr Tracer) (*Runner, string) {
	dir := t.TempDir()
	return NewRunner(Config{Dir: dir, Workers: workers, Verify: verify, Seed: 3, Tracer: tr}, 64<<10), dir
}

// Random writes of a fresh file touch every block once (one pass); reads
// with another transfer size and random offsets verify the data.
func TestRandomWriteThenVerifyOtherSize(t *testing.T) {
	e, dir := generalRunner(t, 2, true, nil)
	tg := e.NewTargets(dir, jobNames(2))
	w := FilePhase{Name: "randwrite", Title: "randwrite", Kind: Write, Access: Random, Targets: tg, FileSize: 256 << 10, BlockSize: 16 << 10}
	r, err := e.Run(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	if r.Ops != 2*16 || r.Bytes != 2*256<<10 || r.Items != 2 {
		t.Fatalf("randwrite = ops %d bytes %d items %d", r.Ops, r.Bytes, r.Items)
	}
	for _, n := range jobNames(2) {
		if st, err := os.Stat(filepath.Join(dir, n)); err != nil || st.Size() != 256<<10 {
			t.Fatalf("%s: %v %v", n, st, err)
		}
	}
	rd := FilePhase{Name: "randread", Title: "randread", Kind: Read, Access: Random, Targets: tg, FileSize: 256 << 10, BlockSize: 4 << 10}
	r, err = e.Run(context.Background(), rd)
	if err != nil || r.Errors != 0 || r.Ops != 2*64 {
		t.Fatalf("randread = %+v, %v", r, err)
	}
	// Corrupt a byte: verify finds it.
	f := filepath.Join(dir, "job.1")
	b, _ := os.ReadFile(f)
	b[77777] ^= 1
	os.WriteFile(f, b, 0o644)
	r, err = e.Run(context.Background(), rd)
	if err != nil || r.Errors != 1 {
		t.Fatalf("after corruption: errors %d, %v", r.Errors, err)
	}
	// Mixed, 50% reads, by count.
	mx := rd
	mx.Kind, mx.ReadPct, mx.Ops = Mixed, 50, 100
	r, err = e.Run(context.Background(), mx)
	if err != nil || r.Ops != 100 {
		t.Fatalf("mixed = ops %d, %v", r.Ops, err)
	}
	// The live counters say how much of a mixed phase was read, for
	// fsbench stats: every op here moves one block, so the reads are a
	// whole number of blocks, neither none nor all of 100.
	live := e.Live.Snapshot()
	if live.Bytes != 100*4<<10 || live.ReadBytes <= 0 || live.ReadBytes >= live.Bytes || live.ReadBytes%(4<<10) != 0 {
		t.Errorf("mixed: live bytes %d, of them read %d", live.Bytes, live.ReadBytes)
	}
}

func TestTimeLimitStops(t *testing.T) {
	e, dir := generalRunner(t, 2, false, nil)
	tg := e.NewTargets(dir, jobNames(2))
	var got []Sample
	p := FilePhase{Title: "seqwrite", Kind: Write, Targets: tg, FileSize: 64 << 10, BlockSize: 4 << 10,
		Duration: 300 * time.Millisecond, Warmup: 100 * time.Millisecond, Interval: 100 * time.Millisecond,
		OnInterval: func(s Sample) { got = append(got, s) }}
	t0 := time.Now()
	r, err := e.Run(context.Background(), p)
	took := time.Since(t0)
	if err != nil {
		t.Fatal(err)
	}
	// Generous bounds: it must stop, not be fast.
	if took < 400*time.Millisecond || took > 10*time.Second {
		t.Errorf("a 100ms+300ms phase took %v", took)
	}
	if r.Elapsed < 300*time.Millisecond || r.Elapsed > 10*time.Second {
		t.Errorf("measured %v, want about 300ms", r.Elapsed)
	}
	if r.Ops == 0 || r.Hist.Count() != r.Ops {
		t.Errorf("ops %d, histogram %d", r.Ops, r.Hist.Count())
	}
	if len(r.Series) < 2 || len(r.Series) != len(got) {
		t.Fatalf("series %d samples, callback %d", len(r.Series), len(got))
	}
	var ops int64
	for _, s := range r.Series {
		ops += s.Ops
	}
	if ops != r.Ops {
		t.Errorf("series adds to %d ops, total %d", ops, r.Ops)
	}

	// Cancellation stops a long phase too.
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	p.Duration, p.Interval, p.OnInterval = time.Hour, 0, nil
	t0 = time.Now()
	r, err = e.Run(ctx, p)
	if !errors.Is(err, context.DeadlineExceeded) || !r.Incomplete || time.Since(t0) > 10*time.Second {
		t.Errorf("cancelled: %v incomplete=%v after %v", err, r.Incomplete, time.Since(t0))
	}
}

func TestOpenLoopResponseAtLeastService(t *testing.T) {
	e, dir := generalRunner(t, 2, false, nil)
	tg := e.NewTargets(dir, jobNames(2))
	if _, err := e.Run(context.Background(), FilePhase{Title: "lay", Kind: Write, Targets: tg, FileSize: 64 << 10, BlockSize: 4 << 10}); err != nil {
		t.Fatal(err)
	}
	p := FilePhase{Title: "rate", Kind: Read, Access: Random, Targets: tg, FileSize: 64 << 10, BlockSize: 4 << 10,
		Rate: 400, Duration: 300 * time.Millisecond}
	r, err := e.Run(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if r.Service == nil || r.Service.Count() != r.Ops || r.Ops == 0 {
		t.Fatalf("service histogram missing or wrong: ops %d", r.Ops)
	}
	// About 120 operations at 400/s for 0.3s; never more than scheduled.
	if r.Ops > 121 {
		t.Errorf("%d operations at 400/s in 0.3s", r.Ops)
	}
	resp, svc := r.Hist.Summary(), r.Service.Summary()
	if resp.Mean < svc.Mean || resp.P50 < svc.P50 || resp.Max < svc.Max {
		t.Errorf("response %+v below service %+v", resp, svc)
	}
}

func TestMetadataPhases(t *testing.T) {
	tr := &countTracer{ops: map[string]int{}}
	e, dir := generalRunner(t, 3, false, tr)
	s := Shape{Depth: 2, Width: 2, Files: 3}
	if err := MakeDirs(dir, s); err != nil {
		t.Fatal(err)
	}
	files := e.NewTargets(dir, s.FileNames())
	subdirs := e.NewTargets(dir, s.SubdirNames())
	leaves := e.NewTargets(dir, s.LeafDirs())
	n := int64(s.NumFiles())
	for _, c := range []struct {
		kind Kind
		tg   *Targets
		ops  int64
	}{
		{Create, files, n}, {Stat, files, n}, {Open, files, n}, {Rename, files, 2 * n}, {Chmod, files, n},
		{Utime, files, n}, {Readdir, leaves, 4}, {Mkdir, subdirs, n}, {Rmdir, subdirs, n}, {Unlink, files, n},
	} {
		p := FilePhase{Title: c.kind.String(), Kind: c.kind, Targets: c.tg, BlockSize: 4096, FileSize: 1000, Select: Random}
		r, err := e.Run(context.Background(), p)
		if err != nil || r.Ops != c.ops || r.Errors != 0 {
			t.Fatalf("%v: ops %d (want %d), errors %d, %v", c.kind, r.Ops, c.ops, r.Errors, err)
		}
	}
	if tr.ops["rename"] != int(2*n) || tr.ops["readdir"] != 4 || tr.ops["chmod"] != int(n) {
		t.Errorf("traced %v", tr.ops)
	}
	for _, l := range s.LeafDirs() {
		if left, _ := os.ReadDir(filepath.Join(dir, l)); len(left) != 0 {
			t.Errorf("%s left: %v", l, left)
		}
	}
}

func countFiles(t *testing.T, root string) (files int) {
	t.Helper()
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && d.Name() != TreeMarker {
			files++
		}
		return nil
	})
	return files
}

func TestTreeShapeReuseRebuild(t *testing.T) {
	s := Shape{Depth: 2, Width: 3, Files: 4, FileSize: 8 << 10}
	if s.NumFiles() != 36 || len(s.FileNames()) != 36 || len(s.Dirs()) != 3+9 || len(s.LeafDirs()) != 9 {
		t.Fatalf("shape: %d files, %d dirs", len(s.FileNames()), len(s.Dirs()))
	}
	root := filepath.Join(t.TempDir(), "tree")
	info, err := OpenTree(root, s, 7, false)
	if err != nil || info.State != TreeEmpty {
		t.Fatalf("new tree: %+v %v", info, err)
	}
	if err := MakeDirs(root, s); err != nil {
		t.Fatal(err)
	}
	e := NewRunner(Config{Dir: root, Workers: 2, Seed: info.Seed}, 64<<10)
	if _, err := e.Run(context.Background(), FilePhase{Title: "format", Kind: Create, Targets: e.NewTargets(root, s.FileNames()), FileSize: s.FileSize, BlockSize: 4096}); err != nil {
		t.Fatal(err)
	}
	info.State = TreeFormatted
	WriteTreeInfo(root, info)
	if n := countFiles(t, root); n != 36 {
		t.Fatalf("%d files, want 36", n)
	}
	// Same shape: reused with its seed.
	again, err := OpenTree(root, s, 99, false)
	if err != nil || again.State != TreeFormatted || again.Seed != 7 {
		t.Fatalf("reuse: %+v %v", again, err)
	}
	// Another shape: rebuilt, emptied first.
	s2 := s
	s2.Files = 2
	again, err = OpenTree(root, s2, 99, false)
	if err != nil || again.State != TreeEmpty || again.Seed != 99 || countFiles(t, root) != 0 {
		t.Fatalf("rebuild: %+v %v, %d files left", again, err, countFiles(t, root))
	}
	// A foreign file stops removal; a directory without a marker is refused.
	MakeDirs(root, s2)
	os.WriteFile(filepath.Join(root, "d1", "d1", "mine"), []byte("x"), 0o644)
	if err := RemoveTree(root, s2); err == nil {
		t.Error("removed a directory holding a file fsbench did not create")
	}
	if b, _ := os.ReadFile(filepath.Join(root, "d1", "d1", "mine")); string(b) != "x" {
		t.Error("foreign file touched")
	}
	other := t.TempDir()
	if _, err := OpenTree(other, s, 1, false); !errors.Is(err, ErrNotOurs) {
		t.Errorf("unmarked directory: %v", err)
	}
}

// The data path allocates nothing per operation: a phase of ten times as
// many reads and writes makes no more allocations (a phase allocates a
// little to start and end, and once per file it opens).
func TestDataPathDoesNotAllocate(t *testing.T) {
	e, dir := generalRunner(t, 2, true, nil)
	tg := e.NewTargets(dir, jobNames(2))
	if _, err := e.Run(context.Background(), FilePhase{Title: "lay", Kind: Write, Targets: tg, FileSize: 1 << 20, BlockSize: 4096}); err != nil {
		t.Fatal(err)
	}
	mallocs := func(ops int64) uint64 {
		p := FilePhase{Title: "rw", Kind: Mixed, ReadPct: 50, Access: Random, Targets: tg, FileSize: 1 << 20, BlockSize: 4096, Ops: ops, Interval: time.Hour}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if _, err := e.Run(context.Background(), p); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.Mallocs - before.Mallocs
	}
	mallocs(100) // warm up lazily made state
	small, large := mallocs(200), mallocs(20000)
	// 20000 operations visit about 40 files; allow a few allocations per
	// file open, none per operation.
	if large > small+400 {
		t.Errorf("%d allocations for 200 operations, %d for 20000", small, large)
	}
	if testing.Verbose() {
		t.Logf("%d allocations for 200 operations, %d for 20000", small, large)
	}
}

// stallTracer stalls its worker once, after the n-th read.
type stallTracer struct {
	n, seen int
	d       time.Duration
}

func (s *stallTracer) Trace(w int, ev Event) {
	if ev.Op == "read" {
		if s.seen++; s.seen == s.n {
			time.Sleep(s.d)
		}
	}
}

// A stall in an open loop is charged to the operations that had to wait for
// it (response time), not hidden as in a closed loop: coordinated omission.
func TestOpenLoopChargesStalls(t *testing.T) {
	tr := &stallTracer{n: 20, d: 100 * time.Millisecond}
	e, dir := generalRunner(t, 1, false, nil)
	tg := e.NewTargets(dir, jobNames(1))
	if _, err := e.Run(context.Background(), FilePhase{Title: "lay", Kind: Write, Targets: tg, FileSize: 64 << 10, BlockSize: 4 << 10}); err != nil {
		t.Fatal(err)
	}
	e.cfg.Tracer = tr
	r, err := e.Run(context.Background(), FilePhase{Title: "ol", Kind: Read, Targets: tg, FileSize: 64 << 10, BlockSize: 4 << 10, Rate: 500, Ops: 100})
	if err != nil {
		t.Fatal(err)
	}
	resp, svc := r.Hist.Summary(), r.Service.Summary()
	// The operation after the stall was due 2 ms after the one before it
	// and started at least 100 ms later.
	if resp.Max < 90e3 {
		t.Errorf("response max %.0fus: the 100 ms stall is hidden", resp.Max)
	}
	if svc.Max >= resp.Max {
		t.Errorf("service max %.0fus not below response max %.0fus", svc.Max, resp.Max)
	}
}

// BenchmarkRandRead4K measures the general mode's cost per operation on
// page-cached data: PRNG offsets, a pread, two clock reads, histograms and
// counters.
func BenchmarkRandRead4K(b *testing.B) {
	dir := b.TempDir()
	e := NewRunner(Config{Dir: dir, Workers: 1, Seed: 1}, 1<<20)
	tg := e.NewTargets(dir, jobNames(1))
	p := FilePhase{Title: "lay", Kind: Write, Targets: tg, FileSize: 64 << 20, BlockSize: 1 << 20}
	if _, err := e.Run(context.Background(), p); err != nil {
		b.Fatal(err)
	}
	p = FilePhase{Title: "randread", Kind: Read, Access: Random, Targets: tg, FileSize: 64 << 20, BlockSize: 4096, Ops: int64(b.N)}
	b.SetBytes(4096)
	b.ResetTimer()
	if _, err := e.Run(context.Background(), p); err != nil {
		b.Fatal(err)
	}
}

// A rename phase limited by --ops does exactly that many timed renames,
// and every file has its own name again afterwards.
func TestRenameOpsExact(t *testing.T) {
	e, dir := generalRunner(t, 2, false, nil)
	tg := e.NewTargets(dir, jobNames(4))
	if _, err := e.Run(context.Background(), FilePhase{Title: "lay", Kind: Create, Targets: tg, FileSize: 1, BlockSize: 1}); err != nil {
		t.Fatal(err)
	}
	for _, ops := range []int64{1, 5, 7} {
		r, err := e.Run(context.Background(), FilePhase{Title: "rename", Kind: Rename, Targets: tg, Ops: ops})
		if err != nil || r.Ops != ops {
			t.Fatalf("--ops %d: %d renames timed, %v", ops, r.Ops, err)
		}
		for _, p := range tg.Paths {
			if _, err := os.Stat(p); err != nil {
				t.Fatalf("after --ops %d: %v", ops, err)
			}
		}
	}
}

// A file whose writing was interrupted is not a completed item.
func TestInterruptedWriteIsNoItem(t *testing.T) {
	e, dir := generalRunner(t, 1, false, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for e.Live.Ops.Load() < 3 {
			runtime.Gosched()
		}
		cancel()
	}()
	r, err := e.Run(ctx, FilePhase{Title: "w", Kind: Create, Targets: e.NewTargets(dir, jobNames(1)), FileSize: 1 << 30, BlockSize: 64 << 10})
	if !errors.Is(err, context.Canceled) || r.Items != 0 || r.Ops < 3 {
		t.Fatalf("interrupted write: items %d ops %d, %v", r.Items, r.Ops, err)
	}
}

// Under O_DIRECT a short transfer is continued only from an aligned point;
// otherwise it fails clearly instead of issuing an unaligned request.
func TestDirectShortTransferAlignment(t *testing.T) {
	calls := 0
	short := func(n int) func(b []byte, off int64) (int, error) {
		return func(b []byte, off int64) (int, error) {
			calls++
			return min(len(b), n), nil
		}
	}
	buf := make([]byte, 8192)
	if n, err := ioFull(short(4096), buf, 0, 4096, io.ErrShortWrite); err != nil || n != 8192 {
		t.Fatalf("aligned short writes: %d, %v", n, err)
	}
	calls = 0
	n, err := ioFull(short(7), buf, 4096, 4096, io.ErrShortWrite)
	if !errors.Is(err, ErrUnaligned) || n != 7 || calls != 1 {
		t.Fatalf("unaligned short write: %d bytes, %d calls, %v", n, calls, err)
	}
	if !strings.Contains(err.Error(), "offset 4096") {
		t.Errorf("error does not say where: %v", err)
	}
}
