package pattern

import (
	"bytes"
	"crypto/sha256"
	"math/rand/v2"
	"testing"
	"unsafe"
)

func TestSized(t *testing.T) {
	p := New(3)
	for _, name := range []string{"a", "b", "big.0", "small/1", "x/y/z"} {
		id := p.ID(name)
		if IsStream(id) {
			t.Errorf("ID(%q) is a stream identity", name)
		}
		if IsStream(Sized(id, StreamMin-1)) || !IsStream(Sized(id, StreamMin)) {
			t.Errorf("Sized(%q) does not switch to a stream at StreamMin", name)
		}
		if Sized(Sized(id, StreamMin), 1) != id {
			t.Errorf("Sized(%q) does not switch back for a small size", name)
		}
	}
}

// TestStreamBlockIsFill: every block a Stream hands out is what Fill
// makes for the same file and offset, over many files, offsets past the
// base's period and off 4 KiB boundaries, sizes that end inside a stamp or
// a block, in an order that reuses the same part of the stream's buffer
// for different files; and a block sits in the buffer as aligned as its
// offset is (within 4 KiB), which O_DIRECT relies on.
func TestStreamBlockIsFill(t *testing.T) {
	p := New(5)
	const maxBlock = 1 << 20
	s := p.NewStream(make([]byte, StreamLen(maxBlock)), maxBlock)
	want := make([]byte, maxBlock)
	r := rand.New(rand.NewPCG(1, 2))
	ids := []uint64{Sized(p.ID("f0"), StreamMin), Sized(p.ID("f1"), 1<<30), Sized(p.ID("f2"), 10<<30)}
	sizes := []int{maxBlock, 4096, 4096 + 7, 12288 + 16, 1, 0, 100 << 10, maxBlock - 4096 + 3}
	for i := range 400 {
		id := ids[r.IntN(len(ids))]
		off := int64(r.IntN(1<<20)) * block // up to 4 GiB
		if i%3 == 1 {
			off += int64(1 + r.IntN(block-1)) // unaligned, as IOR's 47,008-byte transfers
		}
		n := sizes[i%len(sizes)]
		got, ok := s.Block(id, off, n)
		if !ok {
			t.Fatalf("Block(%x, %d, %d) refused", id, off, n)
		}
		if n > 0 && int64(addr(got)-addr(s.buf))%block != off%block {
			t.Fatalf("Block(%x, %d, %d) starts at %d of its 4 KiB", id, off, n, int64(addr(got)-addr(s.buf))%block)
		}
		p.Fill(want[:n], id, off)
		if !bytes.Equal(got, want[:n]) {
			t.Fatalf("Block(%x, %d, %d) differs from Fill at %d", id, off, n, firstDiff(got, want[:n]))
		}
	}
}

func addr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestStreamBlockRefuses(t *testing.T) {
	p := New(5)
	s := p.NewStream(make([]byte, StreamLen(8192)), 8192)
	big := Sized(p.ID("f"), StreamMin)
	for _, c := range []struct {
		id  uint64
		off int64
		n   int
	}{{p.ID("f"), 0, 4096}, {p.ID("f"), 100, 4096}, {big, 0, 8193}, {big, -1, 4096}} {
		if _, ok := s.Block(c.id, c.off, c.n); ok {
			t.Errorf("Block(%x, %d, %d) accepted", c.id, c.off, c.n)
		}
	}
	var none *Stream
	if _, ok := none.Block(big, 0, 4096); ok {
		t.Error("a nil Stream handed out a block")
	}
}

// TestStreamFillAnySplit: a stream file filled in pieces split anywhere
// (inside stamps, across the base's end) equals the file filled at once,
// and Check finds a flipped byte in it.
func TestStreamFillAnySplit(t *testing.T) {
	p := New(9)
	id := Sized(p.ID("big"), 1<<30)
	const at = streamBase - 3*block + 5 // crosses the base's end for some files
	whole := make([]byte, 6*block)
	p.Fill(whole, id, at)
	r := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		cut := 1 + r.IntN(len(whole)-1)
		a := make([]byte, len(whole))
		p.Fill(a[:cut], id, at)
		p.Fill(a[cut:], id, at+int64(cut))
		if !bytes.Equal(a, whole) {
			t.Fatalf("split at %d differs at %d", cut, firstDiff(a, whole))
		}
	}
	if bad := p.Check(whole, id, at); bad != -1 {
		t.Fatalf("Check of good data: %d", bad)
	}
	whole[4099] ^= 1
	if bad := p.Check(whole, id, at); bad != 4099 {
		t.Fatalf("Check found %d, want 4099", bad)
	}
}

// TestStreamBlocksUnique: over 64 MiB of each of two stream files (16
// periods of the base) no 4 KiB block repeats.
func TestStreamBlocksUnique(t *testing.T) {
	p := New(13)
	seen := make(map[[32]byte]bool)
	buf := make([]byte, 1<<20)
	for _, name := range []string{"big.0", "big.1"} {
		id := Sized(p.ID(name), 1<<30)
		for off := int64(0); off < 64<<20; off += int64(len(buf)) {
			p.Fill(buf, id, off)
			for c := 0; c < len(buf); c += block {
				k := sha256.Sum256(buf[c : c+block])
				if seen[k] {
					t.Fatalf("%s: the block at %d repeats", name, off+int64(c))
				}
				seen[k] = true
			}
		}
	}
}

// BenchmarkStreamGiB is what a writer spends on the content of a GiB of a
// big file in 1 MiB blocks through a Stream (compare BenchmarkFillGiB).
func BenchmarkStreamGiB(b *testing.B) {
	p := New(1)
	s := p.NewStream(make([]byte, StreamLen(1<<20)), 1<<20)
	b.SetBytes(1 << 30)
	for i := 0; b.Loop(); i++ {
		id := Sized(uint64(i), 1<<30)
		for blk := range int64(1024) {
			s.Block(id, blk<<20, 1<<20)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/GiB")
}

// BenchmarkHardTransfer is what making one of IOR's 47,008-byte
// transfers of a big shared file costs: taken from a stream (Block), or
// made in a buffer (Fill), as every transfer off a 4 KiB boundary was.
func BenchmarkHardTransfer(b *testing.B) {
	const xfer = 47008
	p := New(1)
	id := Sized(p.ID("ior_file_hard"), 1<<30)
	s := p.NewStream(make([]byte, StreamLen(2<<20)), 2<<20)
	buf := make([]byte, xfer)
	b.Run("stream", func(b *testing.B) {
		b.SetBytes(xfer)
		for i := int64(0); b.Loop(); i++ {
			s.Block(id, i*xfer, xfer)
		}
	})
	b.Run("fill", func(b *testing.B) {
		b.SetBytes(xfer)
		for i := int64(0); b.Loop(); i++ {
			p.Fill(buf, id, i*xfer)
		}
	})
}
