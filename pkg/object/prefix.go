package object

import (
	"context"
	"io"
	"os"
	"strings"
	"time"
)

// WithPrefix returns a view of s in which every key is prefix+key. The
// view has the capabilities of s: multipart upload and file attributes
// work when s has them and report ErrNotSupported when it does not.
func WithPrefix(s Storage, prefix string) Storage {
	if prefix == "" {
		return s
	}
	return &prefixed{s: s, p: prefix}
}

type prefixed struct {
	s Storage
	p string
}

var (
	_ MultipartUploader = (*prefixed)(nil)
	_ FileSystem        = (*prefixed)(nil)
)

func (w *prefixed) String() string                   { return w.s.String() + w.p }
func (w *prefixed) Close() error                     { return w.s.Close() }
func (w *prefixed) Create(ctx context.Context) error { return w.s.Create(ctx) }

func (w *prefixed) Put(ctx context.Context, key string, data io.ReadSeeker) error {
	return w.s.Put(ctx, w.p+key, data)
}

func (w *prefixed) Get(ctx context.Context, key string, off, limit int64) (io.ReadCloser, error) {
	return w.s.Get(ctx, w.p+key, off, limit)
}

func (w *prefixed) Head(ctx context.Context, key string) (Object, error) {
	o, err := w.s.Head(ctx, w.p+key)
	o.Key = strings.TrimPrefix(o.Key, w.p)
	return o, err
}

func (w *prefixed) Delete(ctx context.Context, key string) error {
	return w.s.Delete(ctx, w.p+key)
}

func (w *prefixed) List(ctx context.Context, opt ListOptions) (*ListPage, error) {
	opt.Prefix = w.p + opt.Prefix
	if opt.StartAfter != "" {
		opt.StartAfter = w.p + opt.StartAfter
	}
	page, err := w.s.List(ctx, opt)
	if err != nil {
		return nil, err
	}
	for i := range page.Objects {
		page.Objects[i].Key = strings.TrimPrefix(page.Objects[i].Key, w.p)
	}
	for i := range page.Prefixes {
		page.Prefixes[i] = strings.TrimPrefix(page.Prefixes[i], w.p)
	}
	page.Next = strings.TrimPrefix(page.Next, w.p)
	return page, nil
}

func (w *prefixed) CreateMultipartUpload(ctx context.Context, key string) (*MultipartUpload, error) {
	m, ok := w.s.(MultipartUploader)
	if !ok {
		return nil, opErr("create multipart upload", key, ErrNotSupported)
	}
	return m.CreateMultipartUpload(ctx, w.p+key)
}

func (w *prefixed) UploadPart(ctx context.Context, key, id string, num int, data io.ReadSeeker) (Part, error) {
	m, ok := w.s.(MultipartUploader)
	if !ok {
		return Part{}, opErr("upload part", key, ErrNotSupported)
	}
	return m.UploadPart(ctx, w.p+key, id, num, data)
}

func (w *prefixed) CompleteUpload(ctx context.Context, key, id string, parts []Part) error {
	m, ok := w.s.(MultipartUploader)
	if !ok {
		return opErr("complete multipart upload", key, ErrNotSupported)
	}
	return m.CompleteUpload(ctx, w.p+key, id, parts)
}

func (w *prefixed) AbortUpload(ctx context.Context, key, id string) error {
	m, ok := w.s.(MultipartUploader)
	if !ok {
		return opErr("abort multipart upload", key, ErrNotSupported)
	}
	return m.AbortUpload(ctx, w.p+key, id)
}

func (w *prefixed) Chmod(ctx context.Context, key string, mode os.FileMode) error {
	f, ok := w.s.(FileSystem)
	if !ok {
		return opErr("chmod", key, ErrNotSupported)
	}
	return f.Chmod(ctx, w.p+key, mode)
}

func (w *prefixed) Chown(ctx context.Context, key string, uid, gid int) error {
	f, ok := w.s.(FileSystem)
	if !ok {
		return opErr("chown", key, ErrNotSupported)
	}
	return f.Chown(ctx, w.p+key, uid, gid)
}

func (w *prefixed) Chtimes(ctx context.Context, key string, mtime time.Time) error {
	f, ok := w.s.(FileSystem)
	if !ok {
		return opErr("chtimes", key, ErrNotSupported)
	}
	return f.Chtimes(ctx, w.p+key, mtime)
}

// Wrapper is implemented by a Storage that passes its calls on to another
// (a prefixed view, a store that watches its calls): Unwrap returns that
// store. AsMultipart and AsFileSystem look through wrappers, so a wrapper
// may implement every capability and still report only those of the store
// below it.
type Wrapper interface {
	Unwrap() Storage
}

// Unwrap returns the store below the prefixed view.
func (w *prefixed) Unwrap() Storage { return w.s }

// AsMultipart returns s's multipart capability, or nil when s does not
// have it (a wrapper has it when the store below has it).
func AsMultipart(s Storage) MultipartUploader {
	if w, ok := s.(Wrapper); ok && AsMultipart(w.Unwrap()) == nil {
		return nil
	}
	m, _ := s.(MultipartUploader)
	return m
}

// AsFileSystem returns s's file-attribute capability, or nil.
func AsFileSystem(s Storage) FileSystem {
	if w, ok := s.(Wrapper); ok && AsFileSystem(w.Unwrap()) == nil {
		return nil
	}
	f, _ := s.(FileSystem)
	return f
}
