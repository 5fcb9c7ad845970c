package profile

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"io"
	"os"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/accesslog"
)

var bigLog = flag.String("biglog", "", "write a 1-million-line access log built from the sample to this file (for measuring the binary)")

// writeBigLog writes n lines: the sample over and over, each pass shifted
// by the sample's span so that time keeps moving forward.
func writeBigLog(w io.Writer, sample []byte, n int) error {
	lines := bytes.Split(bytes.TrimSuffix(sample, []byte("\n")), []byte("\n"))
	first, err := time.ParseInLocation(accesslog.TimeLayout, string(lines[0][:26]), time.Local)
	if err != nil {
		return err
	}
	last, err := time.ParseInLocation(accesslog.TimeLayout, string(lines[len(lines)-1][:26]), time.Local)
	if err != nil {
		return err
	}
	span := last.Sub(first) + time.Second
	bw := bufio.NewWriterSize(w, 1<<20)
	var stamp []byte
	for pass := 0; n > 0; pass++ {
		shift := time.Duration(pass) * span
		for _, l := range lines {
			if n == 0 {
				break
			}
			t, err := time.ParseInLocation(accesslog.TimeLayout, string(l[:26]), time.Local)
			if err != nil {
				return err
			}
			stamp = t.Add(shift).AppendFormat(stamp[:0], accesslog.TimeLayout)
			bw.Write(stamp)
			bw.Write(l[26:])
			bw.WriteByte('\n')
			n--
		}
	}
	return bw.Flush()
}

// TestWriteBigLog writes the file the replay speed is measured on:
//
//	go test ./internal/profile -run TestWriteBigLog -biglog /tmp/big.log
//	/usr/bin/time -v fsbench profile /tmp/big.log --interval 0
func TestWriteBigLog(t *testing.T) {
	if *bigLog == "" {
		t.Skip("no -biglog file asked for")
	}
	f, err := os.Create(*bigLog)
	if err != nil {
		t.Fatal(err)
	}
	if err := writeBigLog(f, readSample(t), 1_000_000); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestBigLogCounts(t *testing.T) {
	var buf bytes.Buffer
	if err := writeBigLog(&buf, readSample(t), 2000); err != nil {
		t.Fatal(err)
	}
	ws := windows(t, runOut(t, buf.Bytes(), Options{JSON: true, Location: time.Local}))
	if ws[0].Entries != 2000 || ws[0].Skipped.Total() != 0 {
		t.Errorf("window = %+v", ws[0])
	}
}

// benchLog is a 200,000-line log built from the sample, in memory.
func benchLog(b *testing.B) []byte {
	b.Helper()
	var buf bytes.Buffer
	if err := writeBigLog(&buf, readSample(b), 200_000); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

// BenchmarkSummary is `fsbench profile LOG --interval 0` without the file
// system: bytes per second over the whole log; lines per second are
// reported too.
func BenchmarkSummary(b *testing.B) { benchRun(b, Options{}) }

// BenchmarkReplay cuts the same log into 1-second windows, unpaced.
func BenchmarkReplay(b *testing.B) { benchRun(b, Options{Interval: time.Second}) }

// benchRun runs the profile of the benchmark log with o.
func benchRun(b *testing.B, o Options) {
	data := benchLog(b)
	lines := bytes.Count(data, []byte("\n"))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := Run(context.Background(), bytes.NewReader(data), io.Discard, o); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkAggregate is the per-line cost of parsing and counting.
func BenchmarkAggregate(b *testing.B) {
	data := readSample(b)
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	a := newAggregator(time.Local, Filter{})
	b.SetBytes(int64(len(data)) / int64(len(lines)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if e := a.parse(lines[i%len(lines)]); e != nil {
			a.add(e)
		}
	}
}
