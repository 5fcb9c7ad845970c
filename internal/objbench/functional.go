package objbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/pkg/object"
)

// Categories of the functional checks: JuiceFS's two, and one for the
// checks fsbench adds.
const (
	catBasic = "basic"
	catSync  = "sync"
	catExtra = "extra"
)

// warning marks a check outcome that is a known difference between
// providers rather than a failure.
type warning struct{ err error }

func (w warning) Error() string { return w.err.Error() }
func (w warning) Unwrap() error { return w.err }

func warnf(format string, args ...any) error { return warning{fmt.Errorf(format, args...)} }

// check is one functional check.
type check struct {
	category, name string
	timeout        time.Duration
	fn             func(ctx context.Context) error
}

// maxReason bounds the reason shown for a check in the table.
const maxReason = 100

// functional runs the checks, in JuiceFS's order, then fsbench's own.
func (r *run) functional(ctx context.Context) {
	for _, c := range r.checks() {
		if ctx.Err() != nil {
			return
		}
		cctx, cancel := context.WithTimeout(ctx, c.timeout)
		err := c.fn(cctx)
		cancel()
		if ctx.Err() != nil {
			return // interrupted: the check did not run to its end
		}
		res := report.Check{Category: c.category, Name: c.name, Status: report.CheckPass}
		var w warning
		switch {
		case err == nil:
		case errors.Is(err, object.ErrNotSupported):
			res.Status = report.CheckNotSupport
		case errors.Is(err, object.ErrThrottled):
			// The store asked us to slow down: not a wrong answer.
			res.Status, res.Reason = report.CheckWarning, r.short(err)
		case errors.As(err, &w):
			res.Status, res.Reason = report.CheckWarning, r.short(err)
		default:
			res.Status, res.Reason = report.CheckFailed, r.short(err)
		}
		r.res.Checks = append(r.res.Checks, res)
		if r.o.Hooks.Check != nil {
			r.o.Hooks.Check(res)
		}
	}
}

// short is the reason shown for a failed check: one line, keys without
// the run's prefix, bounded.
func (r *run) short(err error) string {
	s := strings.ReplaceAll(err.Error(), r.prefix, "")
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > maxReason {
		s = s[:maxReason] + "..."
	}
	return s
}

const (
	testKey  = "put_test_file"
	testData = "hello"
)

