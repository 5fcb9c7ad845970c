package journal

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/workload"
)

// FuzzRead feeds Read any bytes, seeded with real journals whole and cut:
// it returns a journal or an error, never panics, and what it reads
// verifies (against an empty directory) without panicking either.
func FuzzRead(f *testing.F) {
	r := newRun(f)
	r.write("a", 100, random(9000))
	r.write("a", 9100, random(9000)) // a Next record
	r.event("fsync", "a")
	r.w.Flush()
	r.write("a", 0, random(10))
	r.w.Trace(1, workload.Event{Op: "rename", Path: r.path("a"), To: r.path("b"), Start: time.Now()})
	r.event("unlink", "b")
	r.w.Close()
	whole, _ := os.ReadFile(r.w.f.Name())
	f.Add(whole)
	f.Add(whole[:len(whole)-5])
	f.Add([]byte(Magic))
	f.Fuzz(func(t *testing.T, b []byte) {
		j, err := Read(bytes.NewReader(b))
		if err != nil {
			return
		}
		if _, err := Verify(context.Background(), j, Dir(t.TempDir())); err != nil {
			t.Fatal(err)
		}
	})
}
