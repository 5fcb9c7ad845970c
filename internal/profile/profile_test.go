package profile

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/profile")

var (
	sampleFile = filepath.Join("..", "..", "testdata", "juicefs", "accesslog-sample.txt")
	goldenDir  = filepath.Join("..", "..", "testdata", "profile")
)

func readSample(t testing.TB) []byte {
	t.Helper()
	data, err := readSampleFile()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readSampleFile() ([]byte, error) { return os.ReadFile(sampleFile) }

func runOut(t *testing.T, in []byte, o Options) string {
	t.Helper()
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Source == "" {
		o.Source = "accesslog-sample.txt"
	}
	var out bytes.Buffer
	if err := Run(context.Background(), bytes.NewReader(in), &out, o); err != nil {
		t.Fatalf("Run: %v", err)
	}
	return out.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join(goldenDir, name)
	if *update {
		if err := os.MkdirAll(goldenDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("output differs from %s (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", path, got, want)
	}
}

// windows decodes JSON-lines output.
func windows(t *testing.T, out string) []Window {
	t.Helper()
	var ws []Window
	dec := json.NewDecoder(strings.NewReader(out))
	for {
		var w Window
		if err := dec.Decode(&w); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("decode %q: %v", out, err)
		}
		ws = append(ws, w)
	}
	return ws
}

func opsOf(w Window) map[string]OpStats {
	m := map[string]OpStats{}
	for _, s := range w.Operations {
		m[s.Op] = s
	}
	return m
}

func TestSummaryGolden(t *testing.T) {
	data := readSample(t)
	golden(t, "sample-summary.txt", runOut(t, data, Options{}))
	golden(t, "sample-summary.json", runOut(t, data, Options{JSON: true}))
	golden(t, "sample-summary-count-top3.txt", runOut(t, data, Options{Sort: SortCount, Top: 3}))
	golden(t, "sample-replay-5s.txt", runOut(t, data, Options{Interval: 5 * time.Second}))
}

func TestSummaryNumbers(t *testing.T) {
	ws := windows(t, runOut(t, readSample(t), Options{JSON: true}))
	if len(ws) != 1 {
		t.Fatalf("%d windows, want 1", len(ws))
	}
	w := ws[0]
	if w.Mode != ModeSummary || w.Lines != 550 || w.Entries != 550 || w.Skipped.Total() != 0 || !w.Last {
		t.Errorf("window = %+v", w)
	}
	want := map[string]int64{"create": 35, "flush": 36, "getattr": 104, "lookup": 42, "mkdir": 1, "open": 4, "read": 19,
		"release": 35, "releasedir": 1, "rmdir": 1, "unlink": 65, "write": 207}
	ops := opsOf(w)
	for op, n := range want {
		if ops[op].Count != n {
			t.Errorf("%s: count %d, want %d", op, ops[op].Count, n)
		}
	}
	if len(ops) != len(want) {
		t.Errorf("ops = %v", ops)
	}
	if l := ops["lookup"]; l.Errors != 41 {
		t.Errorf("lookup errors = %d, want 41", l.Errors)
	}
	// Span: first to last timestamp of the sample.
	if w.Start.Format(time.RFC3339Nano) != "2026-11-21T21:03:16.145973Z" || w.End.Format(time.RFC3339Nano) != "2026-11-21T21:03:33.002439Z" {
		t.Errorf("span %v - %v", w.Start, w.End)
	}
	c := ops["create"]
	if c.MaxUs != 9999 && c.MaxUs <= 0 || c.P50Us > c.P99Us || c.P99Us > c.MaxUs || c.AvgUs*float64(c.Count)-c.TotalUs > 1 {
		t.Errorf("create = %+v", c)
	}
	for i := 1; i < len(w.Operations); i++ {
		if w.Operations[i-1].TotalUs < w.Operations[i].TotalUs {
			t.Errorf("not sorted by total: %+v", w.Operations)
		}
	}
}

func TestFilters(t *testing.T) {
	data := readSample(t)
	tests := []struct {
		name   string
		f      Filter
		counts map[string]int64
	}{
		{"op", Filter{Ops: []string{"unlink", "mkdir"}}, map[string]int64{"unlink": 65, "mkdir": 1}},
		{"pid", Filter{PIDs: []uint32{0}}, map[string]int64{"release": 35, "releasedir": 1}},
		{"pid list and op", Filter{PIDs: []uint32{22645, 22647}, Ops: []string{"create"}}, map[string]int64{"create": 20}},
		{"uid none", Filter{UIDs: []uint32{1000}}, map[string]int64{}},
		{"gid", Filter{GIDs: []uint32{0}, Ops: []string{"rmdir"}}, map[string]int64{"rmdir": 1}},
		{"path", Filter{Path: "smallfile.1.4,"}, map[string]int64{"create": 1}},
		{"path and op", Filter{Path: "smallfile.1.4", Ops: []string{"unlink", "lookup"}}, map[string]int64{"unlink": 10, "lookup": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ws := windows(t, runOut(t, data, Options{JSON: true, Filter: tt.f}))
			ops := opsOf(ws[0])
			var total int64
			for op, n := range tt.counts {
				if ops[op].Count != n {
					t.Errorf("%s: %d, want %d", op, ops[op].Count, n)
				}
				total += n
			}
			if len(ops) != len(tt.counts) {
				t.Errorf("ops = %v", ops)
			}
			if ws[0].Entries != total || ws[0].Filtered != 550-total {
				t.Errorf("entries %d, filtered %d", ws[0].Entries, ws[0].Filtered)
			}
		})
	}
}

func TestSort(t *testing.T) {
	for _, key := range SortKeys {
		ws := windows(t, runOut(t, readSample(t), Options{JSON: true, Sort: key, Top: 4}))
		rows := ws[0].Operations
		if len(rows) != 4 {
			t.Fatalf("%s: %d rows, want 4", key, len(rows))
		}
		rows2 := append([]OpStats(nil), rows...)
		SortOps(rows2, key)
		for i := range rows {
			if rows[i].Op != rows2[i].Op {
				t.Errorf("%s: order %v", key, rows)
			}
		}
	}
	if err := Run(context.Background(), strings.NewReader(""), io.Discard, Options{Sort: "name"}); err == nil {
		t.Error("unknown sort accepted")
	}
}

// TestGarbled mixes damaged lines into the sample: they are counted, the
// good ones still are, and the run does not fail.
func TestGarbled(t *testing.T) {
	good := readSample(t)
	lines := strings.SplitAfter(string(good), "\n")
	var in strings.Builder
	in.WriteString("#\n\n")
	in.WriteString(lines[0])
	in.WriteString(lines[1][:40] + lines[2])                    // run together: both lost
	in.WriteString("\xff\xfe garbage\n")                        // not UTF-8
	in.WriteString(lines[3][:len(lines[3])-5] + "\n")           // truncated
	in.WriteString(strings.Repeat("x", 2*maxLine) + "\n")       // far too long
	in.WriteString("#\r\n")                                     // keep-alive, CRLF
	in.WriteString(strings.TrimSuffix(lines[4], "\n") + "\r\n") // CRLF entry
	in.WriteString(strings.TrimSuffix(lines[5], "\n"))          // no final newline
	ws := windows(t, runOut(t, []byte(in.String()), Options{JSON: true}))
	w := ws[0]
	want := Skipped{Blank: 1, KeepAlive: 2, Malformed: 3, NotUTF8: 1}
	if w.Skipped != want || w.Entries != 3 || w.Lines != 10 {
		t.Errorf("lines %d, entries %d, skipped %+v; want 10, 3, %+v", w.Lines, w.Entries, w.Skipped, want)
	}
	out := runOut(t, []byte(in.String()), Options{})
	if !strings.Contains(out, "7 skipped (3 malformed, 1 not UTF-8, 2 keep-alive, 1 blank)") {
		t.Errorf("table does not show the skipped lines:\n%s", out)
	}
}

func TestEmpty(t *testing.T) {
	for _, o := range []Options{{}, {Interval: time.Second}, {JSON: true}} {
		out := runOut(t, nil, o)
		if !strings.Contains(out, "no entries") && !strings.Contains(out, `"entries":0`) {
			t.Errorf("%+v: %q", o, out)
		}
	}
}

func TestGzip(t *testing.T) {
	data := readSample(t)
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	r, err := Decompress(bytes.NewReader(z.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), r, &out, Options{Location: time.UTC, Source: "accesslog-sample.txt"}); err != nil {
		t.Fatal(err)
	}
	if want := runOut(t, data, Options{}); out.String() != want {
		t.Errorf("gzip output differs:\n%s\nwant\n%s", out.String(), want)
	}
	if _, err := Decompress(bytes.NewReader([]byte{0x1f, 0x8b, 0})); err == nil {
		t.Error("broken gzip header accepted")
	}
}

// TestReplayWindows checks that replay windows follow the log's clock,
// hold every entry once, and skip gaps.
func TestReplayWindows(t *testing.T) {
	data := readSample(t)
	ws := windows(t, runOut(t, data, Options{JSON: true, Interval: 2 * time.Second}))
	var total int64
	for i, w := range ws {
		total += w.Entries
		if w.Seconds != 2 || w.Mode != ModeReplay {
			t.Errorf("window %d: %+v", i, w)
		}
		if i > 0 && (w.Start.Before(ws[i-1].End) || w.Start.Sub(ws[0].Start)%(2*time.Second) != 0) {
			t.Errorf("window %d starts at %v after %v", i, w.Start, ws[i-1].End)
		}
		if w.Last != (i == len(ws)-1) {
			t.Errorf("window %d: last = %v", i, w.Last)
		}
	}
	if total != 550 {
		t.Errorf("windows hold %d entries, want 550", total)
	}
	// The sample is quiet from 21:03:18.4 to 21:03:31.4 (writing): no empty
	// windows are shown for that gap... unless there are lines in it.
	for _, w := range ws {
		if w.Lines == 0 {
			t.Errorf("empty window %v", w.Start)
		}
	}
}

// TestReplayPaced paces a replay and pauses it.
func TestReplayPaced(t *testing.T) {
	data := readSample(t)
	pause := make(chan struct{})
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		done <- Run(context.Background(), bytes.NewReader(data), &out, Options{
			Interval: time.Second, Speed: 50, Pause: pause, Terminal: true, Location: time.UTC, Source: "s",
		})
	}()
	pause <- struct{}{} // pause at the first wait
	for !strings.Contains(out.String(), "Paused") {
		time.Sleep(10 * time.Millisecond)
	}
	n := strings.Count(out.String(), clearScreen)
	time.Sleep(100 * time.Millisecond)
	if m := strings.Count(out.String(), clearScreen); m != n {
		t.Errorf("replay went on while paused: %d screens, then %d", n, m)
	}
	pause <- struct{}{}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "[Enter] pause/continue") || !strings.Contains(s, "replay, 1 s windows, done") {
		t.Errorf("output:\n%s", s)
	}
	// Cancelling a paced replay stops it.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		done <- Run(ctx, bytes.NewReader(data), io.Discard, Options{Interval: time.Second, Speed: 0.001, Location: time.UTC})
	}()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-done; err != context.Canceled {
		t.Errorf("cancelled replay returned %v", err)
	}
}

