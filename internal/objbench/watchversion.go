package objbench

import (
	"context"
	"io"

	"github.com/fsbench/fsbench/pkg/object"
)

var _ object.Versioner = (*watched)(nil)

// versioner is the versioning of the store below; callers ask
// object.AsVersioner first.
func (w *watched) versioner(op, key string) (object.Versioner, error) {
	if v := object.AsVersioner(w.s); v != nil {
		return v, nil
	}
	return nil, &object.Error{Op: op, Key: key, Err: object.ErrNotSupported}
}

func (w *watched) EnableVersioning(ctx context.Context) error {
	v, err := w.versioner("enable versioning", "")
	if err != nil {
		return err
	}
	return w.note(v.EnableVersioning(ctx))
}

func (w *watched) VersioningEnabled(ctx context.Context) (bool, error) {
	v, err := w.versioner("get versioning", "")
	if err != nil {
		return false, err
	}
	on, err := v.VersioningEnabled(ctx)
	return on, w.note(err)
}

func (w *watched) PutVersion(ctx context.Context, key string, data io.ReadSeeker) (string, error) {
	v, err := w.versioner("put", key)
	if err != nil {
		return "", err
	}
	id, err := v.PutVersion(ctx, key, data)
	return id, w.note(err)
}

func (w *watched) GetVersion(ctx context.Context, key, id string, off, limit int64) (io.ReadCloser, error) {
	v, err := w.versioner("get", key)
	if err != nil {
		return nil, err
	}
	rc, err := v.GetVersion(ctx, key, id, off, limit)
	if err != nil {
		return nil, w.note(err)
	}
	return &watchedBody{rc: rc, w: w}, nil
}

func (w *watched) HeadVersion(ctx context.Context, key, id string) (object.Version, error) {
	v, err := w.versioner("head", key)
	if err != nil {
		return object.Version{}, err
	}
	o, err := v.HeadVersion(ctx, key, id)
	return o, w.note(err)
}

func (w *watched) DeleteVersion(ctx context.Context, key, id string) error {
	v, err := w.versioner("delete", key)
	if err != nil {
		return err
	}
	return w.note(v.DeleteVersion(ctx, key, id))
}

func (w *watched) ListVersions(ctx context.Context, opt object.VersionListOptions) (*object.VersionPage, error) {
	v, err := w.versioner("list versions", opt.Prefix)
	if err != nil {
		return nil, err
	}
	page, err := v.ListVersions(ctx, opt)
	return page, w.note(err)
}
