package replay

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapFile writes data to a file and maps it as ReadLog does.
func mapFile(t *testing.T, data []byte) (*os.File, []byte) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "log")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	m, ok := mapLog(f)
	if !ok {
		t.Fatal("a plain log was not mapped")
	}
	return f, m
}

// traceStrings are the strings a trace holds.
func traceStrings(tr *Trace) []string {
	s := []string{tr.Format}
	for _, c := range tr.Classes {
		s = append(s, c.Name)
	}
	for _, e := range append(append([]Entry(nil), tr.Initial...), tr.Implied...) {
		s = append(s, e.Path)
	}
	s = append(s, tr.paths...)
	for k := range tr.Skipped.Unsupported {
		s = append(s, k)
	}
	return s
}

// TestLoadKeepsNoText: a mapped log is unmapped once read, so the trace
// may hold no string over its text; and it gives the trace that the same
// log read into memory gives.
func TestLoadKeepsNoText(t *testing.T) {
	n := 0
	for name, data := range goldenLogs(t) {
		for _, part := range []struct{ part, parts int }{{0, 1}, {1, 2}} {
			_, m := mapFile(t, data)
			tr, err := loadMapped(m, part.part, part.parts, nil)
			lo, hi := uintptr(unsafe.Pointer(&m[0])), uintptr(unsafe.Pointer(&m[0]))+uintptr(len(m))
			for _, s := range traceStrings(tr) {
				if p := uintptr(unsafe.Pointer(unsafe.StringData(s))); len(s) > 0 && p >= lo && p < hi {
					t.Errorf("%s: the trace keeps %q over the log's text", name, s)
				}
				n += len(s)
			}
			got := dumpTrace(tr, err)
			if err := unix.Munmap(m); err != nil {
				t.Fatal(err)
			}
			if want := dumpTrace(loadPart(bytes.Clone(data), part.part, part.parts)); got != want {
				t.Fatalf("%s %d/%d: mapped, the log gives another trace", name, part.part, part.parts)
			}
		}
	}
	if n < 1000 {
		t.Fatalf("the traces hold %d bytes of strings", n)
	}
}

// TestLoadTruncatedWhileRead: a mapped log cut short by another program
// while it is read is an error, not a crash on the pages past its end.
func TestLoadTruncatedWhileRead(t *testing.T) {
	f, m := mapFile(t, genLog(FormatJuiceFS, 5000))
	defer unix.Munmap(m)
	if err := f.Truncate(0); err != nil {
		t.Fatal(err)
	}
	tr, err := loadMapped(m, 0, 1, nil)
	if !errors.Is(err, errChanged) || tr != nil {
		t.Fatalf("load of a log truncated while mapped: %v, %v", tr, err)
	}
}

// TestLoadLongLines: an entry longer than a rec's spans reach is read in
// full all the same, in its place among the others; one longer than
// maxLine is malformed.
func TestLoadLongLines(t *testing.T) {
	long := "/d/" + strings.Repeat("n", 70_000)
	tr, err := Load(strings.NewReader(strings.Join([]string{
		"2026.11.21 21:03:17.000001 [uid:0,gid:0,pid:7] stat (/d) - OK <0.000100>",
		"2026.11.21 21:03:17.000003 [uid:0,gid:0,pid:7] stat (" + long + ") - OK <0.000300>",
		"2026.11.21 21:03:17.000002 [uid:0,gid:0,pid:7] write (/d/x,4096,0): 4096 - OK <0.000200>",
		"2026.11.21 21:03:17.000004 [uid:0,gid:0,pid:7] stat (/d/" + strings.Repeat("m", maxLine) + ") - OK <0.000100>",
	}, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	ops := tr.Streams[0].Ops
	if tr.Skipped.Malformed != 1 || len(ops) != 3 || tr.paths[ops[2].path] != long ||
		// The long one started first: 300 us before its end, 3 us in.
		ops[2].Start != 0 || ops[0].Start != int64(198*time.Microsecond) ||
		tr.Classes[ops[2].class].Name != "stat" || ops[1].act != actWrite {
		t.Fatalf("skipped %+v, %d ops, the long one %+v", tr.Skipped, len(ops), ops[len(ops)-1])
	}
}

// TestLoadingHook: a replay's Loading hook learns the log's size as its
// load begins, and how much of it is read, all of it once it is loaded;
// from a file and from standard input alike.
func TestLoadingHook(t *testing.T) {
	data, err := os.ReadFile(sampleLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []Options{{Log: sampleLog}, {Log: StdinLog, Stdin: bytes.NewReader(data)}} {
		var size int64 = -1
		var read func() int64
		o.Hooks.Loading = func(s int64, r func() int64) { size, read = s, r }
		tr, err := o.loadLog(context.Background())
		if err != nil || tr.Ops() == 0 {
			t.Fatalf("%s: %v", o.Log, err)
		}
		if size != int64(len(data)) || read == nil || read() != size {
			t.Errorf("%s: size %d, want %d; a reader: %v", o.Log, size, len(data), read != nil)
		}
	}
}
