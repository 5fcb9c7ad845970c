package objbench

import (
	"context"
	"errors"
	"io"
	"net"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
)

// DownError ends a run whose store stopped answering: nothing listens any
// more (connection refused), nothing moved for the request timeout, or
// connections broke several times in a row with no success in between.
type DownError struct {
	Store string // the store's URL
	Err   error  // the failure that showed it
}

func (e *DownError) Error() string { return "store " + e.Store + " is not answering: " + e.Err.Error() }
func (e *DownError) Unwrap() error { return e.Err }

// brokenInARow is how many broken connections (reset, cut short) in a row,
// with no success in between, show that a store is down. A refused
// connection or a request that timed out shows it at once.
const brokenInARow = 3

// unreachable tells the failures that say nothing about the request and
// everything about the store being away: no connection, or no answer.
// It reports whether err is one, and whether it alone is proof.
func unreachable(err error) (away, proof bool) {
	var ne net.Error
	switch {
	case err == nil, errors.Is(err, context.Canceled):
		return false, false
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH),
		errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &ne) && ne.Timeout():
		return true, true
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return true, false
	}
	return false, false
}

// watched passes every call on to a store and cancels the run, with a
// DownError as the cause, when the store stops answering: without it a
// dead store fails every remaining operation one by one, and a hung one
// makes each wait for its timeout.
type watched struct {
	s      object.Storage
	name   string // the store's URL, for the DownError
	down   context.CancelCauseFunc
	broken atomic.Int32
}

var (
	_ object.Wrapper           = (*watched)(nil)
	_ object.MultipartUploader = (*watched)(nil)
	_ object.FileSystem        = (*watched)(nil)
)

func watch(s object.Storage, name string, down context.CancelCauseFunc) *watched {
	return &watched{s: s, name: name, down: down}
}

// note looks at the outcome of one call and returns its error. Any answer
// from the store, an error included, shows it is there.
func (w *watched) note(err error) error {
	away, proof := unreachable(err)
	switch {
	case !away:
		w.broken.Store(0)
	case proof, w.broken.Add(1) >= brokenInARow:
		w.down(&DownError{Store: w.name, Err: err})
	}
	return err
}

// multipart and fs are the capabilities of the store below; callers ask
// object.AsMultipart and object.AsFileSystem first.
func (w *watched) multipart(op, key string) (object.MultipartUploader, error) {
	if m, ok := w.s.(object.MultipartUploader); ok {
		return m, nil
	}
	return nil, &object.Error{Op: op, Key: key, Err: object.ErrNotSupported}
}

func (w *watched) fs(op, key string) (object.FileSystem, error) {
	if f, ok := w.s.(object.FileSystem); ok {
		return f, nil
	}
	return nil, &object.Error{Op: op, Key: key, Err: object.ErrNotSupported}
}

func (w *watched) Unwrap() object.Storage           { return w.s }
func (w *watched) String() string                   { return w.s.String() }
func (w *watched) Close() error                     { return w.s.Close() }
func (w *watched) Create(ctx context.Context) error { return w.note(w.s.Create(ctx)) }

func (w *watched) Put(ctx context.Context, key string, data io.ReadSeeker) error {
	return w.note(w.s.Put(ctx, key, data))
}

func (w *watched) Get(ctx context.Context, key string, off, limit int64) (io.ReadCloser, error) {
	rc, err := w.s.Get(ctx, key, off, limit)
	if err != nil {
		return nil, w.note(err)
	}
	return &watchedBody{rc: rc, w: w}, nil
}

func (w *watched) Head(ctx context.Context, key string) (object.Object, error) {
	o, err := w.s.Head(ctx, key)
	return o, w.note(err)
}

func (w *watched) Delete(ctx context.Context, key string) error {
	return w.note(w.s.Delete(ctx, key))
}

func (w *watched) DeleteKeys(ctx context.Context, keys []string) error {
	b, ok := w.s.(object.BatchDeleter)
	if !ok {
		return &object.Error{Op: "delete objects", Err: object.ErrNotSupported}
	}
	return w.note(b.DeleteKeys(ctx, keys))
}

func (w *watched) List(ctx context.Context, opt object.ListOptions) (*object.ListPage, error) {
	page, err := w.s.List(ctx, opt)
	return page, w.note(err)
}

func (w *watched) CreateMultipartUpload(ctx context.Context, key string) (*object.MultipartUpload, error) {
	m, err := w.multipart("create multipart upload", key)
	if err != nil {
		return nil, err
	}
	u, err := m.CreateMultipartUpload(ctx, key)
	return u, w.note(err)
}

func (w *watched) UploadPart(ctx context.Context, key, id string, num int, data io.ReadSeeker) (object.Part, error) {
	m, err := w.multipart("upload part", key)
	if err != nil {
		return object.Part{}, err
	}
	p, err := m.UploadPart(ctx, key, id, num, data)
	return p, w.note(err)
}

func (w *watched) CompleteUpload(ctx context.Context, key, id string, parts []object.Part) error {
	m, err := w.multipart("complete multipart upload", key)
	if err != nil {
		return err
	}
	return w.note(m.CompleteUpload(ctx, key, id, parts))
}

func (w *watched) AbortUpload(ctx context.Context, key, id string) error {
	m, err := w.multipart("abort multipart upload", key)
	if err != nil {
		return err
	}
	return w.note(m.AbortUpload(ctx, key, id))
}

func (w *watched) Chmod(ctx context.Context, key string, mode os.FileMode) error {
	f, err := w.fs("chmod", key)
	if err != nil {
		return err
	}
	return w.note(f.Chmod(ctx, key, mode))
}

func (w *watched) Chown(ctx context.Context, key string, uid, gid int) error {
	f, err := w.fs("chown", key)
	if err != nil {
		return err
	}
	return w.note(f.Chown(ctx, key, uid, gid))
}

func (w *watched) Chtimes(ctx context.Context, key string, mtime time.Time) error {
	f, err := w.fs("chtimes", key)
	if err != nil {
		return err
	}
	return w.note(f.Chtimes(ctx, key, mtime))
}

// watchedBody watches the reads of a download: a store can stop answering
// halfway through one.
type watchedBody struct {
	rc io.ReadCloser
	w  *watched
}

func (b *watchedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil && err != io.EOF {
		b.w.note(err)
	}
	return n, err
}

func (b *watchedBody) Close() error { return b.rc.Close() }