func (r *run) checks() []check {
	const t = 30 * time.Second
	s := r.store
	return []check{
		{catBasic, "create a bucket", t, r.checkCreate},
		{catBasic, "put an object", t, func(ctx context.Context) error {
			return r.withTestObject(ctx, func() error { return nil })
		}},
		{catBasic, "get an object", t, func(ctx context.Context) error {
			return r.withTestObject(ctx, func() error {
				for _, limit := range []int64{-1, 5} {
					if d, err := getString(ctx, s, testKey, 0, limit); err != nil || d != testData {
						return fmt.Errorf("get (limit %d): expected %q, got %q, error: %v", limit, testData, d, err)
					}
				}
				return nil
			})
		}},
		{catBasic, "get non-exist", t, func(ctx context.Context) error {
			_, err := getString(ctx, s, "not_exists_file", 0, -1)
			switch {
			case err == nil:
				return errors.New("get of a missing object succeeded")
			case !errors.Is(err, object.ErrNotExist):
				return warnf("get of a missing object failed, but not with 'not found': %v", err)
			}
			return nil
		}},
		{catBasic, "get partial object", t, r.checkPartial},
		{catBasic, "head an object", t, func(ctx context.Context) error {
			return r.withTestObject(ctx, func() error {
				o, err := s.Head(ctx, testKey)
				if err != nil {
					return err
				}
				if o.Key != testKey || o.Size != int64(len(testData)) {
					return fmt.Errorf("head: expected key %s of %d bytes, got %s of %d", testKey, len(testData), o.Key, o.Size)
				}
				return nil
			})
		}},
		{catBasic, "delete an object", t, func(ctx context.Context) error {
			if err := s.Put(ctx, testKey, strings.NewReader(testData)); err != nil {
				return err
			}
			if err := s.Delete(ctx, testKey); err != nil {
				return err
			}
			if _, err := s.Head(ctx, testKey); !errors.Is(err, object.ErrNotExist) {
				return fmt.Errorf("head after delete: expected 'not found', got %v", err)
			}
			if err := s.Delete(ctx, testKey); err != nil {
				return fmt.Errorf("deleting it again: %w", err)
			}
			return nil
		}},
		{catBasic, "delete non-exist", t, func(ctx context.Context) error {
			if err := s.Delete(ctx, "not_exists_file"); err != nil {
				return fmt.Errorf("deleting a missing object returns an error: %w", err)
			}
			return nil
		}},
		{catBasic, "list objects", 2 * t, r.checkList},
		{catSync, "special key", t, r.checkSpecialKey},
		{catSync, "put a big object", 10 * t, r.checkBigObject},
		{catSync, "put an empty object", t, r.checkEmpty},
		{catSync, "multipart upload", 4 * t, r.checkMultipart},
		{catSync, "change owner/group", t, r.fsCheck(func(ctx context.Context, f object.FileSystem) error {
			uid, gid := os.Getuid(), os.Getgid()
			if err := f.Chown(ctx, testKey, uid, gid); err != nil {
				return err
			}
			o, err := s.Head(ctx, testKey)
			if err == nil && (o.UID != uid || o.GID != gid) {
				err = fmt.Errorf("owner is %d:%d after chown to %d:%d", o.UID, o.GID, uid, gid)
			}
			return err
		})},
		{catSync, "change permission", t, r.fsCheck(func(ctx context.Context, f object.FileSystem) error {
			if err := f.Chmod(ctx, testKey, 0o751); err != nil {
				return err
			}
			o, err := s.Head(ctx, testKey)
			if err == nil && o.Mode.Perm() != 0o751 {
				err = fmt.Errorf("mode is %v after chmod 0751", o.Mode.Perm())
			}
			return err
		})},
		{catSync, "change mtime", t, r.fsCheck(func(ctx context.Context, f object.FileSystem) error {
			mtime := time.Date(2021, 6, 1, 12, 30, 0, 0, time.UTC)
			if err := f.Chtimes(ctx, testKey, mtime); err != nil {
				return err
			}
			o, err := s.Head(ctx, testKey)
			if err == nil && !o.Mtime.Equal(mtime) {
				err = fmt.Errorf("mtime is %v after setting %v", o.Mtime.UTC(), mtime)
			}
			return err
		})},
		{catExtra, "overwrite an object", t, r.checkOverwrite},
		{catExtra, "list with delimiter", t, r.checkDelimiter},
		{catExtra, "list in pages", 2 * t, r.checkPaging},
		{catExtra, "abort multipart upload", t, r.checkAbort},
	}
}

