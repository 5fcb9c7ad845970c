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
// back with verification, and returns the engine.
func streamWrite(t *testing.T, cfg Config, p Phase) *Engine {
	t.Helper()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	e := New(cfg, 64<<10)
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
	create := Phase{Title: "Write", Kind: Create, FileSize: size, BlockSize: 64 << 10}
	random := Phase{Title: "Write", Kind: Write, Access: Random, FileSize: size - 5000, BlockSize: 16 << 10}
	for _, c := range []struct {
		name   string
		direct bool
		p      Phase
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
