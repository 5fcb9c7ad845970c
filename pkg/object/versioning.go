package object

import (
	"context"
	"io"
	"strings"
)

// Versioner is implemented by stores that can keep every version of an
// object (S3 bucket versioning). Find it with AsVersioner: a wrapper may
// have the methods while the store below it does not.
type Versioner interface {
	// EnableVersioning makes the bucket keep every version from now on. It
	// fails with an error wrapping ErrNotSupported when the store cannot.
	// Versioning cannot be turned off again, only suspended: callers
	// enable it on buckets of their own only.
	EnableVersioning(ctx context.Context) error
	// VersioningEnabled reports whether the bucket keeps versions now.
	VersioningEnabled(ctx context.Context) (bool, error)
	// PutVersion is Put that returns the ID of the version it made.
	PutVersion(ctx context.Context, key string, data io.ReadSeeker) (string, error)
	// GetVersion is Get of one version of key; a missing version is an
	// error wrapping ErrNotExist.
	GetVersion(ctx context.Context, key, id string, off, limit int64) (io.ReadCloser, error)
	// HeadVersion is Head of one version of key.
	HeadVersion(ctx context.Context, key, id string) (Version, error)
	// DeleteVersion removes one version for good, leaving the others as
	// they are. Deleting a missing version is not an error.
	DeleteVersion(ctx context.Context, key, id string) error
	// ListVersions lists the versions and delete markers of the keys
	// under opt.Prefix, keys in byte order and each key's versions newest
	// first.
	ListVersions(ctx context.Context, opt VersionListOptions) (*VersionPage, error)
}

// Version is one version of an object, or a delete marker.
type Version struct {
	Object
	ID           string
	Latest       bool // the version a plain Get returns
	DeleteMarker bool
}

// VersionListOptions select the versions ListVersions returns. A listing
// resumes after KeyMarker and VersionMarker, taken from the previous page.
type VersionListOptions struct {
	Prefix        string
	KeyMarker     string
	VersionMarker string
	Limit         int // <= 0 means DefaultListLimit
}

// VersionPage is one page of a listing of versions.
type VersionPage struct {
	Versions []Version
	// Truncated says that more versions follow: list again with
	// KeyMarker = NextKey and VersionMarker = NextVersion.
	Truncated   bool
	NextKey     string
	NextVersion string
}

// AsVersioner returns s's versioning capability, or nil when s does not
// have it (a wrapper has it when the store below has it).
func AsVersioner(s Storage) Versioner {
	v, _ := capability[Versioner](s)
	return v
}

// A prefixed view has the versioning methods whatever the store below;
// AsVersioner tells whether they work.

func (w *prefixed) versioner() (Versioner, error) {
	if v := AsVersioner(w.s); v != nil {
		return v, nil
	}
	return nil, notSupported("versioning", "")
}

// EnableVersioning enables versioning on the store below.
func (w *prefixed) EnableVersioning(ctx context.Context) error {
	v, err := w.versioner()
	if err != nil {
		return err
	}
	return v.EnableVersioning(ctx)
}

// VersioningEnabled asks the store below.
func (w *prefixed) VersioningEnabled(ctx context.Context) (bool, error) {
	v, err := w.versioner()
	if err != nil {
		return false, err
	}
	return v.VersioningEnabled(ctx)
}

// PutVersion puts prefix+key.
func (w *prefixed) PutVersion(ctx context.Context, key string, data io.ReadSeeker) (string, error) {
	v, err := w.versioner()
	if err != nil {
		return "", err
	}
	return v.PutVersion(ctx, w.p+key, data)
}

// GetVersion gets a version of prefix+key.
func (w *prefixed) GetVersion(ctx context.Context, key, id string, off, limit int64) (io.ReadCloser, error) {
	v, err := w.versioner()
	if err != nil {
		return nil, err
	}
	return v.GetVersion(ctx, w.p+key, id, off, limit)
}

// HeadVersion heads a version of prefix+key.
func (w *prefixed) HeadVersion(ctx context.Context, key, id string) (Version, error) {
	v, err := w.versioner()
	if err != nil {
		return Version{}, err
	}
	o, err := v.HeadVersion(ctx, w.p+key, id)
	o.Key = strings.TrimPrefix(o.Key, w.p)
	return o, err
}

// DeleteVersion deletes a version of prefix+key.
func (w *prefixed) DeleteVersion(ctx context.Context, key, id string) error {
	v, err := w.versioner()
	if err != nil {
		return err
	}
	return v.DeleteVersion(ctx, w.p+key, id)
}

// ListVersions lists the versions under prefix+opt.Prefix.
func (w *prefixed) ListVersions(ctx context.Context, opt VersionListOptions) (*VersionPage, error) {
	v, err := w.versioner()
	if err != nil {
		return nil, err
	}
	opt.Prefix = w.p + opt.Prefix
	if opt.KeyMarker != "" {
		opt.KeyMarker = w.p + opt.KeyMarker
	}
	page, err := v.ListVersions(ctx, opt)
	if err != nil {
		return nil, err
	}
	for i := range page.Versions {
		page.Versions[i].Key = strings.TrimPrefix(page.Versions[i].Key, w.p)
	}
	page.NextKey = strings.TrimPrefix(page.NextKey, w.p)
	return page, nil
}
