package objbench

import (
	"bytes"
	"io"
	"testing"
)

func TestSourceFillAndCheck(t *testing.T) {
	s := newSource(42)
	id := s.id("some/key")
	whole := make([]byte, 3*chunkSize+123)
	s.fill(whole, id, 0)
	if s.check(whole, id, 0) != -1 {
		t.Fatal("check fails on what fill wrote")
	}
	// Any sub-range is the same bytes as the whole.
	for _, r := range [][2]int{{0, 1}, {5, 20}, {4090, 4200}, {4096, 4112}, {8000, len(whole)}} {
		part := make([]byte, r[1]-r[0])
		s.fill(part, id, int64(r[0]))
		if !bytes.Equal(part, whole[r[0]:r[1]]) {
			t.Errorf("fill of [%d,%d) differs from the whole object", r[0], r[1])
		}
	}
	// A flipped byte is found where it is, in a stamp or in seed bytes.
	for _, i := range []int{0, 15, 16, 4095, 4096, 5000, len(whole) - 1} {
		c := bytes.Clone(whole)
		c[i] ^= 1
		if got := s.check(c, id, 0); got != i {
			t.Errorf("flip at %d: check = %d", i, got)
		}
	}
	// Another object, or another run, differs.
	other := make([]byte, len(whole))
	s.fill(other, s.id("other"), 0)
	if s.check(other, id, 0) == -1 {
		t.Error("two objects have the same content")
	}
	if s.check(whole, newSource(43).id("some/key"), 0) == -1 {
		t.Error("two runs have the same content")
	}
}

func TestSourceNoRepeatedChunks(t *testing.T) {
	s := newSource(1)
	buf := make([]byte, 64*chunkSize)
	s.fill(buf, s.id("k"), 0)
	seen := map[string]bool{}
	for c := 0; c < len(buf); c += chunkSize {
		k := string(buf[c : c+chunkSize])
		if seen[k] {
			t.Fatalf("chunk at %d repeats", c)
		}
		seen[k] = true
	}
}

func TestSourceWrapsAroundSeed(t *testing.T) {
	s := newSource(7)
	n := seedSize + 3*chunkSize
	buf := make([]byte, n)
	id := s.id("big")
	s.fill(buf, id, 0)
	if s.check(buf, id, 0) != -1 {
		t.Fatal("check fails past the seed's end")
	}
}

func TestReader(t *testing.T) {
	s := newSource(3)
	id := s.id("r")
	r := s.reader(id, 100_000)
	got, err := io.ReadAll(r)
	if err != nil || len(got) != 100_000 {
		t.Fatalf("ReadAll = %d bytes, %v", len(got), err)
	}
	if s.check(got, id, 0) != -1 {
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
}

func BenchmarkFill(b *testing.B) {
	s := newSource(1)
	buf := make([]byte, 4<<20)
	id := s.id("k")
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		s.fill(buf, id, 0)
	}
}

func BenchmarkCheck(b *testing.B) {
	s := newSource(1)
	buf := make([]byte, 4<<20)
	id := s.id("k")
	s.fill(buf, id, 0)
	b.SetBytes(int64(len(buf)))
	for b.Loop() {
		if s.check(buf, id, 0) != -1 {
			b.Fatal("mismatch")
		}
	}
}