func TestNoEscapesWhenNotTerminal(t *testing.T) {
	out := runOut(t, readSample(t), Options{Interval: 2 * time.Second, Color: true})
	if strings.Contains(out, "\x1b") {
		t.Errorf("escape sequences in plain output")
	}
	out = runOut(t, readSample(t), Options{Terminal: true, Color: true})
	if !strings.HasPrefix(out, clearScreen) || !strings.Contains(out, ansiTitle) {
		t.Errorf("terminal output does not clear and colour: %q", out[:40])
	}
}

// TestManyOps: a log of ever new operation names does not grow memory
// without bound; the names beyond maxOps count as malformed lines.
func TestManyOps(t *testing.T) {
	var in bytes.Buffer
	for i := 0; i < 3*maxOps; i++ {
		fmt.Fprintf(&in, "2026.11.21 21:03:17.175294 [uid:0,gid:0,pid:1] op%d (1) - OK <0.000001>\n", i)
	}
	for _, o := range []Options{{JSON: true}, {JSON: true, Interval: time.Second}} {
		w := windows(t, runOut(t, in.Bytes(), o))[0]
		if len(w.Operations) != maxOps || w.Entries != maxOps || w.Skipped.Malformed != 2*maxOps || w.Lines != 3*maxOps {
			t.Errorf("%d ops, %d entries, %d malformed, %d lines", len(w.Operations), w.Entries, w.Skipped.Malformed, w.Lines)
		}
	}
}

// TestNotAnAccessLog: a log read to its end whose lines are all of another
// format (strace's) is bad input, said in one line, in a summary and in
// windows alike; one entry among them, even filtered out, is a profile.
func TestNotAnAccessLog(t *testing.T) {
	strace := "2214  1764355131.982671 openat(AT_FDCWD</tmp>, \"a\", O_RDONLY) = 3</tmp/a> <0.000021>\n" +
		"2214  1764355131.982712 read(3</tmp/a>, \"x\", 4096) = 1 <0.000008>\n"
	for _, o := range []Options{{}, {Interval: time.Second}, {JSON: true}} {
		err := Run(context.Background(), strings.NewReader(strace), io.Discard, o)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "none of its 2 lines is an access-log entry") ||
			strings.Contains(err.Error(), "\n") {
			t.Errorf("%+v: %v", o, err)
		}
	}
	entry := strings.SplitAfter(string(readSample(t)), "\n")[0]
	for _, o := range []Options{{}, {Interval: time.Second}, {Filter: Filter{Ops: []string{"no-such-op"}}}} {
		if err := Run(context.Background(), strings.NewReader(strace+entry), io.Discard, o); err != nil {
			t.Errorf("%+v: one entry among other lines: %v", o, err)
		}
	}
}
