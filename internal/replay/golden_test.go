package replay

import (
	"bytes"
	"cmp"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite the golden dumps of parsed logs")

// goldenLogs are the logs whose parse is kept in testdata/golden: real
// logs of each format (JuiceFS's sample, fsbench's --access-log of a
// bench, strace of tar and a shell), generated ones, one of fsbench's
// out of order, and the seeds of FuzzLoad's odd lines.
func goldenLogs(t *testing.T) map[string][]byte {
	t.Helper()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	logs := map[string][]byte{
		"juicefs-sample": read(sampleLog),
		"fsbench-bench":  read(filepath.Join("testdata", "fsbench-bench.log")),
		"strace-tar":     read(filepath.Join("testdata", "strace-tar.log")),
		"juicefs-1.4.1":  read(liveLog),
	}
	for _, f := range genFormats {
		logs["gen-"+f] = genLog(f, 300)
	}
	// fsbench writes each worker's lines in batches: swap neighbours so
	// that the log is read sorted by time.
	lines := strings.Split(strings.TrimSuffix(string(genLog(FormatFSBench, 200)), "\n"), "\n")
	for i := 0; i+3 < len(lines); i += 7 {
		lines[i], lines[i+3] = lines[i+3], lines[i]
	}
	logs["gen-fsbench-unsorted"] = []byte(strings.Join(lines, "\n") + "\n")
	logs["odd-lines"] = []byte(strings.Join([]string{
		"2026.11.21 21:03:17.000001 [uid:0,gid:0,pid:7] rename (1,a,b,1,c,d,0) - OK <0.000100>",
		`2026.11.21 21:03:17.000002 [uid:0,gid:0,pid:7] read ("/c,d",4096,0): 4096 - OK <0.000100>`,
		"2026.11.21 21:03:17.000003 [uid:0,gid:0,pid:8] lookup (1,.stats): (9223372032828243970,[-r--r--r--:0100444,1,0,0,0,0,0,0]) - OK <0.000001>",
		"2026.11.21 21:03:17.000004 [uid:0,gid:0,pid:8] lookup (1,gone): - no such file or directory <0.000010>",
		"2026.11.21 21:03:17.000005 [uid:0,gid:0,pid:8] setxattr (1,a) - OK <0.000010>",
		"#", "", "not a line",
		"2026.11.21 21:03:17.000006 [uid:0,gid:0,pid:8] mkdir (1,d,drwxr-xr-x:0040755): (5,[drwxr-xr-x:0040755,2,0,0,1,1,1,4096]) - OK <0.000010>",
		"2026.11.21 21:03:17.000007 [uid:0,gid:0,pid:9] create (5,x,y,-rw-r--r--:0100644): (6,[-rw-r--r--:0100644,1,0,0,1,1,1,0]) [fh:3] - OK <0.000010>",
		"2026.11.21 21:03:17.000008 [uid:0,gid:0,pid:9] write (6,10,0,3) - OK <0.000010>",
		"2026.11.21 21:03:17.000009 [uid:0,gid:0,pid:8] rmdir (1,d) - OK <0.000010>",
		"2026.11.21 21:03:17.000010 [uid:0,gid:0,pid:8] open (7,0x8001) [fh:4] - OK <0.000010>",
		"2026.11.21 21:03:17.000011 [uid:0,gid:0,pid:8] fsync (7,1,4) - OK <0.000010>",
		"2026.11.21 21:03:17.000012 [uid:0,gid:0,pid:8] opendir (1) [fh:5] - OK <0.000010>",
		"2026.11.21 21:03:17.000013 [uid:0,gid:0,pid:8] readdir (1,4096) - OK <0.000010>",
		"2026.11.21 21:03:17.000014 [uid:0,gid:0,pid:8] releasedir (1) - OK <0.000010>",
		"2026.11.21 21:03:17.000015 [uid:0,gid:0,pid:8] getattr (12345): - Input/output error <0.000010>",
		"2026.11.21 21:03:17.000016 [uid:0,gid:0,pid:8] access (1,0x1) - OK <0.000010>",
		"2026.11.21 21:03:17.000017 [uid:0,gid:0,pid:8] statfs (1) - OK <0.000010>",
	}, "\n") + "\n")
	logs["odd-strace"] = []byte(`3760  1795570281.950820 openat(4</tmp/out>, "./a.txt", O_WRONLY|O_CREAT|O_EXCL, 0600) = 5</tmp/out/a.txt> <0.000059>
3760  1795570281.951174 write(5</tmp/out/a.txt>, "hello\n", 6) = 6 <0.000019>
3761  1795570281.951175 read(5</tmp/out/a.txt>,  <unfinished ...>
3760  1795570281.951176 unlinkat(4</tmp/out>, "x", AT_REMOVEDIR) = -1 ENOENT (No such file or directory) <0.000019>
3761  1795570281.951177 <... read resumed>"hello\n", 10) = 6 <0.000002>
3760  1795570281.951178 renameat2(AT_FDCWD</tmp>, "/tmp/out/a.txt", AT_FDCWD</tmp>, "b", 0) = 0 <0.000010>
3760  1795570281.951179 openat(AT_FDCWD</tmp>, "q\"uo\\te,d\x41", O_RDONLY|O_CLOEXEC) = 6</tmp/q"uo\te,dA> <0.000010>
3760  1795570281.951180 lseek(6</tmp/q"uo\te,dA>, 100, SEEK_SET) = 100 <0.000010>
3760  1795570281.951181 read(6</tmp/q"uo\te,dA>, ""..., 8) = 8 <0.000010>
3760  1795570281.951182 pwrite64(6</tmp/q"uo\te,dA>, "abc", 3, 7) = 3 <0.000010>
3760  1795570281.951183 stat("/tmp/../tmp/./b", {st_mode=S_IFREG|0644, st_size=6, ...}) = 0 <0.000010>
3760  1795570281.951184 openat(AT_FDCWD</tmp>, "/proc/self/status", O_RDONLY) = 7</proc/3760/status> <0.000010>
3760  1795570281.951185 mkdir("/tmp/newd", 0755) = -1 EEXIST (File exists) <0.000010>
3760  1795570281.951186 fsync(9</tmp/old>) = 0 <0.000010>
3760  1795570281.951187 creat("/tmp/c", 0644) = 10</tmp/c> <0.000010>
3760  1795570281.951188 getdents64(3</tmp>, 0x5555 /* 4 entries */, 32768) = 112 <0.000010>
3760  1795570281.951189 fstat(10</tmp/c>, {st_mode=S_IFREG|0644, st_size=0, ...}) = 0 <0.000010>
3760  1795570281.951190 close(10</tmp/c>) = 0 <0.000010>
3760  1795570281.951191 faccessat2(AT_FDCWD</tmp>, "c", W_OK, AT_EACCESS) = 0 <0.000010>
3760  1795570281.951192 rmdir("/tmp/newd") = 0 <0.000010>
3760  1795570281.951193 write(1<pipe:[123]>, "x", 1) = 1 <0.000010>
3760  1795570281.981341 +++ exited with 0 +++
3761  1795570281.981342 --- SIGCHLD {si_signo=SIGCHLD} ---
garbage 1.2 x
3762  1795570281.9813x3 read(3</a>, "", 1) = 0 <0.000010>
`)
	return logs
}

// TestLoadGolden: each log parses into the streams, namespace, handles,
// dependencies and counts kept in testdata/golden, whole and split across
// two hosts; `go test -run LoadGolden -update` rewrites them.
func TestLoadGolden(t *testing.T) {
	for name, data := range goldenLogs(t) {
		for _, part := range []struct{ part, parts int }{{0, 1}, {0, 2}, {1, 2}} {
			file := fmt.Sprintf("%s.%d-%d.txt", name, part.part, part.parts)
			t.Run(file, func(t *testing.T) {
				tr, err := loadPart(bytes.Clone(data), part.part, part.parts)
				got := dumpTrace(tr, err)
				path := filepath.Join("testdata", "golden", file)
				if *updateGolden {
					if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				want, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if got != string(want) {
					g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
					for i := 0; i < len(g) && i < len(w); i++ {
						if g[i] != w[i] {
							t.Fatalf("line %d differs:\n got %s\nwant %s", i+1, g[i], w[i])
						}
					}
					t.Fatalf("%d lines, want %d", len(g), len(w))
				}
			})
		}
	}
}

// dumpTrace writes everything a parse gives, in a stable order.
func dumpTrace(tr *Trace, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "err %v\n", err)
	if tr == nil {
		return b.String()
	}
	s := tr.Skipped
	fmt.Fprintf(&b, "format %s span %d handles %d cleared %d\n", tr.Format, tr.Span, tr.Handles, tr.Cleared)
	fmt.Fprintf(&b, "skipped lines %d blank %d malformed %d virtual %d elsewhere %d\n",
		s.Lines, s.Blank, s.Malformed, s.Virtual, s.Elsewhere)
	for _, n := range s.UnsupportedNames() {
		fmt.Fprintf(&b, "unsupported %s %d\n", n, s.Unsupported[n])
	}
	for _, c := range tr.Classes {
		h := c.Latency
		fmt.Fprintf(&b, "class %s ops %d bytes %d failed %d lat n %d p50 %v max %v\n",
			c.Name, c.Ops, c.Bytes, c.Failed, h.Count(), h.Quantile(0.5), h.Quantile(1))
	}
	for _, e := range tr.Initial {
		fmt.Fprintf(&b, "initial %+v\n", e)
	}
	for _, e := range tr.Implied {
		fmt.Fprintf(&b, "implied %+v\n", e)
	}
	for i, p := range tr.paths {
		fmt.Fprintf(&b, "path %d %q\n", i, p)
	}
	for _, st := range tr.Streams {
		fmt.Fprintf(&b, "stream %d ops %d: act class errno flags handle prep prepN signal clear path to size off start deps closes\n", st.ID, len(st.Ops))
		for _, op := range st.Ops {
			x := tr.extra(&op)
			// An operation's dependencies are a set, its lost handles
			// too: their order in the trace's arrays is not kept.
			deps := slices.Clone(tr.deps[op.depLo:op.depHi])
			slices.SortFunc(deps, func(a, b ref) int { return cmp.Or(cmp.Compare(a.stream, b.stream), cmp.Compare(a.pos, b.pos)) })
			closes := slices.Sorted(slices.Values(tr.closes[x.closeLo:x.closeHi]))
			prep := x.prep
			if x.prepN == 0 {
				prep = -1 // as the dumps have it: none
			}
			fmt.Fprintln(&b, op.act, op.class, op.errno, op.flags, op.handle, prep, x.prepN, op.signal, op.clear,
				op.path, x.to, op.Size, op.Off, op.Start, deps, closes)
		}
	}
	return b.String()
}

// TestReadLinesInPieces: a log read in pieces at once gives the lines the
// one piece gives, whatever the pieces and whether the log ends with a
// newline.
func TestReadLinesInPieces(t *testing.T) {
	var all []byte
	for _, name := range slices.Sorted(maps.Keys(goldenLogs(t))) {
		all = append(all, goldenLogs(t)[name]...)
	}
	for _, data := range [][]byte{all, all[:len(all)-1], all[:len(all)/2], []byte("x"), nil} {
		want := readLines(data, 1)
		if n := bytes.Count(data, []byte{'\n'}); len(want) < n {
			t.Fatalf("%d lines of %d", len(want), n)
		}
		for parts := 2; parts <= 7; parts++ {
			if got := readLines(data, parts); !slices.Equal(got, want) {
				t.Fatalf("%d bytes in %d pieces: %d lines, want %d", len(data), parts, len(got), len(want))
			}
		}
	}
}

// TestLoadCRLF: a log whose lines end in CRLF (a copy made on Windows)
// parses as the same log with LF does.
func TestLoadCRLF(t *testing.T) {
	for name, data := range goldenLogs(t) {
		crlf := bytes.ReplaceAll(data, []byte("\n"), []byte("\r\n"))
		want := dumpTrace(load(bytes.Clone(data)))
		if got := dumpTrace(load(crlf)); got != want {
			t.Errorf("%s with CRLF:\n%s\nwant\n%s", name, got, want)
		}
		if !strings.HasPrefix(want, "err <nil>") {
			t.Errorf("%s: %s", name, want[:strings.IndexByte(want, '\n')])
		}
	}
}