func getString(ctx context.Context, s object.Storage, key string, off, limit int64) (string, error) {
	rc, err := s.Get(ctx, key, off, limit)
	if err != nil {
		return "", err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	return string(b), err
}

// withTestObject puts "hello" under testKey, runs fn and deletes it.
func (r *run) withTestObject(ctx context.Context, fn func() error) error {
	if err := r.store.Put(ctx, testKey, strings.NewReader(testData)); err != nil {
		return err
	}
	defer r.store.Delete(context.WithoutCancel(ctx), testKey) //nolint:errcheck // best effort; cleanup lists the prefix
	return fn()
}

func (r *run) checkCreate(ctx context.Context) error {
	// prepare made sure the bucket exists (creating it if it had to);
	// creating an existing bucket of ours must not be an error.
	if err := r.base.Create(ctx); err != nil {
		return fmt.Errorf("creating a bucket that already exists returns an error: %w", err)
	}
	return r.withTestObject(ctx, func() error { return nil })
}

func (r *run) checkPartial(ctx context.Context) error {
	return r.withTestObject(ctx, func() error {
		for _, c := range []struct {
			off, limit int64
			want, what string
		}{
			{0, 1, "h", "the first byte"},
			{4, 1, "o", "the last byte"},
			{2, 3, "llo", "the last three bytes"},
			{2, 2, "ll", "two middle bytes"},
			{2, -1, "llo", "from an offset to the end"},
		} {
			if d, err := getString(ctx, r.store, testKey, c.off, c.limit); err != nil || d != c.want {
				return fmt.Errorf("get %s: expected %q, got %q, error: %v", c.what, c.want, d, err)
			}
		}
		// Ranges past the end differ between providers.
		if d, err := getString(ctx, r.store, testKey, 4, 2); err != nil || d != "o" {
			return warnf("get with the end out of range: expected %q, got %q, error: %v", "o", d, err)
		}
		if d, err := getString(ctx, r.store, testKey, 6, 2); err != nil || d != "" {
			return warnf("get with the offset out of range: expected \"\", got %q, error: %v", d, err)
		}
		return nil
	})
}

// files drops directories, which file-system stores list.
func files(objs []object.Object) []object.Object {
	out := objs[:0:0]
	for _, o := range objs {
		if !o.IsDir {
			out = append(out, o)
		}
	}
	return out
}

func (r *run) checkList(ctx context.Context) error {
	s := r.store
	err := r.withTestObject(ctx, func() error {
		page, err := s.List(ctx, object.ListOptions{Limit: 10})
		if err != nil {
			return err
		}
		objs := files(page.Objects)
		if len(objs) != 1 {
			return fmt.Errorf("list should return 1 key, but got %d", len(objs))
		}
		if objs[0].Key != testKey || objs[0].Size != int64(len(testData)) {
			return fmt.Errorf("list returned %s of %d bytes, expected %s of %d", objs[0].Key, objs[0].Size, testKey, len(testData))
		}
		if d := time.Since(objs[0].Mtime); d > 30*time.Second || d < -30*time.Second {
			return fmt.Errorf("mtime of the key is %v away from now", d.Round(time.Second))
		}
		page, err = s.List(ctx, object.ListOptions{StartAfter: testKey, Limit: 10})
		if err != nil {
			return err
		}
		if n := len(files(page.Objects)); n != 0 {
			return fmt.Errorf("list after the last key should return nothing, but got %d", n)
		}
		return nil
	})
	if err != nil {
		return err
	}
	// 100 keys come back in byte order.
	var keys []string
	for i := range 100 {
		keys = append(keys, fmt.Sprintf("hashKey%d", i))
	}
	defer r.deleteKeys(ctx, keys)
	if err := r.putKeys(ctx, keys); err != nil {
		return err
	}
	sort.Strings(keys)
	page, err := s.List(ctx, object.ListOptions{Prefix: "hashKey", Limit: 1000})
	if err != nil {
		return err
	}
	objs := files(page.Objects)
	if len(objs) != len(keys) {
		return fmt.Errorf("list returned %d of %d keys", len(objs), len(keys))
	}
	for i, o := range objs {
		if o.Key != keys[i] {
			return fmt.Errorf("the result for list is incorrect: key %d is %s, expected %s", i, o.Key, keys[i])
		}
	}
	return nil
}

// putKeys puts one byte under each key, with the run's threads.
func (r *run) putKeys(ctx context.Context, keys []string) error {
	return parallel(ctx, r.o.Threads, len(keys), func(i int) error {
		return r.store.Put(ctx, keys[i], strings.NewReader("x"))
	})
}

func (r *run) deleteKeys(ctx context.Context, keys []string) {
	ctx = context.WithoutCancel(ctx)
	_ = parallel(ctx, r.o.Threads, len(keys), func(i int) error {
		return r.store.Delete(ctx, keys[i])
	})
}

// specialKey has non-ASCII letters, JSON punctuation, a control character
// and percent signs: what breaks URL and XML encoding.
const specialKey = "测试编码文件{\"name\":\"fsbench\"}\u001f%uFF081%uFF09.jpg"

func (r *run) checkSpecialKey(ctx context.Context) error {
	s := r.store
	if err := s.Put(ctx, specialKey, strings.NewReader("1")); err != nil {
		return fmt.Errorf("put encoded key: %w", err)
	}
	defer s.Delete(context.WithoutCancel(ctx), specialKey) //nolint:errcheck
	page, err := s.List(ctx, object.ListOptions{Prefix: "测试编码文件", Limit: 1})
	if err != nil {
		return fmt.Errorf("list encoded key: %w", err)
	}
	if len(page.Objects) != 1 || page.Objects[0].Key != specialKey {
		return fmt.Errorf("list encoded key: expected %q, got %v", specialKey, keysOf(page.Objects))
	}
	if d, err := getString(ctx, s, specialKey, 0, -1); err != nil || d != "1" {
		return fmt.Errorf("get encoded key: got %q, error: %v", d, err)
	}
	return nil
}

func keysOf(objs []object.Object) []string {
	out := make([]string, len(objs))
	for i, o := range objs {
		out[i] = o.Key
	}
	return out
}

// checkBigObject streams a big object up and back down, checking every
// byte, with no more memory than one thread's buffer.
func (r *run) checkBigObject(ctx context.Context) error {
	const key = "big_test_file"
	size := r.o.BigCheckSize
	id := r.pat.ID(key)
	if err := r.store.Put(ctx, key, r.pat.Reader(id, size)); err != nil {
		return err
	}
	defer r.store.Delete(context.WithoutCancel(ctx), key) //nolint:errcheck
	return r.verifyStream(ctx, key, id, size)
}

// verifyStream reads key to its end with thread 0's buffer and checks it
// against the content of id.
func (r *run) verifyStream(ctx context.Context, key string, id uint64, size int64) error {
	rc, err := r.store.Get(ctx, key, 0, -1)
	if err != nil {
		return err
	}
	defer rc.Close()
	buf := r.buf(0)
	var pos int64
	for {
		n, err := io.ReadFull(rc, buf)
		if n > 0 {
			if pos+int64(n) > size {
				return fmt.Errorf("get %s: longer than the %d bytes put", key, size)
			}
			if bad := r.pat.Check(buf[:n], id, pos); bad >= 0 {
				return fmt.Errorf("get %s: content differs from what was put at byte %d", key, pos+int64(bad))
			}
			pos += int64(n)
		}
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return err
		}
	}
	if pos != size {
		return fmt.Errorf("get %s: %d bytes, expected %d", key, pos, size)
	}
	return nil
}

