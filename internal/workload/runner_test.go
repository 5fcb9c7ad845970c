package workload

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
)

func names(w, i int) string { return "f." + strconv.Itoa(w) + "." + strconv.Itoa(i) }

// filesOf is n files per worker, worker by worker, named by name.
func filesOf(e *Runner, n int, name func(w, i int) string) *Targets {
	var ns []string
	for w := range e.cfg.Workers {
		for i := range n {
			ns = append(ns, name(w, i))
		}
	}
	return e.NewTargets(e.cfg.Dir, ns)
}

func newRunner(t *testing.T, workers int, verify bool, tr Tracer) (*Runner, string) {
	dir := t.TempDir()
	return NewRunner(Config{Dir: dir, Workers: workers, Verify: verify, Seed: 1, Tracer: tr}, 64<<10), dir
}

func TestWriteReadVerify(t *testing.T) {
	e, dir := newRunner(t, 3, true, nil)
	w := FilePhase{Name: "w", Title: "Write", Kind: Create, Targets: filesOf(e, 4, names), FileSize: 200 << 10, BlockSize: 64 << 10}
	r, err := e.Run(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	// 200 KiB in 64 KiB blocks: 4 writes per file (the last one short).
	if r.Ops != 3*4*4 || r.Items != 12 || r.Bytes != 12*200<<10 || r.Hist.Count() != r.Ops || r.Elapsed <= 0 {
		t.Fatalf("write result = %+v", r)
	}
	rd := w
	rd.Kind, rd.Name, rd.Title = Read, "r", "Read"
	r, err = e.Run(context.Background(), rd)
	if err != nil || r.Errors != 0 || r.Bytes != 12*200<<10 {
		t.Fatalf("read = %+v, %v", r, err)
	}

	// Corrupt one byte of one file and shorten another: both are counted
	// as errors, the phase goes on and reads everything else.
	f1 := filepath.Join(dir, names(1, 2))
	data, _ := os.ReadFile(f1)
	data[100<<10] ^= 0xff
	os.WriteFile(f1, data, 0o644)
	os.Truncate(filepath.Join(dir, names(2, 0)), 1000)
	r, err = e.Run(context.Background(), rd)
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 2 || r.Items != 10 || len(r.Samples) != 2 {
		t.Fatalf("after corruption: errors %d items %d samples %v", r.Errors, r.Items, r.Samples)
	}
	for _, s := range r.Samples {
		if !bytes.Contains([]byte(s), []byte("mismatch")) {
			t.Errorf("sample %q does not say mismatch", s)
		}
	}
}

func TestWriteRefusesExistingFile(t *testing.T) {
	e, dir := newRunner(t, 1, false, nil)
	os.WriteFile(filepath.Join(dir, names(0, 0)), []byte("mine"), 0o644)
	_, err := e.Run(context.Background(), FilePhase{Title: "Write", Kind: Create, Targets: filesOf(e, 1, names), FileSize: 10, BlockSize: 10})
	var pe *PathError
	if !errors.As(err, &pe) || !errors.Is(err, os.ErrExist) || pe.Op != "create" {
		t.Fatalf("err = %v, want a create error for an existing file", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, names(0, 0))); string(b) != "mine" {
		t.Errorf("existing file overwritten: %q", b)
	}
}

func TestStatUnlinkAndCancel(t *testing.T) {
	e, dir := newRunner(t, 2, false, nil)
	w := FilePhase{Title: "Write", Kind: Create, Targets: filesOf(e, 5, names), FileSize: 1, BlockSize: 1, PerFile: true}
	if _, err := e.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	r, err := e.Run(context.Background(), FilePhase{Title: "Stat", Kind: Stat, Targets: filesOf(e, 5, names)})
	if err != nil || r.Ops != 10 {
		t.Fatalf("stat = %+v, %v", r, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r, err = e.Run(ctx, FilePhase{Title: "Unlink", Kind: Unlink, Targets: filesOf(e, 5, names)})
	if !errors.Is(err, context.Canceled) || !r.Incomplete || r.Ops != 0 {
		t.Fatalf("cancelled unlink = %+v, %v", r, err)
	}
	r, err = e.Run(context.Background(), FilePhase{Title: "Unlink", Kind: Unlink, Targets: filesOf(e, 5, names)})
	if err != nil || r.Ops != 10 {
		t.Fatalf("unlink = %+v, %v", r, err)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left: %v", left)
	}
}

type countTracer struct {
	mu  sync.Mutex
	ops map[string]int
}

func (c *countTracer) Trace(w int, ev Event) {
	c.mu.Lock()
	c.ops[ev.Op]++
	c.mu.Unlock()
}

func TestTracerSeesEveryOperation(t *testing.T) {
	tr := &countTracer{ops: map[string]int{}}
	e, _ := newRunner(t, 2, false, tr)
	w := FilePhase{Title: "Write", Kind: Create, Targets: filesOf(e, 3, names), FileSize: 100 << 10, BlockSize: 64 << 10}
	e.Run(context.Background(), w)
	w.Kind = Read
	e.Run(context.Background(), w)
	e.Run(context.Background(), FilePhase{Title: "Stat", Kind: Stat, Targets: filesOf(e, 3, names)})
	e.Run(context.Background(), FilePhase{Title: "Unlink", Kind: Unlink, Targets: filesOf(e, 3, names)})
	want := map[string]int{"create": 6, "write": 12, "close": 12, "open": 6, "read": 12, "stat": 6, "unlink": 6}
	for op, n := range want {
		if tr.ops[op] != n {
			t.Errorf("%s traced %d times, want %d (all: %v)", op, tr.ops[op], n, tr.ops)
		}
	}
}

// BenchmarkWriteRead measures the runner's whole path (pattern, syscalls,
// histogram) on a temporary directory: 1 MiB blocks, 64 MiB per file.
func BenchmarkWriteRead(b *testing.B) {
	dir := b.TempDir()
	e := NewRunner(Config{Dir: dir, Workers: 1, Seed: 1}, 1<<20)
	b.SetBytes(2 * 64 << 20)
	for i := 0; i < b.N; i++ {
		name := func(w, j int) string { return "b." + strconv.Itoa(i) }
		p := FilePhase{Title: "W", Kind: Create, Targets: filesOf(e, 1, name), FileSize: 64 << 20, BlockSize: 1 << 20}
		if _, err := e.Run(context.Background(), p); err != nil {
			b.Fatal(err)
		}
		p.Kind = Read
		if _, err := e.Run(context.Background(), p); err != nil {
			b.Fatal(err)
		}
		os.Remove(filepath.Join(dir, name(0, 0)))
	}
}

// TestIOFullRetriesShortTransfers: short reads and writes (legal on network
// file systems) and EINTR are continued until the block is done; a zero
// transfer ends it.
func TestIOFullRetriesShortTransfers(t *testing.T) {
	src := bytes.Repeat([]byte("0123456789"), 100)
	var calls []int64
	short := func(b []byte, off int64) (int, error) {
		calls = append(calls, off)
		if len(calls) == 2 {
			return 0, unix.EINTR
		}
		if off >= int64(len(src)) {
			return 0, nil
		}
		n := copy(b[:min(len(b), 7)], src[off:]) // at most 7 bytes a call
		return n, nil
	}
	buf := make([]byte, 100)
	n, err := ioFull(short, buf, 3, 1, io.EOF)
	if err != nil || n != 100 || !bytes.Equal(buf, src[3:103]) {
		t.Fatalf("ioFull = %d, %v, %q", n, err, buf)
	}
	if calls[1] != calls[2] {
		t.Errorf("EINTR not retried at the same offset: %v", calls)
	}
	calls = nil
	n, err = ioFull(short, make([]byte, 50), 980, 1, io.EOF)
	if n != 20 || err != io.EOF {
		t.Errorf("at the end: %d, %v; want 20, EOF", n, err)
	}
	failing := func(b []byte, off int64) (int, error) { return 0, unix.ENOSPC }
	if _, err := ioFull(failing, buf, 0, 1, io.ErrShortWrite); err != unix.ENOSPC {
		t.Errorf("error not returned: %v", err)
	}
}

// TestWriteAhead: with a spare CPU, the next block is made while the
// current one is written; what lands on disk is the same, also for a short
// last block, and a stop in the middle of a file leaves no helper behind
// that could still write into the worker's buffers.
func TestWriteAhead(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	dir := t.TempDir()
	e := NewRunner(Config{Dir: dir, Workers: 2, Verify: true, Seed: 3}, 64<<10)
	if !e.ahead {
		t.Fatal("2 workers on 4 CPUs: no blocks made ahead")
	}
	w := FilePhase{Title: "Write", Kind: Create, Targets: filesOf(e, 3, names), FileSize: 1<<20 + 1000, BlockSize: 64 << 10}
	if _, err := e.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if e.files[0].spare == nil {
		t.Fatal("no second buffer after a write")
	}
	rd := w
	rd.Kind = Read
	if r, err := e.Run(context.Background(), rd); err != nil || r.Errors != 0 || r.Bytes != 6*(1<<20+1000) {
		t.Fatalf("read back = %+v, %v", r, err)
	}
	// The same bytes as a run that makes every block in line.
	inline := NewRunner(Config{Dir: t.TempDir(), Workers: 4, Seed: 3}, 64<<10)
	wi := w
	wi.Targets = filesOf(inline, 3, names)
	if _, err := inline.Run(context.Background(), wi); err != nil {
		t.Fatal(err)
	}
	if inline.files[0].spare != nil {
		t.Fatal("4 workers on 4 CPUs: second buffer")
	}
	a, _ := os.ReadFile(filepath.Join(dir, names(1, 2)))
	b, _ := os.ReadFile(filepath.Join(inline.cfg.Dir, names(1, 2)))
	if len(a) != 1<<20+1000 || !bytes.Equal(a, b) {
		t.Fatalf("made-ahead content differs from in-line content (%d, %d bytes)", len(a), len(b))
	}
	ctx, cancel := context.WithCancel(context.Background())
	w.Targets = filesOf(e, 1, func(wk, i int) string { return "stop." + strconv.Itoa(wk) })
	w.FileSize = 64 << 20
	go func() {
		for e.Live.Ops.Load() < 3 {
			runtime.Gosched()
		}
		cancel()
	}()
	if _, err := e.Run(ctx, w); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled write: %v", err)
	}
}

// TestBuffersFitThePhase: a worker's buffers hold what one operation of the
// phase moves (4 KiB for 4 KiB files, whatever the largest block), grow
// when a later phase moves more, and the data stays right. Under O_DIRECT
// they come from the runner's huge-page arena, packed one after another.
func TestBuffersFitThePhase(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	for _, direct := range []bool{false, true} {
		cfg := Config{Dir: t.TempDir(), Workers: 2, Verify: true, Seed: 4}
		if direct {
			cfg.Dir = testenv.Ext4(t, "64M")
			a, err := sysio.ProbeDirect(cfg.Dir, "ext4")
			if err != nil {
				t.Fatal(err)
			}
			cfg.Direct, cfg.Align = true, a
		}
		e := NewRunner(cfg, 1<<20)
		for _, c := range []struct {
			prefix      string
			size, block int64
			buf, spare  int
		}{{"small", 4096, 1 << 20, 4096, 0}, {"big", 1<<20 + 4096, 256 << 10, 256 << 10, 256 << 10}, {"again", 4096, 1 << 20, 256 << 10, 256 << 10}} {
			name := func(w, i int) string { return c.prefix + "." + strconv.Itoa(w) + "." + strconv.Itoa(i) }
			p := FilePhase{Title: "Write", Kind: Create, Targets: filesOf(e, 3, name), FileSize: c.size, BlockSize: c.block}
			if _, err := e.Run(context.Background(), p); err != nil {
				t.Fatal(err)
			}
			p.Kind = Read
			if r, err := e.Run(context.Background(), p); err != nil || r.Errors != 0 || r.Bytes != 6*c.size {
				t.Fatalf("direct %v, %s files: read back = %+v, %v", direct, c.prefix, r, err)
			}
			for w, f := range e.files {
				if len(f.buf) != c.buf || len(f.spare) != c.spare {
					t.Fatalf("direct %v, %s files of %d bytes in %d blocks, worker %d: buffers of %d and %d bytes, want %d and %d",
						direct, c.prefix, c.size, c.block, w, len(f.buf), len(f.spare), c.buf, c.spare)
				}
			}
			if c.prefix == "small" && direct {
				if a, b := addrOf(e.files[0].buf), addrOf(e.files[1].buf); b != a+4096 {
					t.Errorf("two workers' 4 KiB direct buffers at %#x and %#x, not packed in the arena", a, b)
				}
			}
		}
	}
}

// TestReadBufferMapped: a big file written from the worker's stream
// leaves the worker's own buffer unwritten, and the first phase to read
// into it would take a page fault a page inside its time; the buffer is
// mapped in when it is made, before any phase starts.
func TestReadBufferMapped(t *testing.T) {
	e := NewRunner(Config{Dir: t.TempDir(), Workers: 1, Seed: 5}, 2<<20)
	p := FilePhase{Title: "Write", Kind: Create, Targets: filesOf(e, 1, func(int, int) string { return "big" }),
		FileSize: pattern.StreamMin, BlockSize: 2 << 20}
	if _, err := e.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	f := e.files[0]
	if f.stream == nil {
		t.Fatal("the big file was not written from a stream")
	}
	b := f.buf
	if n, want := testenv.ResidentPages(t, b), int((addrOf(b)+uintptr(len(b))-1)>>12-addrOf(b)>>12+1); len(b) != 2<<20 || n != want {
		t.Errorf("after the write, %d of the %d pages of the worker's %d-byte buffer are mapped in", n, want, len(b))
	}
}

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// TestReadOwnSizes reads files that exist already, each of its own size,
// per block and per file, with O_NOATIME: every byte of each file is
// read, no more, and the access times stay as they were.
func TestReadOwnSizes(t *testing.T) {
	dir := t.TempDir()
	sizes := []int64{0, 1, 4095, 64 << 10, 64<<10 + 1, 300 << 10}
	var ns []string
	var total int64
	old := time.Unix(1_000_000_000, 0)
	for i, n := range sizes {
		name := "u" + strconv.Itoa(i)
		if err := os.WriteFile(filepath.Join(dir, name), bytes.Repeat([]byte{'x'}, int(n)), 0o644); err != nil {
			t.Fatal(err)
		}
		// An access time older than the modification time: a plain read
		// would update it, even under relatime.
		if err := os.Chtimes(filepath.Join(dir, name), old, time.Now()); err != nil {
			t.Fatal(err)
		}
		ns = append(ns, name)
		total += n
	}
	e := NewRunner(Config{Dir: dir, Workers: 2, Seed: 1, NoAtime: true}, 64<<10)
	for _, perFile := range []bool{false, true} {
		// Timed per block, an empty file has no operation: it is read per
		// file (open to close) only.
		first := 1
		if perFile {
			first = 0
		}
		tg := e.NewTargets(dir, ns[first:])
		tg.Sizes = sizes[first:]
		p := FilePhase{Name: "r", Title: "Read", Kind: Read, Targets: tg, FileSize: 300 << 10, BlockSize: 64 << 10, PerFile: perFile}
		r, err := e.Run(context.Background(), p)
		if err != nil || r.Errors != 0 || r.Bytes != total || r.Items != int64(len(sizes)-first) {
			t.Fatalf("perFile=%v: read = %+v, %v; want %d bytes of %d files", perFile, r, err, total, len(sizes)-first)
		}
		// Blocks: 1, 1, 1, 2 and 5.
		if want := int64(10); !perFile && r.Ops != want {
			t.Errorf("block reads = %d, want %d", r.Ops, want)
		}
	}
	if n := e.PlainOpens.Load(); n != 0 {
		t.Errorf("PlainOpens = %d for files of our own", n)
	}
	for _, n := range ns {
		var st unix.Stat_t
		if err := unix.Stat(filepath.Join(dir, n), &st); err != nil {
			t.Fatal(err)
		}
		if got := time.Unix(st.Atim.Unix()); !got.Equal(old) {
			t.Errorf("%s: atime %v after the reads, want %v", n, got, old)
		}
	}
}

// TestReadOwnSizesShrunk: a file shorter than its listed size (it shrank
// after the listing) is an error of its own; the other files are read.
func TestReadOwnSizesShrunk(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(dir, n), make([]byte, 10_000), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	e := NewRunner(Config{Dir: dir, Workers: 1, Seed: 1, NoAtime: true}, 4096)
	tg := e.NewTargets(dir, []string{"a", "b", "c"})
	tg.Sizes = []int64{10_000, 20_000, 10_000}
	for _, perFile := range []bool{false, true} {
		p := FilePhase{Name: "r", Title: "Read", Kind: Read, Targets: tg, FileSize: 20_000, BlockSize: 4096, PerFile: perFile}
		r, err := e.Run(context.Background(), p)
		if err != nil || r.Errors != 1 || r.Items != 2 || len(r.Samples) != 1 || !strings.Contains(r.Samples[0], dir+"/b ends at 10000") {
			t.Errorf("perFile=%v: %+v, %v; want one error naming b, 2 files read", perFile, r, err)
		}
	}
}

type procsTracer struct {
	mu  sync.Mutex
	min int
}

func (p *procsTracer) Trace(int, Event) {
	n := runtime.GOMAXPROCS(0)
	p.mu.Lock()
	p.min = min(p.min, n)
	p.mu.Unlock()
}

// While a phase runs, each worker has a P of its own (GOMAXPROCS above the
// workers), so that one blocked in a system call is not handed off; after
// it, GOMAXPROCS is what it was.
func TestPhaseRaisesProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	tr := &procsTracer{min: 1 << 30}
	e, _ := newRunner(t, 6, false, tr)
	p := FilePhase{Title: "Write", Kind: Create, Targets: filesOf(e, 2, names), FileSize: 4096, BlockSize: 4096}
	if _, err := e.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if tr.min != 7 {
		t.Errorf("GOMAXPROCS during the phase: %d, want 7", tr.min)
	}
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Errorf("GOMAXPROCS after the phase: %d, want 2", n)
	}
}

