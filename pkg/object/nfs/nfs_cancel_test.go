package nfs_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/storetest"
)

// nfsCancelStore opens a fresh directory of the shared test server.
func nfsCancelStore(t *testing.T) (object.Storage, string) {
	n := testenv.SharedNFS(t)
	dir := filepath.Join(n.Export, "cancel-"+strings.ReplaceAll(t.Name(), "/", "-"))
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return storetest.Open(t, "nfs", n.URL(strings.TrimPrefix(dir, n.Export)), object.Config{Timeout: 5 * time.Second}), dir
}

// watchedReader yields size bytes and records any read after its owner
// said the call using it returned. It is unsynchronised on purpose: a
// driver that reads it from a goroutine of its own, unordered with the
// return of its method, is a data race that -race reports.
type watchedReader struct {
	off      int64
	size     int64
	returned bool
	late     int // reads after return
	onRead   func(total int64)
	total    int64 // bytes handed out
}

func (r *watchedReader) Read(p []byte) (int, error) {
	if r.returned {
		r.late++
	}
	if r.off >= r.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.size-r.off))
	for i := range p[:n] {
		p[i] = byte(r.off + int64(i))
	}
	r.off += int64(n)
	r.total += int64(n)
	if r.onRead != nil {
		r.onRead(r.total)
	}
	return n, nil
}

func (r *watchedReader) Seek(off int64, whence int) (int64, error) {
	if r.returned {
		r.late++
	}
	switch whence {
	case io.SeekStart:
		r.off = off
	case io.SeekCurrent:
		r.off += off
	case io.SeekEnd:
		r.off = r.size + off
	}
	return r.off, nil
}

// A Put cancelled while it writes returns with the context's error, has
// stopped reading the caller's data by then, and leaves no file behind;
// the store works again afterwards.
func TestNFSCancelPut(t *testing.T) {
	s, dir := nfsCancelStore(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	r := &watchedReader{size: 1 << 30}
	// Cancel from another goroutine, so that it lands while a WRITE is in
	// flight rather than between two of them.
	r.onRead = func(total int64) {
		if total >= 16<<20 {
			once.Do(func() { go cancel() })
		}
	}
	err := s.Put(ctx, "big", r)
	r.returned = true
	read := r.total
	// Checked at once: the temporary file is removed before Put returns.
	ents, _ := os.ReadDir(dir)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Put: %v, want context.Canceled", err)
	}
	if read >= r.size {
		t.Fatalf("Put read all %d bytes: not cancelled mid-way", read)
	}
	if len(ents) != 0 {
		t.Errorf("when a cancelled Put returned the directory held %v", ents)
	}
	time.Sleep(300 * time.Millisecond) // room for a wrongly running writer
	if r.late != 0 {
		t.Errorf("the data was read %d times after Put returned", r.late)
	}
	checkWorks(t, s)
}

// A Get whose context is cancelled while its body is read stops with the
// context's error; the store works again afterwards.
func TestNFSCancelGet(t *testing.T) {
	s, _ := nfsCancelStore(t)
	const size = 64 << 20
	if err := s.Put(context.Background(), "big", &watchedReader{size: size}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body, err := s.Get(ctx, "big", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer body.Close()
	var once sync.Once
	w := &cancellingWriter{after: 8 << 20, cancel: func() { once.Do(func() { go cancel() }) }}
	n, err := io.Copy(w, body)
	if !errors.Is(err, context.Canceled) || n >= size {
		t.Fatalf("cancelled Get: %d bytes, %v; want fewer than %d and context.Canceled", n, err, size)
	}
	if _, err := body.Read(make([]byte, 10)); !errors.Is(err, context.Canceled) {
		t.Errorf("Read after cancellation: %v, want context.Canceled", err)
	}
	checkWorks(t, s)
}

type cancellingWriter struct {
	n, after int64
	cancel   func()
}

func (w *cancellingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if w.n >= w.after {
		w.cancel()
	}
	return len(p), nil
}

// checkWorks puts, reads back and deletes an object.
func checkWorks(t *testing.T, s object.Storage) {
	t.Helper()
	ctx := context.Background()
	if err := s.Put(ctx, "after/ok", strings.NewReader("fine")); err != nil {
		t.Fatalf("Put after cancellation: %v", err)
	}
	body, err := s.Get(ctx, "after/ok", 0, -1)
	if err != nil {
		t.Fatalf("Get after cancellation: %v", err)
	}
	b, err := io.ReadAll(body)
	body.Close()
	if err != nil || string(b) != "fine" {
		t.Fatalf("Get after cancellation = %q, %v", b, err)
	}
	for _, k := range []string{"after/ok", "after/", "big"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Errorf("Delete %s: %v", k, err)
		}
	}
}
