package nfs_test

import (
	"bytes"
	"context"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/storetest"
	"github.com/fsbench/fsbench/pkg/object/nfs"
)

// nfsFreshStore opens a new directory of the shared test server, removed
// at the end of the test.
func nfsFreshStore(t *testing.T, name string) (object.Storage, string) {
	t.Helper()
	n := testenv.SharedNFS(t)
	dir := filepath.Join(n.Export, name)
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return storetest.Open(t, "nfs", n.URL(name), object.Config{}), dir
}

// callsOf runs op and returns the NFS calls it made.
func callsOf(t *testing.T, s object.Storage, op func() error) map[string]int64 {
	t.Helper()
	before := nfs.Calls(s)
	if err := op(); err != nil {
		t.Fatal(err)
	}
	after := nfs.Calls(s)
	for k, v := range before {
		after[k] -= v
		if after[k] == 0 {
			delete(after, k)
		}
	}
	return after
}

// Each operation on a key in a directory already seen costs the round
// trips of its work and no more: no LOOKUP of the directories, no
// GETATTR after calls whose replies carry the attributes.
func TestNFSCallsPerOperation(t *testing.T) {
	s, _ := nfsFreshStore(t, "calls-per-op")
	ctx := context.Background()
	small := bytes.Repeat([]byte("s"), 128<<10)
	if err := s.Put(ctx, "d/first", bytes.NewReader(small)); err != nil {
		t.Fatal(err)
	}
	fsys := object.AsFileSystem(s)
	cases := []struct {
		name string
		op   func() error
		want map[string]int64
	}{
		{"put small", func() error { return s.Put(ctx, "d/k", bytes.NewReader(small)) },
			map[string]int64{"CREATE": 1, "WRITE": 1, "RENAME": 1}},
		{"get small", func() error { return readAll(ctx, s, "d/k", int64(len(small))) },
			map[string]int64{"LOOKUP": 1, "READ": 1}},
		{"head", func() error { _, err := s.Head(ctx, "d/k"); return err },
			map[string]int64{"LOOKUP": 1}},
		{"chmod", func() error { return fsys.Chmod(ctx, "d/k", 0o600) },
			map[string]int64{"LOOKUP": 1, "SETATTR": 1}},
		{"delete", func() error { return s.Delete(ctx, "d/k") },
			map[string]int64{"REMOVE": 1}},
	}
	for _, c := range cases {
		if got := callsOf(t, s, c.op); !maps.Equal(got, c.want) {
			t.Errorf("%s: calls %v, want %v", c.name, got, c.want)
		}
	}
	rsize, wsize := nfs.Sizes(s)
	t.Logf("rsize %d, wsize %d", rsize, wsize)
}

func readAll(ctx context.Context, s object.Storage, key string, size int64) error {
	rc, err := s.Get(ctx, key, 0, -1)
	if err != nil {
		return err
	}
	defer rc.Close()
	n, err := io.Copy(io.Discard, rc)
	if err == nil && n != size {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// The handles of directories are cached, and the cache forgets a
// directory when it is removed, by this client (no stale handle is tried)
// or by another (the stale handle is dropped and the call made again).
func TestNFSDirHandleCache(t *testing.T) {
	s, dir := nfsFreshStore(t, "dir-cache")
	ctx := context.Background()
	put := func(key string) map[string]int64 {
		return callsOf(t, s, func() error { return s.Put(ctx, key, strings.NewReader("v-"+key)) })
	}
	newDir := map[string]int64{"LOOKUP": 1, "MKDIR": 1, "CREATE": 1, "WRITE": 1, "RENAME": 1}
	cached := map[string]int64{"CREATE": 1, "WRITE": 1, "RENAME": 1}
	if got := put("d/a"); !maps.Equal(got, newDir) {
		t.Errorf("first put in a new directory: calls %v, want %v", got, newDir)
	}
	if got := put("d/b"); !maps.Equal(got, cached) {
		t.Errorf("second put in the directory: calls %v, want %v", got, cached)
	}
	for _, k := range []string{"d/a", "d/b", "d/"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Fatalf("delete %s: %v", k, err)
		}
	}
	if got := put("d/c"); !maps.Equal(got, newDir) {
		t.Errorf("put after the directory was deleted: calls %v, want %v (the removed directory's handle was used)", got, newDir)
	}
	// Removed and made again by another client.
	other := storetest.Open(t, "nfs", testenv.SharedNFS(t).URL(filepath.Base(dir)), object.Config{})
	for _, k := range []string{"d/c", "d/"} {
		if err := other.Delete(ctx, k); err != nil {
			t.Fatalf("delete %s by another client: %v", k, err)
		}
	}
	if err := other.Put(ctx, "d/x", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, "d/e", strings.NewReader("v-d/e")); err != nil {
		t.Fatalf("put after another client replaced the directory: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "d", "e")); err != nil || string(b) != "v-d/e" {
		t.Errorf("d/e on the server: %q, %v", b, err)
	}
}

// An object larger than one WRITE goes as UNSTABLE writes and one COMMIT
// before it is renamed into place, and another client reads it back
// whole.
func TestNFSUnstableWritesCommitted(t *testing.T) {
	s, dir := nfsFreshStore(t, "unstable")
	ctx := context.Background()
	_, wsize := nfs.Sizes(s)
	data := make([]byte, 2*wsize+123)
	for i := range data {
		data[i] = byte(i*7 + i>>12)
	}
	got := callsOf(t, s, func() error { return s.Put(ctx, "big", bytes.NewReader(data)) })
	want := map[string]int64{"CREATE": 1, "WRITE": 3, "COMMIT": 1, "RENAME": 1}
	if !maps.Equal(got, want) {
		t.Errorf("put of %d bytes with wsize %d: calls %v, want %v", len(data), wsize, got, want)
	}
	n := testenv.SharedNFS(t)
	fresh := storetest.Open(t, "nfs", n.URL(filepath.Base(dir)), object.Config{})
	rc, err := fresh.Get(ctx, "big", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	back, err := io.ReadAll(rc)
	rc.Close()
	if err != nil || !bytes.Equal(back, data) {
		t.Errorf("a fresh client read %d bytes (%v), want the %d written", len(back), err, len(data))
	}
}
