package workload

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/pattern"
)

// With Config.Repeat every transfer is the same bytes, the start of one
// buffer the pattern fills (random bytes, not a constant): in a shared
// file of 47,008-byte transfers, in a file a rank big enough to be a
// stream otherwise, and in small files created whole. What is read back
// verifies, and a byte changed in a transfer is still found.
func TestRepeatWritesOneBuffer(t *testing.T) {
	dir := t.TempDir()
	e := NewRunner(Config{Dir: dir, Workers: 2, Verify: true, Seed: 1, Repeat: true}, 64<<10)
	buf := make([]byte, 64<<10)
	pat := pattern.New(1)
	pat.Fill(buf, pat.ID("repeat"), 0)
	if n := len(bytes.Split(buf[:4096], buf[:1])); n > 64 {
		t.Fatalf("the buffer's first byte repeats %d times in 4 KiB: not random", n)
	}
	// same reports whether data is n-byte transfers of the buffer's start.
	same := func(data []byte, n int) bool {
		for at := 0; at < len(data); at += n {
			if !bytes.Equal(data[at:min(at+n, len(data))], buf[:min(n, len(data)-at)]) {
				return false
			}
		}
		return len(data) > 0
	}

	const segs = 3
	if _, err := e.Run(context.Background(), sharedPhase(e, Write, &SharedFile{Block: hardXfer, Segments: segs}, hardXfer)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "shared")
	if got, err := os.ReadFile(path); err != nil || len(got) != 2*segs*hardXfer || !same(got, hardXfer) {
		t.Fatalf("the shared file (%d bytes, %v) is not %d transfers of the one buffer", len(got), err, 2*segs)
	}
	r, err := e.Run(context.Background(), sharedPhase(e, Read, &SharedFile{Block: hardXfer, Segments: segs}, hardXfer))
	if err != nil || r.Errors != 0 || r.Bytes != 2*segs*hardXfer {
		t.Fatalf("read: %+v, %v", r, err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte{buf[7] ^ 1}, 4*hardXfer+7)
	f.Close()
	r, _ = e.Run(context.Background(), sharedPhase(e, Read, &SharedFile{Block: hardXfer, Segments: segs}, hardXfer))
	if r.Errors != 1 || !strings.Contains(strings.Join(r.Samples, ""), "at byte "+strconv.Itoa(4*hardXfer+7)) {
		t.Fatalf("a changed byte: %d errors, %q", r.Errors, r.Samples)
	}

	// 5 MiB a rank, above pattern.StreamMin: no stream with Repeat.
	const xfer, big = 64 << 10, 80
	l := &SharedFile{Block: xfer, Segments: big, PerRank: true}
	if _, err := e.Run(context.Background(), sharedPhase(e, Write, l, xfer)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(RankFile(filepath.Join(dir, "shared"), 1))
	if err != nil || len(got) != big*xfer || !same(got, xfer) {
		t.Fatalf("rank 1's file (%d bytes, %v) is not %d transfers of the one buffer", len(got), err, big)
	}

	c := FilePhase{Name: "c", Title: "Create", Kind: Create, Targets: filesOf(e, 4, names), FileSize: 3901, BlockSize: 3901}
	if _, err := e.Run(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Targets.Paths {
		if got, err := os.ReadFile(p); err != nil || len(got) != 3901 || !same(got, 3901) {
			t.Fatalf("%s (%d bytes, %v) is not the buffer's first 3901 bytes", p, len(got), err)
		}
	}
	rd := c
	rd.Kind, rd.Name = Read, "r"
	if r, err := e.Run(context.Background(), rd); err != nil || r.Errors != 0 || r.Bytes != 8*3901 {
		t.Fatalf("read of the small files: %+v, %v", r, err)
	}
}

// Repeat writes one call at a time: a phase on io_uring is refused.
func TestRepeatRefusesIOUring(t *testing.T) {
	e := NewRunner(Config{Dir: t.TempDir(), Workers: 1, Seed: 1, Repeat: true}, 64<<10)
	p := FilePhase{Name: "w", Title: "Write", Kind: Create, Targets: filesOf(e, 1, names), FileSize: 8192, BlockSize: 4096, IOEngine: IOUring, IODepth: 4}
	if _, err := e.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "use the sync engine") {
		t.Fatalf("Repeat on io_uring: %v", err)
	}
}
