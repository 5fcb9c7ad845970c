package object

import (
	"context"
	"io"
	"time"
)

// call runs fn on capability C of the next endpoint's store and counts
// the request, which moves n bytes when it succeeds. A store without the
// capability fails with ErrNotSupported.
func call[C, R any](e *Endpoints, as func(Storage) C, op, key string, n int64, fn func(C) (R, error)) (R, error) {
	ep := e.pick()
	c := as(ep.s)
	if any(c) == nil {
		var zero R
		return zero, notSupported(op, key)
	}
	t := time.Now()
	r, err := fn(c)
	ep.done(t, n, err)
	return r, err
}

// none is the result of the calls that return only an error.
type none struct{}

func errOnly(err error) (none, error) { return none{}, err }

// DeleteKeys deletes keys in one request through the next endpoint.
func (e *Endpoints) DeleteKeys(ctx context.Context, keys []string) error {
	_, err := call(e, AsBatchDeleter, "delete objects", "", 0, func(b BatchDeleter) (none, error) {
		return errOnly(b.DeleteKeys(ctx, keys))
	})
	return err
}

// CreateMultipartUpload starts an upload through the next endpoint.
func (e *Endpoints) CreateMultipartUpload(ctx context.Context, key string) (*MultipartUpload, error) {
	return call(e, AsMultipart, "create multipart upload", key, 0, func(m MultipartUploader) (*MultipartUpload, error) {
		return m.CreateMultipartUpload(ctx, key)
	})
}

// UploadPart uploads a part through the next endpoint.
func (e *Endpoints) UploadPart(ctx context.Context, key, id string, num int, data io.ReadSeeker) (Part, error) {
	n := bodySize(data)
	return call(e, AsMultipart, "upload part", key, n, func(m MultipartUploader) (Part, error) {
		return m.UploadPart(ctx, key, id, num, data)
	})
}

// CompleteUpload completes an upload through the next endpoint.
func (e *Endpoints) CompleteUpload(ctx context.Context, key, id string, parts []Part) error {
	_, err := call(e, AsMultipart, "complete multipart upload", key, 0, func(m MultipartUploader) (none, error) {
		return errOnly(m.CompleteUpload(ctx, key, id, parts))
	})
	return err
}

// AbortUpload aborts an upload through the next endpoint.
func (e *Endpoints) AbortUpload(ctx context.Context, key, id string) error {
	_, err := call(e, AsMultipart, "abort multipart upload", key, 0, func(m MultipartUploader) (none, error) {
		return errOnly(m.AbortUpload(ctx, key, id))
	})
	return err
}

// EnableVersioning enables versioning through the next endpoint.
func (e *Endpoints) EnableVersioning(ctx context.Context) error {
	_, err := call(e, AsVersioner, "enable versioning", "", 0, func(v Versioner) (none, error) {
		return errOnly(v.EnableVersioning(ctx))
	})
	return err
}

// VersioningEnabled asks the next endpoint.
func (e *Endpoints) VersioningEnabled(ctx context.Context) (bool, error) {
	return call(e, AsVersioner, "get versioning", "", 0, func(v Versioner) (bool, error) {
		return v.VersioningEnabled(ctx)
	})
}

// PutVersion puts key through the next endpoint.
func (e *Endpoints) PutVersion(ctx context.Context, key string, data io.ReadSeeker) (string, error) {
	n := bodySize(data)
	return call(e, AsVersioner, "put", key, n, func(v Versioner) (string, error) {
		return v.PutVersion(ctx, key, data)
	})
}

// GetVersion reads a version through the next endpoint; the bytes are
// counted as they are read.
func (e *Endpoints) GetVersion(ctx context.Context, key, id string, off, limit int64) (io.ReadCloser, error) {
	ep := e.pick()
	v := AsVersioner(ep.s)
	if v == nil {
		return nil, notSupported("get", key)
	}
	t := time.Now()
	rc, err := v.GetVersion(ctx, key, id, off, limit)
	ep.done(t, 0, err)
	if err != nil {
		return nil, err
	}
	return &countedBody{ReadCloser: rc, ep: ep}, nil
}

// HeadVersion asks the next endpoint.
func (e *Endpoints) HeadVersion(ctx context.Context, key, id string) (Version, error) {
	return call(e, AsVersioner, "head", key, 0, func(v Versioner) (Version, error) {
		return v.HeadVersion(ctx, key, id)
	})
}

// DeleteVersion deletes a version through the next endpoint.
func (e *Endpoints) DeleteVersion(ctx context.Context, key, id string) error {
	_, err := call(e, AsVersioner, "delete", key, 0, func(v Versioner) (none, error) {
		return errOnly(v.DeleteVersion(ctx, key, id))
	})
	return err
}

// ListVersions lists versions through the next endpoint.
func (e *Endpoints) ListVersions(ctx context.Context, opt VersionListOptions) (*VersionPage, error) {
	return call(e, AsVersioner, "list versions", opt.Prefix, 0, func(v Versioner) (*VersionPage, error) {
		return v.ListVersions(ctx, opt)
	})
}
