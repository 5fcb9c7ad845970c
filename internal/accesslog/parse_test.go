package accesslog

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ts(s string) int64 {
	t, err := time.ParseInLocation(TimeLayout, s, time.UTC)
	if err != nil {
		panic(err)
	}
	return t.UnixNano()
}

func TestParse(t *testing.T) {
	type want struct {
		time          string
		uid, gid, pid uint32
		op, args      string
		status        string
		ok            bool
		lat           time.Duration
	}
	tests := []struct {
		name string
		line string
		want want
	}{
		{
			name: "lookup error",
			line: `2026.11.21 21:03:17.175294 [uid:0,gid:0,pid:22645] lookup (1,__juicefs_benchmark_1795294997174532444__): - no such file or directory <0.000161>`,
			want: want{"2026.11.21 21:03:17.175294", 0, 0, 22645, "lookup", "(1,__juicefs_benchmark_1795294997174532444__)", "no such file or directory", false, 161 * time.Microsecond},
		},
		{
			name: "open with handle",
			line: `2026.11.21 21:03:16.145973 [uid:0,gid:0,pid:22642] open (9223372032559808513,0x8000) [fh:7] - OK <0.000039>`,
			want: want{"2026.11.21 21:03:16.145973", 0, 0, 22642, "open", "(9223372032559808513,0x8000)", "OK", true, 39 * time.Microsecond},
		},
		{
			name: "getattr with result",
			line: `2026.11.21 21:03:17.175056 [uid:1000,gid:100,pid:1] getattr (1): (1,[drwxrwxrwx:0040777,2,0,0,1795294990,1795294990,1795294990,4096]) - OK <0.000341>`,
			want: want{"2026.11.21 21:03:17.175056", 1000, 100, 1, "getattr", "(1)", "OK", true, 341 * time.Microsecond},
		},
		{
			name: "write",
			line: `2026.11.21 21:03:18.403245 [uid:0,gid:0,pid:22645] write (3,131072,0,10) - OK <0.000087>`,
			want: want{"2026.11.21 21:03:18.403245", 0, 0, 22645, "write", "(3,131072,0,10)", "OK", true, 87 * time.Microsecond},
		},
		{
			name: "read with count",
			line: `2026.11.21 21:03:18.394177 [uid:0,gid:0,pid:22645] read (9223372032559808515,512,0,9): 512 - OK <0.000002>`,
			want: want{"2026.11.21 21:03:18.394177", 0, 0, 22645, "read", "(9223372032559808515,512,0,9)", "OK", true, 2 * time.Microsecond},
		},
		{
			name: "create with mode and result",
			line: `2026.11.21 21:03:18.400355 [uid:0,gid:0,pid:22645] create (2,bigfile.1.0,-rw-r--r--:0100644): (3,[-rw-r--r--:0100644,1,0,0,1795294998,1795294998,1795294998,0]) [fh:10] - OK <0.005066>`,
			want: want{"2026.11.21 21:03:18.400355", 0, 0, 22645, "create", "(2,bigfile.1.0,-rw-r--r--:0100644)", "OK", true, 5066 * time.Microsecond},
		},
		{
			name: "zero latency, max ids",
			line: `2026.11.21 21:03:18.394472 [uid:4294967295,gid:4294967295,pid:4294967295] read (9,2048,4032,9): 627 - OK <0.000000>`,
			want: want{"2026.11.21 21:03:18.394472", 4294967295, 4294967295, 4294967295, "read", "(9,2048,4032,9)", "OK", true, 0},
		},
		{
			name: "name with spaces, parentheses and a dash",
			line: `2026.01.02 03:04:05.000001 [uid:1,gid:2,pid:3] lookup (1,my file (1) - copy): (5,[-rw-r--r--:0100644,1,0,0,1,1,1,0]) - OK <1.5>`,
			want: want{"2026.01.02 03:04:05.000001", 1, 2, 3, "lookup", "(1,my file (1) - copy)", "OK", true, 1500 * time.Millisecond},
		},
		{
			name: "quoted name",
			line: `2026.01.02 03:04:05.000001 [uid:1,gid:2,pid:3] unlink ("/tmp/a b\"):c\\") - OK <0.000010>`,
			want: want{"2026.01.02 03:04:05.000001", 1, 2, 3, "unlink", `("/tmp/a b\"):c\\")`, "OK", true, 10 * time.Microsecond},
		},
		{
			name: "quoted name with a fake header",
			line: `2026.01.02 03:04:05.000001 [uid:1,gid:2,pid:3] stat ("x): - OK <1>") - file exists <0.000010>`,
			want: want{"2026.01.02 03:04:05.000001", 1, 2, 3, "stat", `("x): - OK <1>")`, "file exists", false, 10 * time.Microsecond},
		},
		{
			name: "old format status after colon",
			line: `2022.04.20 17:23:59.123456 [uid:0,gid:0,pid:1631098] open (38597810,0x8000): OK (38597810,[-rw-r--r--:0100644,1,0,0,1650446639,1650446639,1650446639,212]) (direct_io:0,keep_cache:1) [handle:00007869] <0.010293>`,
			want: want{"2022.04.20 17:23:59.123456", 0, 0, 1631098, "open", "(38597810,0x8000)", "OK (38597810,[-rw-r--r--:0100644,1,0,0,1650446639,1650446639,1650446639,212]) (direct_io:0,keep_cache:1) [handle:00007869]", true, 10293 * time.Microsecond},
		},
		{
			name: "old format error",
			line: `2022.04.20 17:23:59.123456 [uid:0,gid:0,pid:1] lookup (1,x): no such file or directory <0.000100>`,
			want: want{"2022.04.20 17:23:59.123456", 0, 0, 1, "lookup", "(1,x)", "no such file or directory", false, 100 * time.Microsecond},
		},
		{
			name: "carriage return, nanosecond latency",
			line: "2026.11.21 21:03:18.394666 [uid:0,gid:0,pid:0] release (9223372032559808515,9) - OK <0.000000123456>\r",
			want: want{"2026.11.21 21:03:18.394666", 0, 0, 0, "release", "(9223372032559808515,9)", "OK", true, 123},
		},
		{
			name: "copy_file_range, unicode name",
			line: `2026.11.21 21:03:18.394666 [uid:0,gid:0,pid:7] copy_file_range (1,ünïcødé,2) - OK <0.000001>`,
			want: want{"2026.11.21 21:03:18.394666", 0, 0, 7, "copy_file_range", "(1,ünïcødé,2)", "OK", true, time.Microsecond},
		},
		{
			name: "leap second",
			line: `2016.12.31 23:59:60.500000 [uid:0,gid:0,pid:7] statfs (1) - OK <0.000001>`,
			want: want{"2017.01.01 00:00:00.500000", 0, 0, 7, "statfs", "(1)", "OK", true, time.Microsecond},
		},
	}
	var p Parser
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e Entry
			if err := p.Parse([]byte(tt.line), &e); err != nil {
				t.Fatalf("Parse: %v", err)
			}
			w := tt.want
			if e.Time != ts(w.time) {
				t.Errorf("time = %v, want %s", time.Unix(0, e.Time).UTC(), w.time)
			}
			if e.UID != w.uid || e.GID != w.gid || e.PID != w.pid {
				t.Errorf("ids = %d,%d,%d, want %d,%d,%d", e.UID, e.GID, e.PID, w.uid, w.gid, w.pid)
			}
			if string(e.Op) != w.op || string(e.Args) != w.args || string(e.Status) != w.status {
				t.Errorf("op, args, status = %q %q %q\nwant %q %q %q", e.Op, e.Args, e.Status, w.op, w.args, w.status)
			}
			if e.OK() != w.ok {
				t.Errorf("OK() = %v, want %v", e.OK(), w.ok)
			}
			if e.Latency != w.lat {
				t.Errorf("latency = %v, want %v", e.Latency, w.lat)
			}
		})
	}
}

