package workload

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
)

// streamWrite writes files of a stream's size with a spare CPU, reads them
// back with verification, and returns the runner.
func streamWrite(t *testing.T, cfg Config, p FilePhase) *Runner {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	e := NewRunner(cfg, 64<<10)
	p.Targets = filesOf(e, 2, names)
	if _, err := e.Run(context.Background(), p); err != nil {
		t.Fatal(err)
	}
	if e.files[0].stream == nil || e.files[0].spare != nil {
		t.Fatalf("a big file with a spare CPU: stream %v, second buffer %v", e.files[0].stream != nil, e.files[0].spare != nil)
	}
	rd := p
	rd.Kind, rd.Access, rd.BlockSize = Read, Sequential, 48<<10 // another transfer size
	if r, err := e.Run(context.Background(), rd); err != nil || r.Errors != 0 || r.Bytes != 2*p.FileSize {
		t.Fatalf("read back = %+v, %v", r, err)
	}
	return e
}

// TestStreamWrites: big files written from a worker's stream (no block
// made, buffered and O_DIRECT, in order and at random, with a short last
// block) read back verified, and hold what Fill makes for them.
func TestStreamWrites(t *testing.T) {
	size := int64(pattern.StreamMin + 3<<20 + 5000)
	create := FilePhase{Title: "Write", Kind: Create, FileSize: size, BlockSize: 64 << 10}
	random := FilePhase{Title: "Write", Kind: Write, Access: Random, FileSize: size - 5000, BlockSize: 16 << 10}
	for _, c := range []struct {
		name   string
		direct bool
		p      FilePhase
	}{{"create", false, create}, {"random", false, random}, {"direct", true, random}} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := Config{Dir: dir, Workers: 1, Verify: true, Seed: 8}
			if c.direct {
				dir = testenv.Ext4(t, "64M")
				a, err := sysio.ProbeDirect(dir, "ext4")
				if err != nil {
					t.Fatal(err)
				}
				cfg.Dir, cfg.Direct, cfg.Align = dir, true, a
			}
			e := streamWrite(t, cfg, c.p)
			got, err := os.ReadFile(filepath.Join(dir, names(0, 1)))
			if err != nil {
				t.Fatal(err)
			}
			want := make([]byte, c.p.FileSize)
			e.pattern.Fill(want, pattern.Sized(e.pattern.ID(names(0, 1)), c.p.FileSize), 0)
			if !bytes.Equal(got, want) {
				t.Fatalf("file holds %d bytes, not the stream's content", len(got))
			}
		})
	}
}

// TestStreamsUpToTwoPerCPU: with every CPU busy a worker still writes big
// files from its stream, up to two workers a CPU (the data the same as
// Fill's), and more while their streams take a sixteenth of the host's
// memory at most; past that, no worker holds a stream and blocks are
// made in its buffer, the same bytes again.
func TestStreamsUpToTwoPerCPU(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func(m func() int64) { hostMemory = m }(hostMemory)
	size := int64(pattern.StreamMin + 70000)
	for _, c := range []struct {
		workers int
		memory  int64
		streams bool
	}{{2, 0, true}, {4, 0, true}, {5, 0, false}, {5, 1 << 30, true}, {5, 64 << 20, false}} {
		hostMemory = func() int64 { return c.memory }
		dir := t.TempDir()
		e := NewRunner(Config{Dir: dir, Workers: c.workers, Verify: true, Seed: 5}, 64<<10)
		p := FilePhase{Title: "Write", Kind: Create, FileSize: size, BlockSize: 64 << 10, Targets: filesOf(e, 1, names)}
		if r, err := e.Run(context.Background(), p); err != nil || r.Errors != 0 {
			t.Fatalf("%d workers: write = %+v, %v", c.workers, r, err)
		}
		for w, f := range e.files {
			if (f.stream != nil) != c.streams || f.spare != nil {
				t.Fatalf("%d workers on 2 CPUs, %d bytes, worker %d: stream %v (want %v), second buffer %v",
					c.workers, c.memory, w, f.stream != nil, c.streams, f.spare != nil)
			}
		}
		name := names(c.workers-1, 0)
		got, err := os.ReadFile(filepath.Join(dir, name))
		want := make([]byte, size)
		e.pattern.Fill(want, pattern.Sized(e.pattern.ID(name), size), 0)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d workers: %s holds %d bytes, not its content (%v)", c.workers, name, len(got), err)
		}
	}
}
