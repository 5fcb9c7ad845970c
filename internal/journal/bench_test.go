package journal

import (
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkTrace4K is the journal's cost per acknowledged 4 KiB write, on
// each worker (b.RunParallel): a record appended to the worker's buffer,
// with the sum of its one piece, and the buffer appended to the journal
// file when full; the writes follow each other, as a sequential writer's
// do (Next records), and reach it by TraceWrite, as a bench's do. The
// figures are in benchmarks/records/journal-cost.md.
func BenchmarkTrace4K(b *testing.B) {
	dir := b.TempDir()
	w, err := Create(filepath.Join(dir, "j"), dir, 64, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	data := make([]byte, 4096)
	var workers atomic.Int32
	b.SetBytes(4096)
	b.RunParallel(func(pb *testing.PB) {
		id := int(workers.Add(1) - 1)
		path, off, at := dir+"/fsbench-run/big-file-"+strconv.Itoa(id), int64(0), time.Now()
		for pb.Next() {
			off += 4096
			w.TraceWrite(id, path, off, data, at)
		}
	})
}

// BenchmarkPwrite4K is what the journal's cost compares with: a 4 KiB
// pwrite to a file in the test's temporary directory.
func BenchmarkPwrite4K(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "f"))
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	data := make([]byte, 4096)
	b.SetBytes(4096)
	for i := 0; b.Loop(); i++ {
		if _, err := f.WriteAt(data, int64(i%4096)*4096); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPut is the journal's cost per acknowledged put of an object,
// on one worker: its content written again 4 KiB at a time (here a copy;
// objbench generates it) and fingerprinted, and three records appended.
func BenchmarkPut(b *testing.B) {
	for _, size := range []int{4 << 10, 1 << 20} {
		b.Run(strconv.Itoa(size>>10)+"KiB", func(b *testing.B) {
			dir := b.TempDir()
			w, err := CreateObjects(filepath.Join(dir, "j"), "minio", "http://127.0.0.1:9000/b", 1, 1)
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			data := make([]byte, size)
			fill := func(p []byte, off int64) { copy(p, data[off:]) }
			b.SetBytes(int64(size))
			for i := 0; b.Loop(); i++ {
				w.Put(0, "fsbench-objbench-x/obj/0-"+strconv.Itoa(i), int64(size), fill, time.Now())
			}
		})
	}
}