// Beyond 64 workers GOMAXPROCS stays as it is: each P's caches would cost
// more memory than the hand-off costs time.
func TestManyWorkersKeepProcs(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	if restore := raiseProcs(64); runtime.GOMAXPROCS(0) != 65 {
		t.Errorf("64 workers: GOMAXPROCS %d, want 65", runtime.GOMAXPROCS(0))
	} else {
		restore()
	}
	raiseProcs(65)()
	if n := runtime.GOMAXPROCS(0); n != 2 {
		t.Errorf("65 workers: GOMAXPROCS %d, want 2", n)
	}
}

// orderTracer keeps each worker's operations in order.
type orderTracer struct {
	mu  sync.Mutex
	ops map[int][]string
}

func (o *orderTracer) Trace(w int, ev Event) {
	o.mu.Lock()
	o.ops[w] = append(o.ops[w], ev.Op)
	o.mu.Unlock()
}

// A phase's Fsync fsyncs each file it writes just before closing it, and
// SyncFS has each worker end with one syncfs, after its last file; the
// next phase, with neither, does neither.
func TestPhaseFsyncAndSyncFS(t *testing.T) {
	tr := &orderTracer{ops: map[int][]string{}}
	e, dir := newRunner(t, 3, false, tr)
	ctx := context.Background()
	shared := e.NewTargets(dir, []string{"shared"})
	for _, c := range []struct {
		p           FilePhase
		fsync, sync int // per worker
	}{
		{FilePhase{Title: "create", Kind: Create, Targets: filesOf(e, 6, names), FileSize: 3901, BlockSize: 3901, SyncFS: true}, 0, 1},
		{FilePhase{Title: "shared", Kind: Write, Targets: shared, BlockSize: 4096,
			Shared: &SharedFile{Block: 4096, Segments: 4}, Fsync: true}, 1, 0},
		{FilePhase{Title: "again", Kind: Write, Targets: shared, BlockSize: 4096,
			Shared: &SharedFile{Block: 4096, Segments: 4}}, 0, 0},
	} {
		tr.ops = map[int][]string{}
		if r, err := e.Run(ctx, c.p); err != nil || r.Errors != 0 {
			t.Fatalf("%s: %v, %d errors", c.p.Title, err, r.Errors)
		}
		for w := range 3 {
			ops := tr.ops[w]
			n := map[string]int{}
			for i, op := range ops {
				n[op]++
				if op == "fsync" && (i+1 == len(ops) || ops[i+1] != "close") {
					t.Errorf("%s: worker %d: fsync not followed by close: %v", c.p.Title, w, ops)
				}
			}
			if n["fsync"] != c.fsync || n["syncfs"] != c.sync || c.sync > 0 && ops[len(ops)-1] != "syncfs" {
				t.Errorf("%s: worker %d: %v", c.p.Title, w, ops)
			}
		}
	}
}

