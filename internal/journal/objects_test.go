package journal

import (
	"bytes"
	"context"
	"io/fs"
	"path/filepath"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// bucket is a Target of objects held in memory.
type bucket map[string][]byte

func (b bucket) Open(_ context.Context, key string) (Object, error) {
	d, ok := b[key]
	if !ok {
		return nil, fs.ErrNotExist
	}
	return &memObject{bytes.NewReader(d)}, nil
}

type memObject struct{ *bytes.Reader }

func (m *memObject) Close() error { return nil }

// content is the bytes of an object: its key's first byte, repeated.
func content(key string, n int) []byte { return bytes.Repeat([]byte{key[len(key)-1]}, n) }

// TestObjects: puts and deletes journalled as acknowledged, each durable at
// once; a delete that failed leaves its object unchecked.
func TestObjects(t *testing.T) {
	path := filepath.Join(t.TempDir(), "j")
	w, err := CreateObjects(path, "minio", "http://127.0.0.1:9000/b", 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	b := bucket{}
	for i, key := range []string{"p/a", "p/b", "p/c", "p/d", "p/e"} {
		b[key] = content(key, 5000+i)
		w.Put(i%2, key, int64(len(b[key])), func(p []byte, _ int64) { copy(p, b[key]) }, time.Now())
	}
	w.Deleted(0, "p/d", time.Now(), true)
	delete(b, "p/d")
	w.Deleted(1, "p/e", time.Now(), false) // failed: may be there or not
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	j, err := ReadFile(path)
	if err != nil || !j.Objects() || j.Storage != "minio" || j.Header.Root != "http://127.0.0.1:9000/b" {
		t.Fatalf("read: %v %+v", err, j)
	}
	s, err := Verify(context.Background(), j, b)
	if err != nil || s.Failed() != 0 || s.Writes != 3 || s.Unsynced != 0 {
		t.Fatalf("intact: %v %s", err, s.Line())
	}
	delete(b, "p/a")
	b["p/b"] = b["p/b"][:4096]
	b["p/c"] = append(b["p/c"], 'x')
	b["p/d"] = []byte("back")
	s, _ = Verify(context.Background(), j, b)
	if s.Lost != 1 || s.Torn != 1 || s.Unexpected != 2 || s.Failed() != 4 {
		t.Fatalf("planted: %s %+v", s.Line(), s.Findings)
	}
	if want := "verify: LOST WRITES: 0 of 3 durable writes held (1 lost, 0 stale, 1 torn, 2 unexpected) in 4 objects; no unsynced tail"; s.Line() != want {
		t.Errorf("line:\n%s\nwant\n%s", s.Line(), want)
	}
}

// TestPutReusesItsPiece: fingerprinting a put generates its content again
// in a buffer that is reused, not made anew (4 KiB a put) for each.
func TestPutReusesItsPiece(t *testing.T) {
	w, err := CreateObjects(filepath.Join(t.TempDir(), "j"), "minio", "http://127.0.0.1:9000/b", 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fill := func(p []byte, off int64) { p[0] = byte(off) }
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "obj/" + strconv.Itoa(i)
	}
	w.Put(0, "warm", 4096, fill, time.Now())
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for _, k := range keys {
		w.Put(0, k, 4096, fill, time.Now())
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / uint64(len(keys)); per > 1024 {
		t.Errorf("%d bytes allocated a put of 4 KiB", per)
	}
}
