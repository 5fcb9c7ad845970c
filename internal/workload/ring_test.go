//go:build linux

package workload

import (
	"context"
	"os"
	"runtime"
	"testing"

	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
)

// ringEngine is an engine on a real ext4 loop device, with O_DIRECT or
// buffered.
func ringEngine(t *testing.T, workers int, direct bool, tr Tracer) (*Engine, string) {
	cfg := Config{Dir: testenv.Ext4(t, "64M"), Workers: workers, Verify: true, Seed: 9, Tracer: tr}
	if direct {
		a, err := sysio.ProbeDirect(cfg.Dir, "ext4")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Direct, cfg.Align = true, a
	}
	return New(cfg, 64<<10), cfg.Dir
}

// A depth-32 random read of files the engine wrote at depth 32 verifies
// every block, buffered and under O_DIRECT; a byte changed on disk is
// found.
func TestRingDepth32VerifiesEveryBlock(t *testing.T) {
	testenv.NeedsServer(t, "an ext4 loop device")
	for _, direct := range []bool{false, true} {
		e, dir := ringEngine(t, 2, direct, nil)
		tg := e.NewTargets(dir, jobNames(2))
		const size, bs = 4 << 20, 4 << 10
		w := Phase{Name: "randwrite", Kind: Write, Access: Random, Targets: tg, FileSize: size, BlockSize: bs, IOEngine: IOUring, IODepth: 32}
		r, err := e.Run(context.Background(), w)
		if err != nil || r.Errors != 0 || r.Ops != 2*size/bs || r.Bytes != 2*size || r.Items != 2 {
			t.Fatalf("direct %v: randwrite at depth 32 = ops %d bytes %d items %d errors %d, %v", direct, r.Ops, r.Bytes, r.Items, r.Errors, err)
		}
		rd := w
		rd.Name, rd.Kind = "randread", Read
		r, err = e.Run(context.Background(), rd)
		if err != nil || r.Errors != 0 || r.Ops != 2*size/bs || r.Hist.Count() != r.Ops || r.Items != 2 {
			t.Fatalf("direct %v: randread at depth 32 = ops %d (histogram %d) items %d errors %d %v, %v", direct, r.Ops, r.Hist.Count(), r.Items, r.Errors, r.Samples, err)
		}
		// One byte of each file changed: each file's visit fails its
		// verification, whichever block comes back first.
		for _, p := range tg.Paths {
			f, err := os.OpenFile(p, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 1)
			f.ReadAt(b, 3<<20+77)
			b[0] ^= 1
			f.WriteAt(b, 3<<20+77)
			f.Close()
		}
		sysio.DropCaches()
		r, err = e.Run(context.Background(), rd)
		if err != nil || r.Errors != 2 || r.Items != 0 || r.Ops != 2*size/bs {
			t.Fatalf("direct %v: after corruption: errors %d items %d ops %d %v, %v", direct, r.Errors, r.Items, r.Ops, r.Samples, err)
		}
	}
}

// A phase limited to N operations does exactly N at any depth, with one
// latency sample each, mixed reads and writes included, closed and open
// loop; the trace sees each one.
func TestRingOpCountExact(t *testing.T) {
	testenv.NeedsServer(t, "an ext4 loop device")
	tr := &countTracer{ops: map[string]int{}}
	e, dir := ringEngine(t, 3, true, tr)
	tg := e.NewTargets(dir, jobNames(3))
	lay := Phase{Name: "lay", Kind: Create, PerFile: true, Targets: tg, FileSize: 1 << 20, BlockSize: 64 << 10}
	if _, err := e.Run(context.Background(), lay); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		depth int
		ops   int64
		rate  float64
	}{{1, 777, 0}, {7, 1001, 0}, {64, 5000, 0}, {16, 300, 3000}} {
		clear(tr.ops)
		p := Phase{Name: "mix", Kind: Mixed, ReadPct: 70, Access: Random, Targets: tg, FileSize: 1 << 20, BlockSize: 4 << 10,
			Ops: c.ops, Rate: c.rate, IOEngine: IOUring, IODepth: c.depth}
		r, err := e.Run(context.Background(), p)
		if err != nil || r.Errors != 0 || r.Ops != c.ops || r.Hist.Count() != c.ops || r.Bytes != c.ops*4096 {
			t.Fatalf("depth %d: ops %d (histogram %d) bytes %d errors %d %v, %v", c.depth, r.Ops, r.Hist.Count(), r.Bytes, r.Errors, r.Samples, err)
		}
		if got := tr.ops["read"] + tr.ops["write"]; int64(got) != c.ops || tr.ops["read"] == 0 || tr.ops["write"] == 0 {
			t.Fatalf("depth %d: traced %d reads and %d writes, want %d in all", c.depth, tr.ops["read"], tr.ops["write"], c.ops)
		}
		if c.rate > 0 && (r.Service == nil || r.Service.Count() != c.ops) {
			t.Fatalf("depth %d at a rate: no service times", c.depth)
		}
	}
}

// The files written at depth are the files written one operation at a
// time: the sync engine reads them back and verifies them.
func TestRingWritesReadBySync(t *testing.T) {
	testenv.NeedsServer(t, "an ext4 loop device")
	e, dir := ringEngine(t, 1, false, nil)
	tg := e.NewTargets(dir, jobNames(1))
	// A file size that is not a whole number of blocks: the last block
	// is short.
	w := Phase{Name: "write", Kind: Write, Targets: tg, FileSize: 1<<20 + 4096, BlockSize: 64 << 10, IOEngine: IOUring, IODepth: 8}
	if r, err := e.Run(context.Background(), w); err != nil || r.Ops != 17 {
		t.Fatalf("write = %+v, %v", r, err)
	}
	rd := w
	rd.Kind, rd.IOEngine, rd.IODepth = Read, Sync, 0
	if r, err := e.Run(context.Background(), rd); err != nil || r.Errors != 0 || r.Ops != 17 || r.Items != 1 {
		t.Fatalf("read back = ops %d errors %d %v, %v", r.Ops, r.Errors, r.Samples, err)
	}
	bad := rd
	bad.IODepth = 4
	if _, err := e.Run(context.Background(), bad); err == nil {
		t.Fatal("depth 4 with the sync engine: no error")
	}
}

// A worker keeps its P in the ring's waits (uring.Ring.SetHold) when it
// has one to itself, and only then: with more workers than Ps a held P
// would keep the others from running.
func TestRingHoldsPOnlyWithOneEach(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, c := range []struct {
		workers, procs int
		hold           bool
	}{{1, 2, true}, {3, 4, true}, {2, 2, false}, {4, 2, false}} {
		runtime.GOMAXPROCS(c.procs)
		e := New(Config{Dir: t.TempDir(), Workers: c.workers}, 64<<10)
		f := &files{}
		p := &Phase{Kind: Read, IOEngine: IOUring, IODepth: 4}
		if err := e.setupRing(f, p, 4096); err != nil {
			t.Fatal(err)
		}
		if got := f.q.ring.Holds(); got != c.hold {
			t.Errorf("%d workers, GOMAXPROCS %d: ring holds its P %v, want %v", c.workers, c.procs, got, c.hold)
		}
		f.q.ring.Close()
	}
}