func (r *run) checkEmpty(ctx context.Context) error {
	s := r.store
	if err := s.Put(ctx, "empty_test_file", bytes.NewReader(nil)); err != nil {
		return err
	}
	defer s.Delete(context.WithoutCancel(ctx), "empty_test_file") //nolint:errcheck
	if o, err := s.Head(ctx, "empty_test_file"); err != nil || o.Size != 0 {
		return fmt.Errorf("head of the empty object: size %d, error: %v", o.Size, err)
	}
	// A key ending in "/" (a directory marker on object stores).
	if err := s.Put(ctx, "slash_test_file/", strings.NewReader("1")); err != nil {
		return fmt.Errorf("put a key ending in /: %w", err)
	}
	defer s.Delete(context.WithoutCancel(ctx), "slash_test_file/") //nolint:errcheck
	return nil
}

func (r *run) checkMultipart(ctx context.Context) error {
	m := object.AsMultipart(r.store)
	if m == nil {
		return object.ErrNotSupported
	}
	const key = "multi_test_file"
	up, err := m.CreateMultipartUpload(ctx, key)
	if err != nil {
		return warnf("create multipart upload: %w", err)
	}
	done := false
	defer func() {
		if !done {
			_ = m.AbortUpload(context.WithoutCancel(ctx), key, up.UploadID)
		}
	}()
	partSize := up.MinPartSize
	// Parts 1 and 2 of the minimum size, then part 1 again (replacing
	// it), and a small last part. Part content is the content of the
	// whole object at the part's offset, so the result is checked as one.
	id := r.pat.ID(key)
	sizes := []int64{partSize, partSize, 5}
	parts := make([]object.Part, len(sizes))
	var off int64
	offs := make([]int64, len(sizes))
	for i, n := range sizes {
		offs[i] = off
		off += n
	}
	upload := func(i int, content uint64) error {
		rd := io.NewSectionReader(r.pat.Reader(content, offs[i]+sizes[i]), offs[i], sizes[i])
		p, err := m.UploadPart(ctx, key, up.UploadID, i+1, rd)
		if err != nil {
			return warnf("upload part %d: %w", i+1, err)
		}
		parts[i] = p
		return nil
	}
	if err := upload(0, r.pat.ID("other")); err != nil {
		return err
	}
	for i := range sizes {
		if err := upload(i, id); err != nil {
			return err
		}
	}
	if err := m.CompleteUpload(ctx, key, up.UploadID, parts); err != nil {
		return warnf("complete multipart upload: %w", err)
	}
	done = true
	defer r.store.Delete(context.WithoutCancel(ctx), key) //nolint:errcheck
	if err := r.verifyStream(ctx, key, id, off); err != nil {
		return warnf("%w", err)
	}
	return nil
}

