// Package objecttest is the conformance suite of pkg/object: one set of
// tests that every driver must pass, in the manner of testing/fstest.
//
// It serves tests only, and tests a driver through pkg/object's interface
// alone.
package objecttest

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
)

// Run runs the suite against s, which must be empty: a fresh bucket or a
// unique prefix (see object.WithPrefix). The suite deletes what it puts.
func Run(t *testing.T, s object.Storage) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := s.Create(ctx); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if err := s.Create(ctx); err != nil {
		t.Fatalf("Create twice: %v", err)
	}
	t.Cleanup(func() { removeAll(t, s) })

	t.Run("PutGet", func(t *testing.T) { testPutGet(ctx, t, s) })
	t.Run("Missing", func(t *testing.T) { testMissing(ctx, t, s) })
	t.Run("Ranges", func(t *testing.T) { testRanges(ctx, t, s) })
	t.Run("Overwrite", func(t *testing.T) { testOverwrite(ctx, t, s) })
	t.Run("Empty", func(t *testing.T) { testEmpty(ctx, t, s) })
	t.Run("SpecialKey", func(t *testing.T) { testSpecialKey(ctx, t, s) })
	t.Run("List", func(t *testing.T) { testList(ctx, t, s) })
	t.Run("Delimiter", func(t *testing.T) { testDelimiter(ctx, t, s) })
	t.Run("Multipart", func(t *testing.T) { testMultipart(ctx, t, s) })
	t.Run("FileSystem", func(t *testing.T) { testFileSystem(ctx, t, s) })
	t.Run("Canceled", func(t *testing.T) { testCanceled(t, s) })
}

func put(ctx context.Context, t *testing.T, s object.Storage, key string, data []byte) {
	t.Helper()
	if err := s.Put(ctx, key, bytes.NewReader(data)); err != nil {
		t.Fatalf("Put %q: %v", key, err)
	}
}

func get(ctx context.Context, s object.Storage, key string, off, limit int64) ([]byte, error) {
	r, err := s.Get(ctx, key, off, limit)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

func random(n int) []byte {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return b
}

func testPutGet(ctx context.Context, t *testing.T, s object.Storage) {
	data := random(300 << 10)
	put(ctx, t, s, "putget", data)
	got, err := get(ctx, s, "putget", 0, -1)
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("Get returned %d bytes that differ from the %d put", len(got), len(data))
	}
	o, err := s.Head(ctx, "putget")
	if err != nil {
		t.Fatalf("Head: %v", err)
	}
	if o.Key != "putget" || o.Size != int64(len(data)) || o.IsDir {
		t.Errorf("Head = %+v, want key putget, size %d, not a directory", o, len(data))
	}
	if d := time.Since(o.Mtime); d < -time.Minute || d > time.Minute {
		t.Errorf("Head mtime %v is %v from now", o.Mtime, d)
	}
	// Keys in subdirectories.
	put(ctx, t, s, "a/b/c", []byte("deep"))
	if got, err := get(ctx, s, "a/b/c", 0, -1); err != nil || string(got) != "deep" {
		t.Errorf("Get a/b/c = %q, %v; want deep", got, err)
	}
	for _, k := range []string{"putget", "a/b/c"} {
		if err := s.Delete(ctx, k); err != nil {
			t.Errorf("Delete %s: %v", k, err)
		}
	}
	if _, err := s.Head(ctx, "putget"); !errors.Is(err, object.ErrNotExist) {
		t.Errorf("Head after Delete: err = %v, want ErrNotExist", err)
	}
}

func testMissing(ctx context.Context, t *testing.T, s object.Storage) {
	if _, err := get(ctx, s, "no-such-key", 0, -1); !errors.Is(err, object.ErrNotExist) {
		t.Errorf("Get missing: err = %v, want ErrNotExist", err)
	}
	_, err := s.Head(ctx, "no-such-key")
	if !errors.Is(err, object.ErrNotExist) {
		t.Errorf("Head missing: err = %v, want ErrNotExist", err)
	}
	if err != nil && !strings.Contains(err.Error(), "no-such-key") {
		t.Errorf("error %q does not name the key", err)
	}
	if err := s.Delete(ctx, "no-such-key"); err != nil {
		t.Errorf("Delete missing: %v", err)
	}
}

func testRanges(ctx context.Context, t *testing.T, s object.Storage) {
	put(ctx, t, s, "range", []byte("hello"))
	defer s.Delete(ctx, "range")
	for _, c := range []struct {
		off, limit int64
		want       string
	}{
		{0, -1, "hello"}, {0, 5, "hello"}, {0, 1, "h"}, {4, 1, "o"}, {2, 3, "llo"}, {2, 2, "ll"}, {2, -1, "llo"},
		{4, 2, "o"}, // the end past the object is cut short
	} {
		got, err := get(ctx, s, "range", c.off, c.limit)
		if err != nil || string(got) != c.want {
			t.Errorf("Get(off %d, limit %d) = %q, %v; want %q", c.off, c.limit, got, err, c.want)
		}
	}
}