// writeTracer is a WriteTracer: it counts the writes it is told of by
// TraceWrite and checks each one's data against the file.
type writeTracer struct {
	countTracer
	whole  int
	failed int
	bad    []string
}

func (c *writeTracer) Trace(w int, ev Event) {
	c.countTracer.Trace(w, ev)
	if ev.Op == "write" && ev.Err != nil {
		c.mu.Lock()
		c.failed++
		c.mu.Unlock()
	}
}

func (c *writeTracer) TraceWrite(w int, path string, off int64, data []byte, at time.Time) {
	got := make([]byte, len(data))
	f, err := os.Open(path)
	if err == nil {
		_, err = f.ReadAt(got, off)
		f.Close()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.whole++
	if err != nil || !bytes.Equal(got, data) || at.IsZero() || time.Since(at) < 0 {
		c.bad = append(c.bad, fmt.Sprintf("%s at %d: %v", path, off, err))
	}
}

// TestWriteTracerTakesWholeWrites: a WriteTracer is told of each write
// that succeeded whole by TraceWrite, with the bytes written, and of
// every other operation, failed writes included, by Trace.
func TestWriteTracerTakesWholeWrites(t *testing.T) {
	tr := &writeTracer{countTracer: countTracer{ops: map[string]int{}}}
	e, _ := newRunner(t, 2, false, tr)
	w := FilePhase{Title: "Write", Kind: Create, Targets: filesOf(e, 3, names), FileSize: 100 << 10, BlockSize: 64 << 10}
	if _, err := e.Run(context.Background(), w); err != nil {
		t.Fatal(err)
	}
	if tr.whole != 12 || tr.ops["write"] != 0 || tr.ops["create"] != 6 || len(tr.bad) > 0 {
		t.Fatalf("TraceWrite %d times (want 12), Trace %v, bad %v", tr.whole, tr.ops, tr.bad)
	}

	// A file system that fills: the writes that failed reach Trace.
	full := &writeTracer{countTracer: countTracer{ops: map[string]int{}}}
	e = NewRunner(Config{Dir: testenv.Tmpfs(t, "16M"), Workers: 2, Seed: 1, Tracer: full}, 1<<20)
	w = FilePhase{Title: "Fill", Kind: Create, Targets: e.NewTargets(e.cfg.Dir, jobNames(2)), FileSize: 16 << 20, BlockSize: 1 << 20}
	r, _ := e.Run(context.Background(), w)
	if r.Errors == 0 || full.failed == 0 || full.ops["write"] != full.failed || full.whole == 0 || len(full.bad) > 0 {
		t.Fatalf("errors %d: Trace's failed writes %d (of %d), TraceWrite %d, bad %v", r.Errors, full.failed, full.ops["write"], full.whole, full.bad)
	}
}