func TestParseRejects(t *testing.T) {
	good := `2026.11.21 21:03:18.403245 [uid:0,gid:0,pid:22645] write (3,131072,0,10) - OK <0.000087>`
	tests := []struct {
		name  string
		line  string
		want  error  // a sentinel, or nil to accept any *SyntaxError
		field string // the SyntaxError's field
	}{
		{"empty", "", ErrBlank, ""},
		{"spaces", "  \t ", ErrBlank, ""},
		{"keep-alive", "#", ErrKeepAlive, ""},
		{"keep-alive with CR", "#\r", ErrKeepAlive, ""},
		{"not UTF-8", "2026.11.21 21:03:18.403245 [uid:0,gid:0,pid:22645] lookup (1,\xff\xfe) - OK <0.000087>", ErrNotUTF8, ""},
		{"garbage", "hello world", nil, "line"},
		{"truncated in timestamp", "2026.11.21 21:03", nil, "line"},
		{"truncated after ids", good[:52], nil, "operation"},
		{"truncated in arguments", good[:62], nil, "latency"},
		{"truncated in latency", good[:len(good)-3], nil, "latency"},
		{"run together", good[:70] + good, nil, "line"},
		{"run together at the end", good + good[:40], nil, "latency"},
		{"bad month", strings.Replace(good, "2026.11.21", "2026.13.21", 1), nil, "timestamp"},
		{"bad day", strings.Replace(good, "2026.11.21", "2026.02.30", 1), nil, "timestamp"},
		{"bad hour", strings.Replace(good, "21:03:18", "24:03:18", 1), nil, "timestamp"},
		{"bad minute", strings.Replace(good, "21:03:18", "21:60:18", 1), nil, "timestamp"},
		{"letters in date", strings.Replace(good, "2026", "20x6", 1), nil, "timestamp"},
		{"letters in micros", strings.Replace(good, ".403245", ".40a245", 1), nil, "timestamp"},
		{"no space after time", strings.Replace(good, "403245 [", "403245[", 1), nil, "timestamp"},
		{"bad uid", strings.Replace(good, "uid:0", "uid:x", 1), nil, "ids"},
		{"uid overflow", strings.Replace(good, "uid:0", "uid:4294967296", 1), nil, "ids"},
		{"missing pid", strings.Replace(good, ",pid:22645", "", 1), nil, "ids"},
		{"upper-case op", strings.Replace(good, "write", "WRITE", 1), nil, "operation"},
		{"op too long", strings.Replace(good, "write", strings.Repeat("w", MaxOpLen+1), 1), nil, "operation"},
		{"no args", strings.Replace(good, "(3,131072,0,10)", "3,131072", 1), nil, "arguments"},
		{"unclosed args", strings.Replace(good, "(3,131072,0,10)", "(3,131072", 1), nil, "arguments"},
		{"unterminated quote", strings.Replace(good, "(3,131072,0,10)", `("3,131072,0,10)`, 1), nil, "arguments"},
		{"no status", strings.Replace(good, " - OK", "", 1), nil, "status"},
		{"empty status", strings.Replace(good, " - OK", " - ", 1), nil, "status"},
		{"latency not a number", strings.Replace(good, "<0.000087>", "<abc>", 1), nil, "latency"},
		{"latency two dots", strings.Replace(good, "<0.000087>", "<0.0.1>", 1), nil, "latency"},
		{"latency negative", strings.Replace(good, "<0.000087>", "<-1.0>", 1), nil, "latency"},
		{"latency huge", strings.Replace(good, "<0.000087>", "<99999999999.0>", 1), nil, "latency"},
		{"no space before latency", strings.Replace(good, " <0.000087>", "<0.000087>", 1), nil, "latency"},
	}
	var p Parser
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e Entry
			err := p.Parse([]byte(tt.line), &e)
			if err == nil {
				t.Fatalf("Parse(%q) accepted: %+v", tt.line, e)
			}
			if tt.want != nil {
				if !errors.Is(err, tt.want) {
					t.Fatalf("Parse = %v, want %v", err, tt.want)
				}
				return
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse = %v (%T), want a *SyntaxError", err, err)
			}
			if se.Field != tt.field {
				t.Errorf("field = %q (%v), want %q", se.Field, err, tt.field)
			}
		})
	}
}