func (r *run) checkAbort(ctx context.Context) error {
	m := object.AsMultipart(r.store)
	if m == nil {
		return object.ErrNotSupported
	}
	const key = "abort_test_file"
	up, err := m.CreateMultipartUpload(ctx, key)
	if err != nil {
		return err
	}
	if _, err := m.UploadPart(ctx, key, up.UploadID, 1, strings.NewReader(testData)); err != nil {
		_ = m.AbortUpload(ctx, key, up.UploadID)
		return err
	}
	if err := m.AbortUpload(ctx, key, up.UploadID); err != nil {
		return err
	}
	if _, err := r.store.Head(ctx, key); !errors.Is(err, object.ErrNotExist) {
		return fmt.Errorf("an aborted upload left an object (head: %v)", err)
	}
	return nil
}

// fsCheck runs fn on testKey when the store keeps file attributes. As in
// JuiceFS, a store that has them but fails is a warning.
func (r *run) fsCheck(fn func(ctx context.Context, f object.FileSystem) error) func(ctx context.Context) error {
	return func(ctx context.Context) error {
		f := object.AsFileSystem(r.store)
		if f == nil {
			return object.ErrNotSupported
		}
		return r.withTestObject(ctx, func() error {
			if err := fn(ctx, f); err != nil {
				if errors.Is(err, object.ErrNotSupported) {
					return err
				}
				return warning{err}
			}
			return nil
		})
	}
}

func (r *run) checkOverwrite(ctx context.Context) error {
	s := r.store
	const key = "overwrite_test_file"
	if err := s.Put(ctx, key, strings.NewReader("the first, longer version")); err != nil {
		return err
	}
	defer s.Delete(context.WithoutCancel(ctx), key) //nolint:errcheck
	if err := s.Put(ctx, key, strings.NewReader("second")); err != nil {
		return fmt.Errorf("overwrite: %w", err)
	}
	if d, err := getString(ctx, s, key, 0, -1); err != nil || d != "second" {
		return fmt.Errorf("after overwrite: got %q, error: %v", d, err)
	}
	return nil
}

func (r *run) checkDelimiter(ctx context.Context) error {
	keys := []string{"dl/a", "dl/b/1", "dl/b/2", "dl/c"}
	defer r.deleteKeys(ctx, keys)
	if err := r.putKeys(ctx, keys); err != nil {
		return err
	}
	page, err := r.store.List(ctx, object.ListOptions{Prefix: "dl/", Delimiter: "/", Limit: 100})
	if err != nil {
		return err
	}
	got := strings.Join(keysOf(files(page.Objects)), ",")
	pre := strings.Join(page.Prefixes, ",")
	if got != "dl/a,dl/c" || pre != "dl/b/" {
		return fmt.Errorf("list with delimiter: objects [%s] and prefixes [%s], expected [dl/a,dl/c] and [dl/b/]", got, pre)
	}
	return nil
}

func (r *run) checkPaging(ctx context.Context) error {
	var keys []string
	for i := range 25 {
		keys = append(keys, fmt.Sprintf("page/%03d", i))
	}
	defer r.deleteKeys(ctx, keys)
	if err := r.putKeys(ctx, keys); err != nil {
		return err
	}
	var got []string
	opt := object.ListOptions{Prefix: "page/", Limit: 10}
	for pages := 0; ; pages++ {
		if pages > 10 {
			return errors.New("paging does not end")
		}
		page, err := r.store.List(ctx, opt)
		if err != nil {
			return err
		}
		if len(page.Objects) > 10 {
			return fmt.Errorf("a page of %d keys, limit 10", len(page.Objects))
		}
		got = append(got, keysOf(files(page.Objects))...)
		if !page.Truncated {
			break
		}
		opt.StartAfter = page.Next
	}
	if strings.Join(got, ",") != strings.Join(keys, ",") {
		return fmt.Errorf("paged list returned %d keys, expected the %d put, in order", len(got), len(keys))
	}
	return nil
}

// parallel runs fn(0..n-1) on at most threads goroutines and returns the
// first error.
func parallel(ctx context.Context, threads, n int, fn func(i int) error) error {
	g, _ := errgroup.WithContext(ctx)
	g.SetLimit(threads)
	for i := range n {
		g.Go(func() error { return fn(i) })
	}
	return g.Wait()
}
