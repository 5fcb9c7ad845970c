package pattern

import (
	"bytes"
	"compress/flate"
	"io"
	"math/rand/v2"
	"testing"
)

// chunk is the granularity of deduplicating storage: no two 4 KiB chunks
// of a run may be equal.
const chunk = 4096

func TestDistinctAndReproducible(t *testing.T) {
	p := New(42)
	a, b := make([]byte, 1<<20), make([]byte, 1<<20)
	id := p.ID("big.0")
	p.Fill(a, id, 0)
	p.Fill(b, id, 0)
	if !bytes.Equal(a, b) {
		t.Fatal("same block filled twice differs")
	}
	// Every 4 KiB chunk of many blocks of two files is unique.
	seen := map[string]bool{}
	for _, name := range []string{"big.0", "big.1"} {
		id := p.ID(name)
		for blk := int64(0); blk < 8; blk++ {
			p.Fill(a, id, blk<<20)
			for c := 0; c < len(a); c += chunk {
				k := string(a[c : c+chunk])
				if seen[k] {
					t.Fatalf("chunk repeated: file %s block %d chunk %d", name, blk, c/chunk)
				}
				seen[k] = true
			}
		}
	}
	if New(43).ID("big.0") == id {
		t.Error("identity does not depend on the seed")
	}
}

func TestIncompressible(t *testing.T) {
	p := New(7)
	var data bytes.Buffer
	buf := make([]byte, 1<<20)
	for blk := int64(0); blk < 4; blk++ { // 4 MiB: a JuiceFS block
		p.Fill(buf, p.ID("x"), blk<<20)
		data.Write(buf)
	}
	var z bytes.Buffer
	w, _ := flate.NewWriter(&z, flate.BestCompression)
	w.Write(data.Bytes())
	w.Close()
	if ratio := float64(z.Len()) / float64(data.Len()); ratio < 0.99 {
		t.Errorf("4 MiB of blocks compress to %.3f of their size", ratio)
	}
}

// Fill's content depends on the offset only: any split of a range into
// writes, aligned or not, gives the same bytes, and no 4 KiB chunk repeats.
func TestFillAnySplit(t *testing.T) {
	p := New(5)
	const n = 3<<20 + 5000
	whole := make([]byte, n)
	p.Fill(whole, 42, 0)
	r := rand.New(rand.NewPCG(1, 1))
	for trial := 0; trial < 50; trial++ {
		got := make([]byte, n)
		for off := 0; off < n; {
			l := min(1+r.IntN(300<<10), n-off)
			if trial%2 == 0 {
				l = min(1+r.IntN(40), n-off) // tiny, unaligned pieces
				if off > 1<<20 {
					l = n - off
				}
			}
			p.Fill(got[off:off+l], 42, int64(off))
			off += l
		}
		if string(got) != string(whole) {
			t.Fatalf("trial %d: content depends on the split", trial)
		}
	}
	seen := map[string]bool{}
	for c := 0; c+chunk <= n; c += chunk {
		k := string(whole[c : c+chunk])
		if seen[k] {
			t.Fatalf("chunk at %d repeats", c)
		}
		seen[k] = true
	}
}

// Fill's keyed content is what Pattern's comment defines, byte by byte:
// the base XOR one byte of the segment's key, for pieces of any offset and
// length, across segment boundaries.
func TestFillIsItsDefinition(t *testing.T) {
	p := New(11)
	id := p.ID("def")
	want := func(o int64) byte {
		key := mix(id ^ (uint64(o)/segment+1)*0x9e3779b97f4a7c15)
		return p.base[o%segment] ^ byte(key>>(8*(o%8)))
	}
	r := rand.New(rand.NewPCG(2, 2))
	for trial := 0; trial < 200; trial++ {
		off := r.Int64N(4 * segment)
		buf := make([]byte, r.IntN(3*segment))
		p.Fill(buf, id, off)
		for i, b := range buf {
			if w := want(off + int64(i)); b != w {
				t.Fatalf("offset %d (piece at %d, %d bytes): %#x, want %#x", off+int64(i), off, len(buf), b, w)
			}
		}
	}
}

func TestCheckFindsTheFlippedByte(t *testing.T) {
	p := New(42)
	id := p.ID("some/key")
	whole := make([]byte, 3*chunk+123)
	p.Fill(whole, id, 0)
	if p.Check(whole, id, 0) != -1 {
		t.Fatal("check fails on what fill wrote")
	}
	for _, i := range []int{0, 15, 16, 4095, 4096, 5000, len(whole) - 1} {
		c := bytes.Clone(whole)
		c[i] ^= 1
		if got := p.Check(c, id, 0); got != i {
			t.Errorf("flip at %d: check = %d", i, got)
		}
	}
	if p.Check(whole[100:], id, 100) != -1 {
		t.Error("check at an offset fails")
	}
	if p.Check(whole, p.ID("other"), 0) == -1 {
		t.Error("two objects have the same content")
	}
	if p.Check(whole, New(43).ID("some/key"), 0) == -1 {
		t.Error("two runs have the same content")
	}
}

func TestReader(t *testing.T) {
	p := New(3)
	id := p.ID("r")
	r := p.Reader(id, 100_000)
	got, err := io.ReadAll(r)
	if err != nil || len(got) != 100_000 {
		t.Fatalf("ReadAll = %d bytes, %v", len(got), err)
	}
	if p.Check(got, id, 0) != -1 {
		t.Fatal("reader content differs from fill")
	}
	if n, err := r.Seek(0, io.SeekEnd); err != nil || n != 100_000 {
		t.Fatalf("Seek end = %d, %v", n, err)
	}
	if _, err := r.Seek(50_000, io.SeekStart); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(r)
	if !bytes.Equal(rest, got[50_000:]) {
		t.Fatal("read after seek differs")
	}
	if _, err := r.Seek(-1, io.SeekStart); err == nil {
		t.Error("seek before the start accepted")
	}
}

func BenchmarkFill1MiB(b *testing.B) {
	p := New(1)
	buf := make([]byte, 1<<20)
	b.SetBytes(1 << 20)
	for i := 0; b.Loop(); i++ {
		p.Fill(buf, 99, int64(i)<<20)
	}
}

// BenchmarkFill4KiB fills small objects, one call each: what a put of 4
// KiB objects costs in data.
func BenchmarkFill4KiB(b *testing.B) {
	p := New(1)
	buf := make([]byte, 4<<10)
	b.SetBytes(4 << 10)
	for i := uint64(0); b.Loop(); i++ {
		p.Fill(buf, i, 0)
	}
}

// BenchmarkFillUnaligned1MiB fills a buffer that is not 8-byte aligned
// against the offset (once a slow path of Fill; now the same speed).
func BenchmarkFillUnaligned1MiB(b *testing.B) {
	p := New(1)
	buf := make([]byte, 1<<20+1)[1:]
	b.SetBytes(1 << 20)
	for i := 0; b.Loop(); i++ {
		p.Fill(buf, 99, int64(i)<<20)
	}
}

func BenchmarkCheck4MiB(b *testing.B) {
	p := New(1)
	buf := make([]byte, 4<<20)
	p.Fill(buf, 7, 0)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if p.Check(buf, 7, 0) != -1 {
			b.Fatal("mismatch")
		}
	}
}
