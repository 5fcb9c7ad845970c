package replay

import (
	"bytes"
	"fmt"
	"testing"
	"time"
)

// genLog makes a JuiceFS access log of about n lines: 16 threads, each
// creating files, writing them in 128 KiB writes, flushing, releasing,
// reading them back and removing them.
func genLog(n int) []byte {
	var b bytes.Buffer
	t0 := time.Date(2026, 11, 21, 21, 0, 0, 0, time.UTC)
	line, ino, fh := 0, uint64(100), uint64(1)
	emit := func(pid int, s string) {
		ts := t0.Add(time.Duration(line) * time.Microsecond).Format("2006.01.02 15:04:05.000000")
		fmt.Fprintf(&b, "%s [uid:0,gid:0,pid:%d] %s <0.000010>\n", ts, pid, s)
		line++
	}
	for line < n {
		for pid := 1000; pid < 1016 && line < n; pid++ {
			ino++
			fh++
			emit(pid, fmt.Sprintf("create (1,f%d,-rw-r--r--:0100644): (%d,[-rw-r--r--:0100644,1,0,0,1,1,1,0]) [fh:%d] - OK", ino, ino, fh))
			for k := 0; k < 8; k++ {
				emit(pid, fmt.Sprintf("write (%d,131072,%d,%d) - OK", ino, k*131072, fh))
			}
			emit(pid, fmt.Sprintf("flush (%d,%d,DF31CB1FB569916B) - OK", ino, fh))
			emit(0, fmt.Sprintf("release (%d,%d) - OK", ino, fh))
			emit(pid, fmt.Sprintf("open (%d,0x8000) [fh:%d] - OK", ino, fh+1000000))
			for k := 0; k < 8; k++ {
				emit(pid, fmt.Sprintf("read (%d,131072,%d,%d): 131072 - OK", ino, k*131072, fh+1000000))
			}
			emit(0, fmt.Sprintf("release (%d,%d) - OK", ino, fh+1000000))
			emit(pid, fmt.Sprintf("unlink (1,f%d) - OK", ino))
		}
	}
	return b.Bytes()
}

// BenchmarkLoad reads a 1,000,000-line log into streams: the parser and
// the builder of the namespace and of the dependencies between streams,
// per line.
func BenchmarkLoad(b *testing.B) {
	data := genLog(1_000_000)
	lines := bytes.Count(data, []byte{'\n'})
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for b.Loop() {
		t, err := Load(bytes.NewReader(data))
		if err != nil || t.Ops() != int64(lines) {
			b.Fatalf("%d ops of %d lines: %v", t.Ops(), lines, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(lines), "ns/line")
}
