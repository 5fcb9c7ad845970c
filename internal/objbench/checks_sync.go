package objbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
)

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

func (r *run) checkChown(ctx context.Context, f object.FileSystem) error {
	uid, gid := os.Getuid(), os.Getgid()
	if err := f.Chown(ctx, testKey, uid, gid); err != nil {
		return err
	}
	o, err := r.store.Head(ctx, testKey)
	if err == nil && (o.UID != uid || o.GID != gid) {
		err = fmt.Errorf("owner is %d:%d after chown to %d:%d", o.UID, o.GID, uid, gid)
	}
	return err
}

func (r *run) checkChmod(ctx context.Context, f object.FileSystem) error {
	if err := f.Chmod(ctx, testKey, 0o751); err != nil {
		return err
	}
	o, err := r.store.Head(ctx, testKey)
	if err == nil && o.Mode.Perm() != 0o751 {
		err = fmt.Errorf("mode is %v after chmod 0751", o.Mode.Perm())
	}
	return err
}

func (r *run) checkMtime(ctx context.Context, f object.FileSystem) error {
	mtime := time.Date(2021, 6, 1, 12, 30, 0, 0, time.UTC)
	if err := f.Chtimes(ctx, testKey, mtime); err != nil {
		return err
	}
	o, err := r.store.Head(ctx, testKey)
	if err == nil && !o.Mtime.Equal(mtime) {
		err = fmt.Errorf("mtime is %v after setting %v", o.Mtime.UTC(), mtime)
	}
	return err
}
