package pattern

import (
	"bytes"
	"crypto/sha256"
	"math"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

func TestParseRatio(t *testing.T) {
	good := map[string]float64{"1": 1, "2": 2, "2.5": 2.5, "3:1": 3, "50%": 2, "0%": 1, "75%": 4, "256": 256, " 4 ": 4}
	for in, want := range good {
		if got, err := ParseRatio(in); err != nil || got != want {
			t.Errorf("ParseRatio(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "0.5", "257", "x", "100%", "-5%", "NaN", "Inf", "2:2"} {
		if _, err := ParseRatio(in); err == nil {
			t.Errorf("ParseRatio(%q) accepted", in)
		}
	}
	if RatioOfPercent(99.99) != MaxRatio {
		t.Errorf("99.99%%: %v", RatioOfPercent(99.99))
	}
	if (Data{Compress: 0.5}).Check() == nil || (Data{Dedupe: 300}).Check() == nil || (Data{Compress: 2, Dedupe: 3}).Check() != nil {
		t.Error("Data.Check")
	}
}

// shapedData is what a run with d writes: size bytes of one big file
// through a writer's Stream in 1 MiB blocks, then as many bytes of 4 KiB
// files, each named as bench names its small files.
func shapedData(d Data, size int) (big, small []byte) {
	p := NewData(5, d)
	s := p.NewStream(make([]byte, StreamLen(1<<20)), 1<<20)
	id := Sized(p.ID("big.0"), 1<<30)
	for off := int64(0); off < int64(size); off += 1 << 20 {
		b, _ := s.Block(id, off, 1<<20)
		big = append(big, b...)
	}
	buf := make([]byte, chunk)
	for i := range size / chunk {
		p.Fill(buf, p.ID("small/"+strconv.Itoa(i)), 0)
		small = append(small, buf...)
	}
	return big, small
}

func zstd3(t *testing.T, data []byte) int {
	t.Helper()
	// Level 3 with the zstd command's window for it (2 MiB, windowLog 21).
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.EncoderLevelFromZstd(3)), zstd.WithWindowSize(2<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return len(enc.EncodeAll(data, nil))
}

func lz4Default(t *testing.T, data []byte) int {
	t.Helper()
	var out bytes.Buffer
	w := lz4.NewWriter(&out)
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Len()
}

// uniqueRatio is the count of 4 KiB chunks of data over the count of
// distinct ones, by their SHA-256.
func uniqueRatio(data []byte) float64 {
	seen := map[[32]byte]bool{}
	for off := 0; off+chunk <= len(data); off += chunk {
		seen[sha256.Sum256(data[off:off+chunk])] = true
	}
	return float64(len(data)/chunk) / float64(len(seen))
}

// TestCompressRatio: data written at a compress ratio of 2 (and 4)
// compresses 1.9-2.1x (3.8-4.2x) with zstd at level 3 and LZ4 at its
// default, big files and small ones; its 4 KiB blocks stay unique.
func TestCompressRatio(t *testing.T) {
	for _, r := range []float64{2, 4} {
		big, small := shapedData(Data{Compress: r}, 4<<20)
		for _, part := range []struct {
			name string
			data []byte
		}{{"big file", big}, {"small files", small}} {
			for _, c := range []struct {
				name string
				size func(*testing.T, []byte) int
			}{{"zstd-3", zstd3}, {"lz4", lz4Default}} {
				got := float64(len(part.data)) / float64(c.size(t, part.data))
				t.Logf("ratio %g, %s, %s: %.3fx", r, part.name, c.name, got)
				if math.Abs(got-r) > 0.05*r {
					t.Errorf("ratio %g, %s: %s compresses %.3fx", r, part.name, c.name, got)
				}
			}
			if u := uniqueRatio(part.data); u != 1 {
				t.Errorf("ratio %g, %s: blocks repeat (%.3fx)", r, part.name, u)
			}
		}
	}
	// The usual content does not compress: the check above fails on it.
	big, _ := shapedData(Data{}, 4<<20)
	if got := float64(len(big)) / float64(zstd3(t, big)); got > 1.01 {
		t.Errorf("plain content compresses %.3fx", got)
	}
}

// TestDedupeRatio: at a dedupe ratio of 3, the count of 4 KiB chunks over
// the count of distinct ones is 2.9-3.1, for a big file (16 MiB, four
// passes of the stream base) and for 16,384 small files; with a compress
// ratio too, both hold.
func TestDedupeRatio(t *testing.T) {
	for _, d := range []Data{{Dedupe: 3}, {Dedupe: 3, Compress: 2}, {Dedupe: 1.5}} {
		big, small := shapedData(d, 16<<20)
		for name, data := range map[string][]byte{"big file": big, "small files": small} {
			got := uniqueRatio(data)
			t.Logf("%+v, %s: %.3fx", d, name, got)
			if math.Abs(got-d.Dedupe) > 0.1 {
				t.Errorf("%+v, %s: %.3fx unique chunks", d, name, got)
			}
		}
		if d.Compress > 1 {
			if got := float64(len(big)) / float64(zstd3(t, big)); got < 1.9 {
				t.Errorf("%+v: zstd %.3fx", d, got)
			}
		}
	}
	if got := uniqueRatio(bytes.Repeat([]byte{1}, 1<<20)); got != 256 {
		t.Errorf("uniqueRatio of one repeated chunk: %v", got)
	}
}

// TestShapedContentVerifies: content with ratios is a pure function of
// the seed, the file and the offset, as the usual one: a writer's Stream
// and Fill agree, another Pattern of the seed makes the same bytes, Check
// passes it at any offset and finds a changed byte.
func TestShapedContentVerifies(t *testing.T) {
	d := Data{Compress: 2.5, Dedupe: 3}
	p, q := NewData(9, d), NewData(9, d)
	s := p.NewStream(make([]byte, StreamLen(1<<20)), 1<<20)
	for _, id := range []uint64{Sized(p.ID("big"), 1<<30), p.ID("small")} {
		for _, off := range []int64{0, 4096, 12345, streamBase - 100} {
			want := make([]byte, 300_000)
			p.Fill(want, id, off)
			if b, ok := s.Block(id, off, len(want)); ok && !bytes.Equal(b, want) {
				t.Errorf("id %x at %d: Stream and Fill differ", id, off)
			}
			got := make([]byte, len(want))
			q.Fill(got, id, off)
			if !bytes.Equal(got, want) {
				t.Errorf("id %x at %d: two Patterns of one seed differ", id, off)
			}
			if bad := q.Check(want[1000:], id, off+1000); bad != -1 {
				t.Errorf("id %x at %d: Check fails at %d", id, off, bad)
			}
			want[77_777] ^= 1
			if bad := q.Check(want, id, off); bad != 77_777 {
				t.Errorf("id %x at %d: a changed byte found at %d", id, off, bad)
			}
		}
	}
	if plain := New(9); bytes.Equal(fill(plain, 1), fill(p, 1)) {
		t.Error("ratios change nothing")
	}
}

func fill(p *Pattern, id uint64) []byte {
	b := make([]byte, 8192)
	p.Fill(b, id, 0)
	return b
}

// BenchmarkShaped is BenchmarkStreamGiB and BenchmarkFill4KiB with ratios:
// what making compressible and duplicate content costs a writer.
func BenchmarkShaped(b *testing.B) {
	for _, c := range []struct {
		name string
		d    Data
	}{{"plain", Data{}}, {"compress2", Data{Compress: 2}}, {"dedupe3", Data{Dedupe: 3}}, {"both", Data{Compress: 2, Dedupe: 3}}} {
		p := NewData(1, c.d)
		b.Run("StreamGiB/"+c.name, func(b *testing.B) {
			s := p.NewStream(make([]byte, StreamLen(1<<20)), 1<<20)
			b.SetBytes(1 << 30)
			for i := 0; b.Loop(); i++ {
				id := Sized(uint64(i), 1<<30)
				for blk := range int64(1024) {
					s.Block(id, blk<<20, 1<<20)
				}
			}
		})
		b.Run("Fill1MiB/"+c.name, func(b *testing.B) {
			buf := make([]byte, 1<<20)
			b.SetBytes(1 << 20)
			for i := 0; b.Loop(); i++ {
				p.Fill(buf, 99, int64(i)<<20)
			}
		})
		b.Run("Fill4KiB/"+c.name, func(b *testing.B) {
			buf := make([]byte, 4<<10)
			b.SetBytes(4 << 10)
			for i := uint64(0); b.Loop(); i++ {
				p.Fill(buf, i, 0)
			}
		})
	}
}
