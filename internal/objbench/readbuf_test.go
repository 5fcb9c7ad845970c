package objbench

import (
	"context"
	"io"
	"testing"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/pattern"
)

// widest is a reader of the content of one key that remembers the largest
// read it was asked for.
type widest struct {
	pat  *pattern.Pattern
	id   uint64
	off  int64
	size int64
	max  int
}

func (r *widest) Read(p []byte) (int, error) {
	r.max = max(r.max, len(p))
	if r.off == r.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.size-r.off))
	r.pat.Fill(p[:n], r.id, r.off)
	r.off += int64(n)
	return n, nil
}

// A download reads at most readChunk bytes at a time into the thread's
// 1 MiB buffer, so the pages past it are never touched by reads, and
// still checks every byte.
func TestDownloadReadsBounded(t *testing.T) {
	o := Defaults()
	r := &run{o: o, pat: pattern.New(7), eng: engine.New(1)}
	w := r.eng.Workers()[0]
	w.State = &thread{buf: make([]byte, maxBuffer)}
	const size = 3*readChunk + 5
	src := &widest{pat: r.pat, id: r.pat.ID("k"), size: size}
	var got int64
	var err error
	_, runErr := r.eng.Run(context.Background(), engine.Phase{Name: "get", Tasks: 1,
		Do: func(w *engine.Worker, _, _ int) error {
			s, _ := w.Begin()
			got, err = r.readChecked(w, s, src, "k", 0)
			return nil
		}})
	if runErr != nil || err != nil || got != size {
		t.Fatalf("read %d of %d bytes: %v %v", got, size, runErr, err)
	}
	if src.max != readChunk {
		t.Errorf("largest read %d bytes, want %d", src.max, readChunk)
	}
	src = &widest{pat: r.pat, id: r.pat.ID("other"), size: size}
	_, _ = r.eng.Run(context.Background(), engine.Phase{Name: "get", Tasks: 1,
		Do: func(w *engine.Worker, _, _ int) error {
			s, _ := w.Begin()
			_, err = r.readChecked(w, s, src, "k", 0)
			return nil
		}})
	if err == nil {
		t.Error("content of another key passed the check")
	}
}
