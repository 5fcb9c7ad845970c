package pattern

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbench/fsbench/internal/sysio"
)

// BenchmarkWriteSource is the cost of where a buffered write's data comes
// from: 1 MiB writes into new files under $TMPDIR, either from one 1 MiB
// buffer with a few bytes changed every 4 KiB (as fio's default changes a
// few bytes of its one buffer; the buffer stays in the core's cache) or
// from a writer's Stream (the four 1 MiB windows of 4 MiB, which the
// kernel reads from a further cache).
// Figures swing from run to run, so alternate the two, one per process:
//
//	go test -c -o pattern.test ./internal/pattern/
//	for i in 1 2 3 4 5 6 7 8; do for s in one-buffer stream; do
//		./pattern.test -test.run '^$' -test.bench "WriteSource/$s\$" -test.benchtime 1024x
//	done; done
func BenchmarkWriteSource(b *testing.B) {
	const blk = 1 << 20
	p := New(1)
	one := sysio.HugeBuffer(blk)
	p.Fill(one, 1, 0)
	s := p.NewStream(sysio.HugeBuffer(StreamLen(blk)), blk)
	sources := []struct {
		name  string
		block func(id uint64, off int64) []byte
	}{
		{"one-buffer", func(_ uint64, off int64) []byte {
			for j := 0; j < blk; j += block {
				binary.LittleEndian.PutUint64(one[j:], uint64(off)+uint64(j))
			}
			return one
		}},
		{"stream", func(id uint64, off int64) []byte {
			data, _ := s.Block(id, off, blk)
			return data
		}},
	}
	for _, src := range sources {
		b.Run(src.name, func(b *testing.B) {
			b.SetBytes(blk)
			writeFiles(b, src.block, blk)
		})
	}
}

// writeFiles writes b.N blocks of size blk from block, into new files of
// at most 1 GiB (made and removed outside the timer).
func writeFiles(b *testing.B, block func(id uint64, off int64) []byte, blk int64) {
	const fileSize = 1 << 30
	dir := b.TempDir()
	var f *os.File
	var id uint64
	off := int64(fileSize)
	for i := 0; b.Loop(); i++ {
		if off == fileSize {
			b.StopTimer()
			if f != nil {
				f.Close()
				os.Remove(f.Name())
			}
			var err error
			if f, err = os.Create(filepath.Join(dir, "f")); err != nil {
				b.Fatal(err)
			}
			id, off = Sized(uint64(i), fileSize), 0
			b.StartTimer()
		}
		if _, err := f.WriteAt(block(id, off), off); err != nil {
			b.Fatal(err)
		}
		off += blk
	}
	f.Close()
}