func testOverwrite(ctx context.Context, t *testing.T, s object.Storage) {
	put(ctx, t, s, "over", []byte("first version, longer"))
	put(ctx, t, s, "over", []byte("second"))
	defer s.Delete(ctx, "over")
	if got, err := get(ctx, s, "over", 0, -1); err != nil || string(got) != "second" {
		t.Errorf("after overwrite Get = %q, %v; want second", got, err)
	}
}

func testEmpty(ctx context.Context, t *testing.T, s object.Storage) {
	put(ctx, t, s, "empty", nil)
	defer s.Delete(ctx, "empty")
	got, err := get(ctx, s, "empty", 0, -1)
	if err != nil || len(got) != 0 {
		t.Errorf("Get empty = %q, %v", got, err)
	}
	if o, err := s.Head(ctx, "empty"); err != nil || o.Size != 0 {
		t.Errorf("Head empty = %+v, %v", o, err)
	}
}

// specialKey has non-ASCII letters, JSON punctuation, a control character
// and percent signs: what breaks URL and XML encoding.
const specialKey = "测试编码文件{\"name\":\"fsbench\"}\u001f%uFF081%uFF09 +&=?.jpg"

func testSpecialKey(ctx context.Context, t *testing.T, s object.Storage) {
	put(ctx, t, s, specialKey, []byte("1"))
	defer s.Delete(ctx, specialKey)
	if got, err := get(ctx, s, specialKey, 0, -1); err != nil || string(got) != "1" {
		t.Fatalf("Get special key = %q, %v", got, err)
	}
	page, err := s.List(ctx, object.ListOptions{Prefix: "测试"})
	if err != nil {
		t.Fatalf("List special key: %v", err)
	}
	if len(page.Objects) != 1 || page.Objects[0].Key != specialKey {
		t.Errorf("List special key = %+v, want [%q]", page.Objects, specialKey)
	}
}

// files drops directory entries, which file-system stores list and
// object stores do not.
func files(objs []object.Object) []string {
	var out []string
	for _, o := range objs {
		if !o.IsDir {
			out = append(out, o.Key)
		}
	}
	return out
}

func testList(ctx context.Context, t *testing.T, s object.Storage) {
	var want []string
	for i := range 25 {
		k := fmt.Sprintf("list/k%02d", i)
		if i%5 == 0 {
			k = fmt.Sprintf("list/sub%d/x", i)
		}
		put(ctx, t, s, k, []byte{byte(i)})
		want = append(want, k)
	}
	defer func() {
		for _, k := range want {
			s.Delete(ctx, k)
		}
	}()
	sort.Strings(want)
	// All in one page.
	page, err := s.List(ctx, object.ListOptions{Prefix: "list/"})
	if err != nil {
		t.Fatalf("List: %v", err)
	}
	if got := files(page.Objects); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("List = %v\nwant %v", got, want)
	}
	if page.Truncated {
		t.Errorf("List of everything is truncated")
	}
	for _, o := range page.Objects {
		if !o.IsDir && o.Size != 1 {
			t.Errorf("List: %s has size %d, want 1", o.Key, o.Size)
		}
	}
	// Pages of 7, following Next.
	var got []string
	opt := object.ListOptions{Prefix: "list/", Limit: 7}
	for i := 0; ; i++ {
		if i > 20 {
			t.Fatalf("paging does not end")
		}
		page, err := s.List(ctx, opt)
		if err != nil {
			t.Fatalf("List page %d: %v", i, err)
		}
		if n := len(page.Objects) + len(page.Prefixes); n > 7 {
			t.Fatalf("page of %d entries, limit 7", n)
		}
		got = append(got, files(page.Objects)...)
		if !page.Truncated {
			break
		}
		if page.Next == "" {
			t.Fatalf("truncated page without Next")
		}
		opt.StartAfter = page.Next
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("paged List = %v\nwant %v", got, want)
	}
	// StartAfter skips keys up to and including it.
	page, err = s.List(ctx, object.ListOptions{Prefix: "list/", StartAfter: "list/k13"})
	if err != nil {
		t.Fatalf("List StartAfter: %v", err)
	}
	var after []string
	for _, k := range want {
		if k > "list/k13" {
			after = append(after, k)
		}
	}
	if got := files(page.Objects); strings.Join(got, ",") != strings.Join(after, ",") {
		t.Errorf("List StartAfter = %v\nwant %v", got, after)
	}
	// A prefix that matches nothing.
	page, err = s.List(ctx, object.ListOptions{Prefix: "list/nothing"})
	if err != nil || len(page.Objects) != 0 {
		t.Errorf("List of an unused prefix = %+v, %v", page, err)
	}
}

