package pattern

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// runData is 4 MiB written as bench writes it: the first half one big file
// (a stream, as bench's 1 GiB file) in 128 KiB blocks, the second half 512
// small files of 4 KiB each, every file named as bench names it and so
// seeded by its name.
func runData(p *Pattern) []byte {
	const half, block, small = 2 << 20, 128 << 10, 4 << 10
	data := make([]byte, 0, 2*half)
	buf := make([]byte, block)
	id := Sized(p.ID("big.0"), 1<<30)
	for off := int64(0); off < half; off += block {
		p.Fill(buf, id, off)
		data = append(data, buf...)
	}
	for i := range half / small {
		p.Fill(buf[:small], p.ID("small/"+strconv.Itoa(i)), 0)
		data = append(data, buf[:small]...)
	}
	return data
}

func zstdSize(t *testing.T, data []byte) int {
	t.Helper()
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBestCompression), zstd.WithWindowSize(8<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Close()
	return len(enc.EncodeAll(data, nil))
}

func lz4Size(t *testing.T, data []byte) int {
	t.Helper()
	var out bytes.Buffer
	w := lz4.NewWriter(&out)
	if err := w.Apply(lz4.CompressionLevelOption(lz4.Level9), lz4.BlockSizeOption(lz4.Block4Mb)); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Len()
}

// TestRunDataIncompressibleAndUnique: zstd at its best level with a window
// over the whole run, and LZ4 at its high-compression level, save under 1%
// of a run's data, and no 4 KiB block of it repeats.
func TestRunDataIncompressibleAndUnique(t *testing.T) {
	data := runData(New(11))
	for _, c := range []struct {
		name string
		size func(*testing.T, []byte) int
	}{{"zstd", zstdSize}, {"lz4", lz4Size}} {
		n := c.size(t, data)
		saved := 1 - float64(n)/float64(len(data))
		t.Logf("%s: %d bytes to %d (%.3f%% saved)", c.name, len(data), n, 100*saved)
		if saved >= 0.01 {
			t.Errorf("%s saves %.2f%% of 4 MiB of run data (%d bytes to %d)", c.name, 100*saved, len(data), n)
		}
	}
	seen := make(map[[chunk]byte]int, len(data)/chunk)
	for off := 0; off < len(data); off += chunk {
		k := [chunk]byte(data[off : off+chunk])
		if first, ok := seen[k]; ok {
			t.Fatalf("the 4 KiB block at %d repeats the one at %d", off, first)
		}
		seen[k] = off
	}
}

// TestCompressorsSeeRepeats shows the check above can fail: data made of
// one repeated 4 KiB block (within LZ4's 64 KiB window) is compressed away
// by both libraries.
func TestCompressorsSeeRepeats(t *testing.T) {
	p := New(11)
	blk := make([]byte, chunk)
	p.Fill(blk, 1, 0)
	data := bytes.Repeat(blk, 1024)
	if n := zstdSize(t, data); n > len(data)/10 {
		t.Errorf("zstd kept %d of %d bytes of repeated data", n, len(data))
	}
	if n := lz4Size(t, data); n > len(data)/10 {
		t.Errorf("lz4 kept %d of %d bytes of repeated data", n, len(data))
	}
}

// BenchmarkFillGiB is the generator's cost per GiB written, in 1 MiB
// blocks as bench's default block size: ms/GiB (one op is one GiB) is the
// CPU time one thread spends making a GiB of unique data.
func BenchmarkFillGiB(b *testing.B) {
	p := New(1)
	buf := make([]byte, 1<<20)
	b.SetBytes(1 << 30)
	for i := 0; b.Loop(); i++ {
		for blk := range int64(1024) {
			p.Fill(buf, uint64(i), blk<<20)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/GiB")
}

// TestStreamStretchIncompressible: 4 MiB of one big file, taken where it
// crosses the end of the stream base, does not compress either: zstd and
// LZ4 save under 1% and no 4 KiB block repeats in it.
func TestStreamStretchIncompressible(t *testing.T) {
	p := New(17)
	id := Sized(p.ID("big.3"), 1<<30)
	off := int64(streamBase - streamStart(id) - 1<<20) // 1 MiB before the base wraps
	data := make([]byte, 4<<20)
	p.Fill(data, id, off)
	for _, c := range []struct {
		name string
		size func(*testing.T, []byte) int
	}{{"zstd", zstdSize}, {"lz4", lz4Size}} {
		if n := c.size(t, data); 1-float64(n)/float64(len(data)) >= 0.01 {
			t.Errorf("%s compresses 4 MiB of a big file to %d bytes", c.name, n)
		}
	}
}
