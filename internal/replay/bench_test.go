package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
)

// The generated logs hold one workload in each format: threads that each
// create a file, write it in 8 writes of genIO bytes, close it, open it
// again, read it back in 8 reads, close it, stat it and remove it: 23
// lines a file in JuiceFS's log (flush and release for a close), 22 in
// the others.
const (
	genThreads = 16
	genIO      = 16 << 10
)

// genFile is the lines of one file of one thread, in a format.
type genFile func(b *bytes.Buffer, at func() string, pid, file int)

// genLog makes a log of about n lines in the given format.
func genLog(format string, n int) []byte {
	var b bytes.Buffer
	t0 := time.Date(2026, 11, 21, 21, 0, 0, 0, time.UTC)
	line := 0
	at := func() string {
		line++
		return t0.Add(time.Duration(line) * time.Microsecond).Format("2006.01.02 15:04:05.000000")
	}
	gen := map[string]genFile{FormatJuiceFS: genJuiceFS, FormatFSBench: genFSBench, FormatStrace: genStrace}[format]
	if format == FormatStrace {
		at = func() string {
			line++
			return fmt.Sprintf("%d.%06d", t0.Unix()+int64(line/1e6), line%1e6)
		}
	}
	for file := 100; line < n; file++ {
		gen(&b, at, 1000+file%genThreads, file)
	}
	return b.Bytes()
}

// genJuiceFS writes JuiceFS's lines: inodes and handles, the release from
// the kernel (pid 0), as JuiceFS logs it.
func genJuiceFS(b *bytes.Buffer, at func() string, pid, ino int) {
	emit := func(pid int, f string, a ...any) {
		fmt.Fprintf(b, "%s [uid:0,gid:0,pid:%d] %s <0.000010>\n", at(), pid, fmt.Sprintf(f, a...))
	}
	fh, rfh := ino, ino+1_000_000_000
	emit(pid, "create (1,f%d,-rw-r--r--:0100644): (%d,[-rw-r--r--:0100644,1,0,0,1,1,1,0]) [fh:%d] - OK", ino, ino, fh)
	for k := 0; k < 8; k++ {
		emit(pid, "write (%d,%d,%d,%d) - OK", ino, genIO, k*genIO, fh)
	}
	emit(pid, "flush (%d,%d,DF31CB1FB569916B) - OK", ino, fh)
	emit(0, "release (%d,%d) - OK", ino, fh)
	emit(pid, "open (%d,0x8000) [fh:%d] - OK", ino, rfh)
	for k := 0; k < 8; k++ {
		emit(pid, "read (%d,%d,%d,%d): %d - OK", ino, genIO, k*genIO, rfh, genIO)
	}
	emit(0, "release (%d,%d) - OK", ino, rfh)
	emit(pid, "getattr (%d,%d): (%d,[-rw-r--r--:0100644,1,0,0,1,1,%d,0]) - OK", ino, pid, ino, 8*genIO)
	emit(pid, "unlink (1,f%d) - OK", ino)
}

// genFSBench writes the lines of fsbench's --access-log: paths, and the
// process's id on every line.
func genFSBench(b *bytes.Buffer, at func() string, _, file int) {
	p := fmt.Sprintf("/w/f%d", file)
	emit := func(f string, a ...any) {
		fmt.Fprintf(b, "%s [uid:0,gid:0,pid:4242] %s <0.000010>\n", at(), fmt.Sprintf(f, a...))
	}
	emit("create (%s) - OK", p)
	for k := 0; k < 8; k++ {
		emit("write (%s,%d,%d): %d - OK", p, genIO, k*genIO, genIO)
	}
	emit("close (%s) - OK", p)
	emit("open (%s) - OK", p)
	for k := 0; k < 8; k++ {
		emit("read (%s,%d,%d): %d - OK", p, genIO, k*genIO, genIO)
	}
	emit("close (%s) - OK", p)
	emit("stat (%s) - OK", p)
	emit("unlink (%s) - OK", p)
}

// genStrace writes `strace -f -ttt -T -y` lines.
func genStrace(b *bytes.Buffer, at func() string, pid, file int) {
	p := fmt.Sprintf("/w/f%d", file)
	emit := func(f string, a ...any) {
		fmt.Fprintf(b, "%d %s %s <0.000010>\n", pid, at(), fmt.Sprintf(f, a...))
	}
	emit(`openat(AT_FDCWD</w>, "%s", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 3<%s>`, p, p)
	for k := 0; k < 8; k++ {
		emit(`write(3<%s>, "\0\0\0\0"..., %d) = %d`, p, genIO, genIO)
	}
	emit(`close(3<%s>) = 0`, p)
	emit(`openat(AT_FDCWD</w>, "%s", O_RDONLY) = 3<%s>`, p, p)
	for k := 0; k < 8; k++ {
		emit(`read(3<%s>, "\0\0\0\0"..., %d) = %d`, p, genIO, genIO)
	}
	emit(`close(3<%s>) = 0`, p)
	emit(`newfstatat(AT_FDCWD</w>, "%s", {st_mode=S_IFREG|0644, st_size=%d, ...}, AT_SYMLINK_NOFOLLOW) = 0`, p, 8*genIO)
	emit(`unlinkat(AT_FDCWD</w>, "%s", 0) = 0`, p)
}