func testDelimiter(ctx context.Context, t *testing.T, s object.Storage) {
	keys := []string{"dl/a", "dl/b/1", "dl/b/2", "dl/c/3", "dl/d"}
	for _, k := range keys {
		put(ctx, t, s, k, []byte("x"))
	}
	defer func() {
		for _, k := range keys {
			s.Delete(ctx, k)
		}
	}()
	page, err := s.List(ctx, object.ListOptions{Prefix: "dl/", Delimiter: "/"})
	if err != nil {
		t.Fatalf("List with delimiter: %v", err)
	}
	if got := strings.Join(files(page.Objects), ","); got != "dl/a,dl/d" {
		t.Errorf("objects = %s, want dl/a,dl/d", got)
	}
	if got := strings.Join(page.Prefixes, ","); got != "dl/b/,dl/c/" {
		t.Errorf("prefixes = %s, want dl/b/,dl/c/", got)
	}
}

func testMultipart(ctx context.Context, t *testing.T, s object.Storage) {
	m := object.AsMultipart(s)
	if m == nil {
		t.Skip("no multipart upload")
	}
	up, err := m.CreateMultipartUpload(ctx, "multi")
	if err != nil {
		t.Fatalf("CreateMultipartUpload: %v", err)
	}
	p1 := random(int(up.MinPartSize))
	p2 := []byte("tail")
	parts := make([]object.Part, 2)
	for i, d := range [][]byte{p1, p2} {
		parts[i], err = m.UploadPart(ctx, "multi", up.UploadID, i+1, bytes.NewReader(d))
		if err != nil {
			t.Fatalf("UploadPart %d: %v", i+1, err)
		}
	}
	if err := m.CompleteUpload(ctx, "multi", up.UploadID, parts); err != nil {
		t.Fatalf("CompleteUpload: %v", err)
	}
	defer s.Delete(ctx, "multi")
	got, err := get(ctx, s, "multi", 0, -1)
	if err != nil || !bytes.Equal(got, append(p1, p2...)) {
		t.Fatalf("Get of the multipart object: %d bytes, %v", len(got), err)
	}
	// An aborted upload leaves no object.
	up, err = m.CreateMultipartUpload(ctx, "aborted")
	if err != nil {
		t.Fatalf("CreateMultipartUpload: %v", err)
	}
	if _, err := m.UploadPart(ctx, "aborted", up.UploadID, 1, bytes.NewReader(p2)); err != nil {
		t.Fatalf("UploadPart: %v", err)
	}
	if err := m.AbortUpload(ctx, "aborted", up.UploadID); err != nil {
		t.Fatalf("AbortUpload: %v", err)
	}
	if _, err := s.Head(ctx, "aborted"); !errors.Is(err, object.ErrNotExist) {
		t.Errorf("Head of an aborted upload: %v, want ErrNotExist", err)
	}
}

func testFileSystem(ctx context.Context, t *testing.T, s object.Storage) {
	f := object.AsFileSystem(s)
	if f == nil {
		t.Skip("no file attributes")
	}
	put(ctx, t, s, "attr", []byte("x"))
	defer s.Delete(ctx, "attr")
	if err := f.Chmod(ctx, "attr", 0o640); err != nil {
		t.Fatalf("Chmod: %v", err)
	}
	mtime := time.Date(2020, 2, 29, 12, 0, 0, 0, time.UTC)
	if err := f.Chtimes(ctx, "attr", mtime); err != nil {
		t.Fatalf("Chtimes: %v", err)
	}
	if err := f.Chown(ctx, "attr", os.Getuid(), os.Getgid()); err != nil {
		t.Fatalf("Chown: %v", err)
	}
	o, err := s.Head(ctx, "attr")
	if err != nil {
		t.Fatalf("Head: %v", err)
	}
	if o.Mode.Perm() != 0o640 {
		t.Errorf("mode after Chmod = %v, want -rw-r-----", o.Mode)
	}
	if !o.Mtime.Equal(mtime) {
		t.Errorf("mtime after Chtimes = %v, want %v", o.Mtime, mtime)
	}
	if o.UID != os.Getuid() || o.GID != os.Getgid() {
		t.Errorf("owner after Chown = %d:%d, want %d:%d", o.UID, o.GID, os.Getuid(), os.Getgid())
	}
	if err := f.Chmod(ctx, "no-such-key", 0o644); !errors.Is(err, object.ErrNotExist) {
		t.Errorf("Chmod missing: %v, want ErrNotExist", err)
	}
}

func testCanceled(t *testing.T, s object.Storage) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Put(ctx, "canceled", bytes.NewReader([]byte("x")))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Put with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := s.Head(ctx, "canceled"); !errors.Is(err, context.Canceled) {
		t.Errorf("Head with a cancelled context: %v, want context.Canceled", err)
	}
}

// removeAll deletes every key under s (it is the suite's own prefix),
// deepest first so that directories are empty when removed.
func removeAll(t *testing.T, s object.Storage) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var keys []string
	opt := object.ListOptions{}
	for range 1000 {
		page, err := s.List(ctx, opt)
		if err != nil {
			t.Errorf("cleanup: %v", err)
			return
		}
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		if !page.Truncated {
			break
		}
		opt.StartAfter = page.Next
	}
	for i := len(keys) - 1; i >= 0; i-- {
		if err := s.Delete(ctx, keys[i]); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	}
}
