package accesslog

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/workload"
)

// The metadata operations of workload phases make lines that parse back:
// rename with both paths, the others with one.
func TestWriterWorkloadOps(t *testing.T) {
	var out bytes.Buffer
	w := New(&out, 1)
	t0 := time.Date(2026, 11, 21, 21, 3, 18, 0, time.Local)
	w.Trace(0, workload.Event{Op: "rename", Path: "/r/d1/f01", To: "/r/d1/f01.renamed", Start: t0, Dur: time.Microsecond})
	for _, op := range []string{"chmod", "utime", "readdir", "open", "mkdir", "rmdir"} {
		w.Trace(0, workload.Event{Op: op, Path: "/r/d1/f01", Start: t0, Dur: time.Microsecond})
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 7 {
		t.Fatalf("%d lines:\n%s", len(lines), out.String())
	}
	p := NewParser(time.Local)
	for i, l := range lines {
		var e Entry
		if err := p.Parse([]byte(l), &e); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		if i == 0 && (string(e.Op) != "rename" || string(e.Args) != "(/r/d1/f01,/r/d1/f01.renamed)") {
			t.Errorf("rename line: op %s args %s", e.Op, e.Args)
		}
	}
}