func TestParseLocation(t *testing.T) {
	loc := time.FixedZone("UTC+8", 8*3600)
	p := NewParser(loc)
	var e Entry
	line := []byte(`2026.11.21 21:03:18.403245 [uid:0,gid:0,pid:1] write (3,1,0,10) - OK <0.000087>`)
	if err := p.Parse(line, &e); err != nil {
		t.Fatal(err)
	}
	want := time.Date(2026, 11, 21, 13, 3, 18, 403245000, time.UTC)
	if got := time.Unix(0, e.Time).UTC(); !got.Equal(want) {
		t.Errorf("time = %v, want %v", got, want)
	}
	// The hour cache must not carry over to another hour or day.
	for _, s := range []string{"2026.11.21 22:00:00.000000", "2026.11.22 21:03:18.403245", "2026.11.21 21:59:59.999999"} {
		l := append([]byte(s), line[26:]...)
		if err := p.Parse(l, &e); err != nil {
			t.Fatal(err)
		}
		w, _ := time.ParseInLocation(TimeLayout, s, loc)
		if e.Time != w.UnixNano() {
			t.Errorf("%s: time = %v, want %v", s, time.Unix(0, e.Time).In(loc), w)
		}
	}
}

// TestParseSample reads the real JuiceFS excerpt: every line is an entry.
func TestParseSample(t *testing.T) {
	f, err := os.Open(filepath.Join("..", "..", "testdata", "juicefs", "accesslog-sample.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var p Parser
	n := 0
	ops := map[string]int{}
	for sc.Scan() {
		var e Entry
		if err := p.Parse(sc.Bytes(), &e); err != nil {
			t.Errorf("line %d: %v: %s", n+1, err, sc.Text())
		}
		ops[string(e.Op)]++
		n++
	}
	if n != 550 {
		t.Errorf("read %d lines, want 550", n)
	}
	if ops["write"] != 207 || ops["getattr"] != 104 || ops["unlink"] != 65 {
		t.Errorf("ops = %v", ops)
	}
}

func TestRecordRoundTrip(t *testing.T) {
	loc := time.FixedZone("X", -3*3600)
	r := Record{
		Time: time.Date(2026, 11, 21, 21, 3, 18, 403245678, loc),
		UID:  1000, GID: 100, PID: 4242,
		Op:      "lookup",
		Args:    string(AppendName([]byte("1,"), "a (weird), \"name\"\n\xff")),
		Result:  "(2,[x])",
		Status:  "no such\nfile <or> directory",
		Latency: 1234567 * time.Nanosecond,
	}
	line := AppendRecord(nil, &r)
	if !bytes.HasSuffix(line, []byte("\n")) || bytes.Count(line, []byte("\n")) != 1 {
		t.Fatalf("not one line: %q", line)
	}
	p := NewParser(loc)
	var e Entry
	if err := p.Parse(line[:len(line)-1], &e); err != nil {
		t.Fatalf("Parse(%q): %v", line, err)
	}
	if e.Time != r.Time.Truncate(time.Microsecond).UnixNano() {
		t.Errorf("time = %v", time.Unix(0, e.Time))
	}
	if e.UID != 1000 || e.GID != 100 || e.PID != 4242 || string(e.Op) != "lookup" {
		t.Errorf("entry = %+v", e)
	}
	if string(e.Args) != "("+r.Args+")" {
		t.Errorf("args = %s, want (%s)", e.Args, r.Args)
	}
	if string(e.Status) != "no such file  or  directory" || e.OK() {
		t.Errorf("status = %q", e.Status)
	}
	if e.Latency != 1235*time.Microsecond {
		t.Errorf("latency = %v", e.Latency)
	}
}

func TestAppendName(t *testing.T) {
	for in, want := range map[string]string{
		"/tmp/x/small.0.1": "/tmp/x/small.0.1",
		"a b":              `"a b"`,
		"a(b)":             `"a(b)"`,
		"é":                `"\u00e9"`,
		"\xff":             `"\xff"`,
		"":                 "",
	} {
		if got := string(AppendName(nil, in)); got != want {
			t.Errorf("AppendName(%q) = %s, want %s", in, got, want)
		}
	}
}

// FuzzParse checks that no input makes Parse panic, that what it accepts
// is consistent, and that a formatted record always parses back.
func FuzzParse(f *testing.F) {
	seeds := []string{
		`2026.11.21 21:03:17.175294 [uid:0,gid:0,pid:22645] lookup (1,__juicefs_benchmark_1795294997174532444__): - no such file or directory <0.000161>`,
		`2026.11.21 21:03:18.400355 [uid:0,gid:0,pid:22645] create (2,bigfile.1.0,-rw-r--r--:0100644): (3,[-rw-r--r--:0100644,1,0,0,1795294998,1795294998,1795294998,0]) [fh:10] - OK <0.005066>`,
		`2022.04.20 17:23:59.123456 [uid:0,gid:0,pid:1] lookup (1,x): no such file or directory <0.000100>`,
		`2026.01.02 03:04:05.000001 [uid:1,gid:2,pid:3] unlink ("/tmp/a b\"):c\\") - OK <0.000010>`,
		"#", "", "2026.11.21 21:03", "\xff\xfe",
		`2026.11.21 21:03:18.403245 [uid:0,gid:0,pid:22645] write (3,131072,0,10) - OK <0.000087>2026.11.21 21:03:18.403245 [uid:0,gid:0,pid:22645] write (3,131072,0,10) - OK <0.000087>`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), "name", uint32(7))
	}
	f.Fuzz(func(t *testing.T, line []byte, name string, id uint32) {
		var p Parser
		var e Entry
		if err := p.Parse(line, &e); err == nil {
			if len(e.Op) == 0 || len(e.Args) < 2 || e.Args[0] != '(' || e.Args[len(e.Args)-1] != ')' || len(e.Status) == 0 || e.Latency < 0 {
				t.Fatalf("accepted an inconsistent entry %+v from %q", e, line)
			}
		}
		r := Record{
			Time: time.Date(2026, 11, 21, 21, 3, 18, int(id%1e9), time.UTC),
			UID:  id, GID: id / 2, PID: id / 3, Op: "lookup",
			Args:    string(AppendName([]byte("1,"), name)),
			Status:  name,
			Latency: time.Duration(id),
		}
		out := AppendRecord(nil, &r)
		if err := p.Parse(out[:len(out)-1], &e); err != nil {
			t.Fatalf("Parse(AppendRecord(%q)) = %v: %q", name, err, out)
		}
		if string(e.Args) != "("+r.Args+")" || e.UID != id || e.Time != r.Time.Truncate(time.Microsecond).UnixNano() {
			t.Fatalf("round trip of %q: got %+v from %q", name, e, out)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "juicefs", "accesslog-sample.txt"))
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(data), []byte("\n"))
	p := NewParser(time.Local)
	var e Entry
	b.SetBytes(int64(len(data)) / int64(len(lines)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := p.Parse(lines[i%len(lines)], &e); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseRest(t *testing.T) {
	for _, c := range []struct{ line, rest string }{
		{`2026.11.21 21:03:18.394177 [uid:0,gid:0,pid:22645] read (3,512,0,9): 512 - OK <0.000002>`, ": 512"},
		{`2026.11.21 21:03:18.400355 [uid:0,gid:0,pid:22645] create (2,a,-rw-r--r--:0100644): (3,[-rw-r--r--:0100644,1,0,0,1,1,1,0]) [fh:10] - OK <0.005066>`, ": (3,[-rw-r--r--:0100644,1,0,0,1,1,1,0]) [fh:10]"},
		{`2026.11.21 21:03:16.145973 [uid:0,gid:0,pid:22642] open (5,0x8000) [fh:7] - OK <0.000039>`, " [fh:7]"},
		{`2026.11.21 21:03:32.919442 [uid:0,gid:0,pid:22682] unlink (2,smallfile.1.40) - OK <0.000184>`, ""},
		{`2026.11.21 21:03:17.175294 [uid:0,gid:0,pid:22645] lookup (1,x): no such file or directory <0.000161>`, ""},
	} {
		var e Entry
		if err := NewParser(nil).Parse([]byte(c.line), &e); err != nil {
			t.Fatalf("%s: %v", c.line, err)
		}
		if string(e.Rest) != c.rest {
			t.Errorf("%s: rest %q, want %q", c.line, e.Rest, c.rest)
		}
	}
}

// TestSeconds: a latency of any number of fraction digits, those below a
// nanosecond dropped, and what is not one.
func TestSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"0.000010": 10 * time.Microsecond, "1.5": 1500 * time.Millisecond, "12": 12 * time.Second,
		"2.123456789": 2123456789, "2.1234567891": 2123456789, "0.0000000019": 1,
	} {
		if got, ok := seconds([]byte(in)); !ok || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "1.", ".5", "0.1x", "1.2.3", "1234567890.0"} {
		if got, ok := seconds([]byte(in)); ok {
			t.Errorf("%q: %v, want no latency", in, got)
		}
	}
}
