package replay

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// TestReplayStrace records a real program, tar extracting an archive,
// with strace, and replays the trace in another directory: every call the
// replay performs is replayed as often as recorded, with the recorded
// bytes, and the files tar wrote have, in the replay's directory, the
// sizes tar gave them.
func TestReplayStrace(t *testing.T) {
	straceBin, err := testenv.LookPath("strace")
	if err != nil {
		testenv.Unavailable(t, "strace not installed")
	}
	work := t.TempDir()
	src, out := filepath.Join(work, "src"), filepath.Join(work, "out")
	sizes := map[string]int{"a.txt": 6, "sub/b.bin": 100000, "sub/deeper/c.bin": 70000, "empty": 0}
	for name, n := range sizes {
		p := filepath.Join(src, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, bytes.Repeat([]byte{'x'}, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.Mkdir(out, 0o755)
	archive := filepath.Join(work, "a.tar")
	if b, err := exec.Command("tar", "cf", archive, "-C", src, ".").CombinedOutput(); err != nil {
		t.Fatalf("tar cf: %v %s", err, b)
	}
	log := filepath.Join(work, "trace.log")
	if b, err := exec.Command(straceBin, "-f", "-ttt", "-T", "-y", "-o", log, "tar", "xf", archive, "-C", out).CombinedOutput(); err != nil {
		t.Fatalf("strace tar xf: %v %s", err, b)
	}
	dest := t.TempDir()
	res := &report.Result{}
	if err := Run(context.Background(), Options{Log: log, Path: dest, Keep: true}, res); err != nil {
		t.Fatalf("replay: %v", err)
	}
	rp := res.Replay
	if rp.Format != FormatStrace || res.Phases[0].Errors != 0 {
		t.Fatalf("format %s, errors %q", rp.Format, res.Phases[0].ErrorSamples)
	}
	written := writtenTo(t, log, out)
	for _, o := range rp.Ops {
		if o.Ops != o.Recorded.Ops || o.Bytes != o.Recorded.Bytes || o.Failed != o.Recorded.Failed || o.Errors != 0 {
			t.Errorf("%s: replayed %d ops, %d bytes, %d failed, %d differed; recorded %d, %d, %d",
				o.Op, o.Ops, o.Bytes, o.Failed, o.Errors, o.Recorded.Ops, o.Recorded.Bytes, o.Recorded.Failed)
		}
		if o.Op == "write" && o.Bytes < written {
			t.Errorf("write: %d bytes replayed, the trace writes %d to %s", o.Bytes, written, out)
		}
	}
	runs, _ := filepath.Glob(filepath.Join(dest, "fsbench-*"))
	if len(runs) != 1 {
		t.Fatalf("run directories: %v", runs)
	}
	for name, n := range sizes {
		st, err := os.Stat(filepath.Join(runs[0], out, name))
		if err != nil || st.Size() != int64(n) {
			t.Errorf("%s in the replay: %v, want %d bytes", name, err, n)
		}
	}
}

// writtenTo sums the bytes the trace's write calls put in files below dir.
func writtenTo(t *testing.T, log, dir string) int64 {
	t.Helper()
	f, err := os.Open(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	re := regexp.MustCompile(`^\d+ +[\d.]+ write\(\d+<` + regexp.QuoteMeta(dir) + `/.*\) = (\d+) <`)
	var n int64
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if m := re.FindStringSubmatch(sc.Text()); m != nil {
			v, _ := strconv.ParseInt(m[1], 10, 64)
			n += v
		}
	}
	if n == 0 {
		t.Fatalf("no write to %s in the trace", dir)
	}
	return n
}

// The first pass parses strace's complete calls (readStrace) into what the
// second pass would have read from the line (parseStrace): every line of a
// real trace, and lines the first pass must leave to the second.
func TestReadStraceAsParse(t *testing.T) {
	data, err := os.ReadFile("testdata/strace-tar.log")
	if err != nil {
		t.Fatal(err)
	}
	long := `1  1.000001 write(3</o>, "` + strings.Repeat("x", maxSpan) + `", 8) = 8 <0.000001>`
	lines := append(bytes.Split(data, []byte("\n")),
		[]byte(`7  1795718335.1 read(3</a>, "", 4) = 0 <4295.000000>`), // a latency past 32 bits of ns
		[]byte(`7  1795718335.1 read(3</a>, "a <unfinished ...>", 4) = 1 <0.000001>`),
		[]byte(`7  1795718335.1 close(3</a>) = -1 EBADF (Bad file descriptor) <0.000002>`),
		[]byte(`7  1795718335.x close(3</a>) = 0 <0.000002>`),
		[]byte(`7  1795718335.1 getpid() = 7 <0.000001>`),
		// More arguments than the first pass keeps; a descriptor's seek.
		[]byte(`7  1795718335.1 statx(AT_FDCWD</w>, "a", AT_STATX_SYNC_AS_STAT, STATX_ALL, {stx_mask=STATX_ALL, stx_size=5, ...}) = 0 <0.000003>`),
		[]byte(`7  1795718335.1 renameat2(AT_FDCWD</w>, "a", AT_FDCWD</w>, "b", RENAME_NOREPLACE) = 0 <0.000003>`),
		[]byte(`7  1795718335.1 lseek(3</w/a>, 0, SEEK_END) = 5 <0.000001>`),
		[]byte(`7  1795718335.1 fsync( 3</w/a> ) = 0 <0.000001>`),
		[]byte(long))
	calls := 0
	for i, line := range lines {
		_, start, body, ok := straceHead(line)
		if !ok {
			continue
		}
		var r rec
		r.pid = 7
		readStrace(line, start, body, &r)
		// A parser of each pass's own, so that no state is shared.
		want, ok, bad := newStrace(nil).parseStrace(line)
		if r.kind != kindStraceCall {
			if r.kind != kindStrace {
				t.Fatalf("line %d: kind %d", i+1, r.kind)
			}
			if ok && !bytes.Contains(line, []byte("unfinished")) && len(line) <= maxSpan && want.lat < 1<<32 {
				t.Errorf("line %d: a complete call left to the second pass: %s", i+1, line)
			}
			continue
		}
		calls++
		if !ok || bad {
			t.Errorf("line %d: parsed by the first pass, not a complete call to parseStrace: %s", i+1, line)
			continue
		}
		r.pid = want.pid
		var got call
		newStrace(nil).callOf(line, &r, &got)
		if !reflect.DeepEqual(got, want) {
			t.Errorf("line %d: first pass %+v, second %+v", i+1, got, want)
		}
	}
	if calls < 100 {
		t.Errorf("%d complete calls parsed by the first pass", calls)
	}
}

// TestStatThenChild: a directory the log first stats (a shell's look at
// its working directory), then uses a file below through a handle it
// opened before the recording, is made a directory, not a file of the
// stat's size, so that the file below it can be made.
func TestStatThenChild(t *testing.T) {
	log := filepath.Join(t.TempDir(), "trace.log")
	os.WriteFile(log, []byte(`100 1795570281.000001 newfstatat(AT_FDCWD</w>, "/w", {st_mode=S_IFDIR|S_ISVTX|0777, st_size=20480, ...}, 0) = 0 <0.000010>
100 1795570281.000002 write(1</w/jobs/1/stdout>, "hello\n", 6) = 6 <0.000010>
`), 0o644)
	dest := t.TempDir()
	res := &report.Result{}
	if err := Run(context.Background(), Options{Log: log, Path: dest, Keep: true, DropCaches: "never"}, res); err != nil {
		t.Fatalf("replay: %v", err)
	}
	runs, _ := filepath.Glob(filepath.Join(dest, "fsbench-*"))
	if len(runs) != 1 {
		t.Fatalf("run directories: %v", runs)
	}
	if st, err := os.Stat(filepath.Join(runs[0], "w")); err != nil || !st.IsDir() {
		t.Errorf("/w in the replay: %v, %v: want a directory", st, err)
	}
	if st, err := os.Stat(filepath.Join(runs[0], "w/jobs/1/stdout")); err != nil || st.Size() != 6 {
		t.Errorf("/w/jobs/1/stdout in the replay: %v: want the 6 bytes written", err)
	}
}
