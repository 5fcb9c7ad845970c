package object

import (
	"context"
	"io"
	"os"
	"strings"
	"time"
)

// WithPrefix returns a view of s in which every key is prefix+key. The
// view has exactly the optional capabilities of s: it implements
// MultipartUploader only when s does, and FileSystem only when s does, so
// a type assertion on the view tells the truth about the store.
func WithPrefix(s Storage, prefix string) Storage {
	if prefix == "" {
		return s
	}
	base := &prefixed{s: s, p: prefix}
	m, f := AsMultipart(s), AsFileSystem(s)
	isMP, isFS := m != nil, f != nil
	switch {
	case isMP && isFS:
		return &prefixedAll{base, &prefixMultipart{m, prefix}, &prefixFS{f, prefix}}
	case isMP:
		return &prefixedMultipart{base, &prefixMultipart{m, prefix}}
	case isFS:
		return &prefixedFS{base, &prefixFS{f, prefix}}
	}
	return base
}

// The views for each set of capabilities: the Storage methods come from
// prefixed, each capability's methods from its own type.
type (
	prefixedMultipart struct {
		*prefixed
		*prefixMultipart
	}
	prefixedFS struct {
		*prefixed
		*prefixFS
	}
	prefixedAll struct {
		*prefixed
		*prefixMultipart
		*prefixFS
	}
)

var (
	_ MultipartUploader = prefixedMultipart{}
	_ FileSystem        = prefixedFS{}
	_ MultipartUploader = prefixedAll{}
	_ FileSystem        = prefixedAll{}
)

type prefixed struct {
	s Storage
	p string
}

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

// DeleteKeys deletes the keys under the prefix in one request, where the
// store below can (see AsBatchDeleter).
func (w *prefixed) DeleteKeys(ctx context.Context, keys []string) error {
	b, ok := w.s.(BatchDeleter)
	if !ok {
		return notSupported("delete objects", w.p)
	}
	full := make([]string, len(keys))
	for i, k := range keys {
		full[i] = w.p + k
	}
	return b.DeleteKeys(ctx, full)
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

// prefixMultipart is the multipart capability of a prefixed view.
type prefixMultipart struct {
	m MultipartUploader
	p string
}

func (w *prefixMultipart) CreateMultipartUpload(ctx context.Context, key string) (*MultipartUpload, error) {
	return w.m.CreateMultipartUpload(ctx, w.p+key)
}

func (w *prefixMultipart) UploadPart(ctx context.Context, key, id string, num int, data io.ReadSeeker) (Part, error) {
	return w.m.UploadPart(ctx, w.p+key, id, num, data)
}

func (w *prefixMultipart) CompleteUpload(ctx context.Context, key, id string, parts []Part) error {
	return w.m.CompleteUpload(ctx, w.p+key, id, parts)
}

func (w *prefixMultipart) AbortUpload(ctx context.Context, key, id string) error {
	return w.m.AbortUpload(ctx, w.p+key, id)
}

// prefixFS is the file-attribute capability of a prefixed view.
type prefixFS struct {
	f FileSystem
	p string
}

func (w *prefixFS) Chmod(ctx context.Context, key string, mode os.FileMode) error {
	return w.f.Chmod(ctx, w.p+key, mode)
}

func (w *prefixFS) Chown(ctx context.Context, key string, uid, gid int) error {
	return w.f.Chown(ctx, w.p+key, uid, gid)
}

func (w *prefixFS) Chtimes(ctx context.Context, key string, mtime time.Time) error {
	return w.f.Chtimes(ctx, w.p+key, mtime)
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
	m, _ := capability[MultipartUploader](s)
	return m
}

// AsFileSystem returns s's file-attribute capability, or nil.
func AsFileSystem(s Storage) FileSystem {
	f, _ := capability[FileSystem](s)
	return f
}

// capability returns s's capability C: a wrapper has it only when the
// store below has it.
func capability[C any](s Storage) (C, bool) {
	if w, ok := s.(Wrapper); ok {
		if _, ok := capability[C](w.Unwrap()); !ok {
			var none C
			return none, false
		}
	}
	c, ok := s.(C)
	return c, ok
}
