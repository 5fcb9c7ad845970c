package replay

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
)

// writeLog writes lines as a log file and returns its path.
func writeLog(t *testing.T, lines ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// replayLog replays a log in a new temporary directory.
func replayLog(t *testing.T, log string, speed float64) *report.Result {
	t.Helper()
	res := &report.Result{}
	if err := Run(context.Background(), Options{Log: log, Path: t.TempDir(), Speed: speed}, res); err != nil {
		t.Fatalf("replay: %v", err)
	}
	return res
}

func opOf(t *testing.T, res *report.Result, name string) report.ReplayOp {
	t.Helper()
	for _, o := range res.Replay.Ops {
		if o.Op == name {
			return o
		}
	}
	t.Fatalf("no %s in %+v", name, res.Replay.Ops)
	return report.ReplayOp{}
}

// TestLoadSkipped: lines that are not replayed are counted, and the
// operations the replay does not perform are named with their counts.
func TestLoadSkipped(t *testing.T) {
	tr, err := Load(strings.NewReader(strings.Join([]string{
		"2026.11.21 21:03:17.000001 [uid:0,gid:0,pid:7] mkdir (1,d,drwxr-xr-x:0040755): (2,[drwxr-xr-x:0040755,2,0,0,1,1,1,4096]) - OK <0.000100>",
		"2026.11.21 21:03:17.000002 [uid:0,gid:0,pid:7] setattr (2,0x1,[drwxr-xr-x:0040700]): (2,[drwx------:0040700,2,0,0,1,1,1,4096]) - OK <0.000100>",
		"2026.11.21 21:03:17.000003 [uid:0,gid:0,pid:7] getxattr (2,user.x): - no such attribute <0.000010>",
		"2026.11.21 21:03:17.000004 [uid:0,gid:0,pid:7] setattr (2,0x1,[drwxr-xr-x:0040755]): (2,[drwxr-xr-x:0040755,2,0,0,1,1,1,4096]) - OK <0.000100>",
		"2026.11.21 21:03:17.000005 [uid:0,gid:0,pid:7] read (9223372032559808515,512,0,9): 512 - OK <0.000002>",
		"2026.11.21 21:03:17.000006 [uid:0,gid:0,pid:7] lookup (1,.jfs.stats): - no such file or directory <0.000161>",
		"#",
		"",
		"this is not an entry",
		"2026.11.21 21:03:17.000007 [uid:0,gid:0,pid:7] read (",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	s := tr.Skipped
	if s.Lines != 10 || s.Blank != 2 || s.Malformed != 2 || s.Virtual != 2 || tr.Ops() != 1 {
		t.Errorf("skipped %+v, ops %d", s, tr.Ops())
	}
	if got := s.UnsupportedNames(); len(got) != 2 || got[0] != "setattr" || s.Unsupported["setattr"] != 2 || s.Unsupported["getxattr"] != 1 {
		t.Errorf("unsupported %v %v", got, s.Unsupported)
	}
}

// TestReplayFailures: a recorded failure fails the same way and is counted
// apart; an operation whose outcome differs from the recording's is an
// error that says so; a name the log finds again after removing it (the
// log lost a line) is made again, untimed, before that use.
func TestReplayFailures(t *testing.T) {
	res := replayLog(t, writeLog(t,
		"2026.11.21 21:03:17.000001 [uid:0,gid:0,pid:7] lookup (1,f): - no such file or directory <0.000100>",
		"2026.11.21 21:03:17.000002 [uid:0,gid:0,pid:7] create (1,f,-rw-r--r--:0100644): (2,[-rw-r--r--:0100644,1,0,0,1,1,1,0]) [fh:3] - OK <0.000100>",
		"2026.11.21 21:03:17.000003 [uid:0,gid:0,pid:7] release (2,3) - OK <0.000010>",
		"2026.11.21 21:03:17.000004 [uid:0,gid:0,pid:7] mkdir (1,f,drwxr-xr-x:0040755): - file exists <0.000100>",
		"2026.11.21 21:03:17.000005 [uid:0,gid:0,pid:7] unlink (1,f) - OK <0.000100>",
		"2026.11.21 21:03:17.000006 [uid:0,gid:0,pid:7] lookup (1,f): (2,[-rw-r--r--:0100644,1,0,0,1,1,1,0]) - OK <0.000100>",
		"2026.11.21 21:03:17.000007 [uid:0,gid:0,pid:7] create (1,h,-rw-r--r--:0100644): (3,[-rw-r--r--:0100644,1,0,0,1,1,1,0]) [fh:4] - OK <0.000100>",
		// The log says that a lookup of the file just created failed: the
		// replay cannot fail it, and says so.
		"2026.11.21 21:03:17.000008 [uid:0,gid:0,pid:7] lookup (1,h): - no such file or directory <0.000100>",
	), 0)
	lookup, mkdir := opOf(t, res, "lookup"), opOf(t, res, "mkdir")
	if lookup.Failed != 1 || lookup.Recorded.Failed != 2 || lookup.Ops != 1 || lookup.Recorded.Ops != 1 || lookup.Errors != 1 {
		t.Errorf("lookup: %+v", lookup)
	}
	if mkdir.Failed != 1 || mkdir.Ops != 0 || mkdir.Errors != 0 {
		t.Errorf("mkdir: %+v", mkdir)
	}
	all := res.Phases[0]
	if all.Errors != 1 || len(all.ErrorSamples) != 1 || !strings.Contains(all.ErrorSamples[0], "lookup /h: succeeded, recorded as failed with no such file or directory") {
		t.Errorf("replay row: %d errors, %q", all.Errors, all.ErrorSamples)
	}
	if res.Replay.Prepared != 1 {
		t.Errorf("prepared %d, want 1 (f, found again after its unlink)", res.Replay.Prepared)
	}
}

// TestReplayOrderAcrossStreams: a stream that reads what another wrote
// waits for the write, as recorded, however the streams are scheduled;
// the read gets the recorded bytes every time.
func TestReplayOrderAcrossStreams(t *testing.T) {
	var lines []string
	add := func(pid, op, rest string) {
		lines = append(lines, fmt.Sprintf("2026.11.21 21:03:17.%06d", len(lines)+1)+" [uid:0,gid:0,pid:"+pid+"] "+op+" "+rest)
	}
	for f := 0; f < 20; f++ {
		ino, fh := itoa(10+f), itoa(100+f)
		add("1", "create", "(1,f"+itoa(f)+",-rw-r--r--:0100644): ("+ino+",[-rw-r--r--:0100644,1,0,0,1,1,1,0]) [fh:"+fh+"] - OK <0.000001>")
		add("2", "write", "("+ino+",65536,0,"+fh+") - OK <0.000001>")
		add("0", "release", "("+ino+","+fh+") - OK <0.000001>")
		add("3", "open", "("+ino+",0x8000) [fh:"+itoa(500+f)+"] - OK <0.000001>")
		add("3", "read", "("+ino+",131072,0,"+itoa(500+f)+"): 65536 - OK <0.000001>")
		add("4", "unlink", "(1,f"+itoa(f)+") - OK <0.000001>")
	}
	log := writeLog(t, lines...)
	for range 5 {
		res := replayLog(t, log, 0)
		if r := opOf(t, res, "read"); r.Bytes != 20*65536 || r.Ops != 20 || res.Phases[0].Errors != 0 {
			t.Fatalf("read: %+v; errors %q", r, res.Phases[0].ErrorSamples)
		}
		if res.Replay.Streams != 5 {
			t.Errorf("streams %d", res.Replay.Streams)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestReplaySpeed: --speed 1 keeps the recorded gaps, --speed 2 halves
// them: the replay lasts at least that long.
func TestReplaySpeed(t *testing.T) {
	log := writeLog(t,
		"2026.11.21 21:03:17.000100 [uid:0,gid:0,pid:7] mkdir (1,d,drwxr-xr-x:0040755): (2,[drwxr-xr-x:0040755,2,0,0,1,1,1,4096]) - OK <0.000100>",
		"2026.11.21 21:03:17.300100 [uid:0,gid:0,pid:8] getattr (2): (2,[drwxr-xr-x:0040755,2,0,0,1,1,1,4096]) - OK <0.000100>",
		"2026.11.21 21:03:17.400100 [uid:0,gid:0,pid:7] rmdir (1,d) - OK <0.000100>",
	)
	for _, c := range []struct {
		speed float64
		least time.Duration
	}{{1, 400 * time.Millisecond}, {2, 200 * time.Millisecond}} {
		res := replayLog(t, log, c.speed)
		if got := time.Duration(res.Replay.Seconds * float64(time.Second)); got < c.least || res.Phases[0].Errors != 0 {
			t.Errorf("--speed %g: %v, want at least %v (errors %q)", c.speed, got, c.least, res.Phases[0].ErrorSamples)
		}
		if res.Replay.RecordedSeconds < 0.4 || res.Replay.RecordedSeconds > 0.41 {
			t.Errorf("recorded span %v s, want 0.4", res.Replay.RecordedSeconds)
		}
	}
}

// FuzzLoad: any input loads without a panic; whatever it holds is counted.
func FuzzLoad(f *testing.F) {
	data, _ := os.ReadFile(sampleLog)
	f.Add(data)
	f.Add([]byte("2026.11.21 21:03:17.000001 [uid:0,gid:0,pid:7] rename (1,a,b,1,c,d,0) - OK <0.000100>\n"))
	f.Add([]byte("2026.11.21 21:03:17.000001 [uid:0,gid:0,pid:7] read (\"/a,b\",4096,0): 4096 - OK <0.000100>\n"))
	f.Add([]byte(`3760  1795570281.950820 openat(4</tmp/out>, "./a.txt", O_WRONLY|O_CREAT|O_EXCL, 0600) = 5</tmp/out/a.txt> <0.000059>
3760  1795570281.951174 write(5</tmp/out/a.txt>, "hello\n", 6) = 6 <0.000019>
3761  1795570281.951175 read(5</tmp/out/a.txt>,  <unfinished ...>
3760  1795570281.951176 unlinkat(4</tmp/out>, "x", AT_REMOVEDIR) = -1 ENOENT (No such file or directory) <0.000019>
3761  1795570281.951177 <... read resumed>"hello\n", 10) = 6 <0.000002>
3760  1795570281.951178 renameat2(AT_FDCWD</tmp>, "/tmp/out/a.txt", AT_FDCWD</tmp>, "b", 0) = 0 <0.000010>
3760  1795570281.981341 +++ exited with 0 +++
`))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := Load(bytes.NewReader(b))
		if err == nil && tr.Ops() == 0 {
			t.Fatal("no error for a log with no operation")
		}
		if s := tr.Skipped; s.Lines < s.Blank+s.Malformed+s.Virtual {
			t.Fatalf("counts %+v", s)
		}
	})
}

// A load raises the collector's percentage while it runs and puts it
// back; a higher one, or the collector off, it leaves alone.
func TestLoadRaisesGC(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	for _, before := range []int{100, 50, loadGC * 2, -1} {
		debug.SetGCPercent(before)
		restore := raiseGC(loadGC)
		during := debug.SetGCPercent(-1)
		debug.SetGCPercent(during)
		restore()
		if want := max(before, loadGC); before < 0 && during != before || before >= 0 && during != want {
			t.Errorf("percentage %d: %d during the load", before, during)
		}
		if after := debug.SetGCPercent(100); after != before {
			t.Errorf("percentage %d: %d after the load", before, after)
		}
	}
	debug.SetGCPercent(70)
	if _, err := ReadLog(writeLog(t, `7  1795718335.000001 close(3</w/a>) = 0 <0.000001>`)); err != nil {
		t.Fatal(err)
	}
	if after := debug.SetGCPercent(100); after != 70 {
		t.Errorf("percentage 70: %d after ReadLog", after)
	}
}

// TestNoOpsSaysWhy: a log with nothing to replay fails with what its
// lines were.
func TestNoOpsSaysWhy(t *testing.T) {
	for _, c := range []struct{ log, want string }{
		{"garbage\n\nx y z\n", "of its 3 lines, 2 in no format fsbench reads (JuiceFS's or fsbench's access log, strace -f -ttt -T -y); 1 blank"},
		{"1 1.0 getpid() = 7 <0.000001>\n", "of its 1 line, 1 of operations fsbench does not replay (getpid)"},
		{"2026.11.21 21:03:17.000003 [uid:0,gid:0,pid:8] lookup (1,.stats): (9223372032828243970,[-r--r--r--:0100444,1,0,0,0,0,0,0]) - OK <0.000001>\n",
			"1 on JuiceFS's virtual files"},
		{"", "it is empty"},
	} {
		_, err := load([]byte(c.log))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want %q in it", c.log, err, c.want)
		}
	}
}