var genFormats = []string{FormatJuiceFS, FormatFSBench, FormatStrace}

// genFile1M writes a generated log of 1,000,000 lines in format to a file
// of the benchmark's.
func genFile1M(b *testing.B, format string) (path string, lines int) {
	data := genLog(format, 1_000_000)
	path = filepath.Join(b.TempDir(), format+".log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		b.Fatal(err)
	}
	return path, bytes.Count(data, []byte{'\n'})
}

// cpuTime is the process's user and system time so far.
func cpuTime() time.Duration {
	user, sys := cpuTimes()
	return user + sys
}

// cpuTimes is the process's user time and system time so far.
func cpuTimes() (user, sys time.Duration) {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano())
}

// faults is the process's page faults so far that needed no I/O: its
// first touches of memory.
func faults() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Minflt
}

// BenchmarkLoad reads a 1,000,000-line log of each format into streams:
// the file read, the parser, and the builder of the namespace and of the
// dependencies between streams. ns/line is the time per line, cpu-ns/line
// the processor time per line (on a busy machine the time also counts the
// waits for a processor); sys-ns/line is the system time of it (the read
// of the file, the page faults of the first touch of memory), and
// faults/kline the page faults a thousand lines.
func BenchmarkLoad(b *testing.B) {
	for _, format := range genFormats {
		b.Run(format, func(b *testing.B) {
			path, lines := genFile1M(b, format)
			// The memory the log was generated in goes back to the
			// system, so that a load (the first of a run) touches new
			// memory, as a fresh fsbench does.
			debug.FreeOSMemory()
			b.ResetTimer()
			user0, sys0 := cpuTimes()
			faults0 := faults()
			for b.Loop() {
				t, err := ReadLog(path)
				if err != nil || t.Format != format || len(t.Skipped.Unsupported) > 0 || t.Skipped.Malformed > 0 {
					b.Fatalf("%v: format %s, skipped %+v", err, t.Format, t.Skipped)
				}
			}
			n := float64(b.N) * float64(lines)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/n, "ns/line")
			user, sys := cpuTimes()
			b.ReportMetric(float64(user-user0+sys-sys0)/n, "cpu-ns/line")
			b.ReportMetric(float64(sys-sys0)/n, "sys-ns/line")
			b.ReportMetric(float64(faults()-faults0)/n*1000, "faults/kline")
		})
	}
}

// BenchmarkDispatch runs the streams of a 1,000,000-line log of each
// format with every operation done as nothing: what the replay itself
// costs per operation (waiting for the operations of other streams it
// depends on, timing and counting it), without the file system.
func BenchmarkDispatch(b *testing.B) {
	for _, format := range genFormats {
		b.Run(format, func(b *testing.B) {
			path, _ := genFile1M(b, format)
			t, err := ReadLog(path)
			if err != nil {
				b.Fatal(err)
			}
			for i := range t.Streams {
				for k := range t.Streams[i].Ops {
					op := &t.Streams[i].Ops[k]
					op.act, op.clear = actNone, false
				}
			}
			for i := range t.more {
				x := &t.more[i]
				x.prepN, x.closeHi = 0, x.closeLo
			}
			benchPlay(b, t, b.TempDir(), false)
		})
	}
}

// BenchmarkTmpfs replays a 1,000,000-line log of each format on a tmpfs:
// the operations the parser and the dispatcher drive. lat-ns/op is their
// mean latency.
func BenchmarkTmpfs(b *testing.B) {
	for _, format := range genFormats {
		b.Run(format, func(b *testing.B) {
			path, _ := genFile1M(b, format)
			t, err := ReadLog(path)
			if err != nil {
				b.Fatal(err)
			}
			benchPlay(b, t, testenv.Tmpfs(b, "1g"), true)
		})
	}
}

// benchPlay replays t in dir b.N times, reporting the time and the
// processor time per operation, and, with lat, the operations' mean
// latency.
func benchPlay(b *testing.B, t *Trace, dir string, lat bool) {
	ops := float64(t.Ops())
	var latency float64
	var elapsed time.Duration
	cpu := time.Duration(0)
	for i := 0; b.Loop(); i++ {
		run := filepath.Join(dir, fmt.Sprint("run", i))
		if err := os.MkdirAll(run, 0o755); err != nil {
			b.Fatal(err)
		}
		root, err := sysio.OpenRoot(run)
		if err != nil {
			b.Fatal(err)
		}
		p := newPlayer(t, root, 0, pattern.New(1))
		if err := p.makeInitial(context.Background()); err != nil {
			b.Fatal(err)
		}
		cpu0 := cpuTime()
		r, err := engine.New(len(t.Streams)).Run(context.Background(), p.phase())
		cpu += cpuTime() - cpu0
		p.closeAll()
		if err != nil || r.Errors != 0 || float64(r.Ops) != ops {
			b.Fatalf("%d ops of %v, %d errors %v: %v", r.Ops, ops, r.Errors, r.Samples, err)
		}
		latency += r.Hist.Summary().Mean * 1e3
		elapsed += r.Elapsed
		root.Close()
		_ = os.RemoveAll(run)
	}
	b.ReportMetric(float64(elapsed.Nanoseconds())/float64(b.N)/ops, "ns/op")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/ops, "cpu-ns/op")
	if lat {
		b.ReportMetric(latency/float64(b.N), "lat-ns/op")
	}
}
