package object

import (
	"context"
	"io"
	"os"
	"testing"
	"time"
)

// recorder is a store that remembers the keys it is given.
type recorder struct{ keys []string }

func (r *recorder) String() string                           { return "fake://" }
func (r *recorder) Create(context.Context) error             { return nil }
func (r *recorder) Close() error                             { return nil }
func (r *recorder) note(key string) error                    { r.keys = append(r.keys, key); return nil }
func (r *recorder) Delete(_ context.Context, k string) error { return r.note(k) }
func (r *recorder) Put(_ context.Context, k string, _ io.ReadSeeker) error {
	return r.note(k)
}
func (r *recorder) Get(_ context.Context, k string, _, _ int64) (io.ReadCloser, error) {
	return nil, r.note(k)
}
func (r *recorder) Head(_ context.Context, k string) (Object, error) {
	return Object{Key: k}, r.note(k)
}
func (r *recorder) List(_ context.Context, o ListOptions) (*ListPage, error) {
	return &ListPage{}, r.note(o.Prefix)
}

type recorderMP struct{ *recorder }

func (r recorderMP) CreateMultipartUpload(_ context.Context, k string) (*MultipartUpload, error) {
	return &MultipartUpload{}, r.note(k)
}
func (r recorderMP) UploadPart(_ context.Context, k, _ string, _ int, _ io.ReadSeeker) (Part, error) {
	return Part{}, r.note(k)
}
func (r recorderMP) CompleteUpload(_ context.Context, k, _ string, _ []Part) error {
	return r.note(k)
}
func (r recorderMP) AbortUpload(_ context.Context, k, _ string) error { return r.note(k) }

type recorderFS struct{ *recorder }

func (r recorderFS) Chmod(_ context.Context, k string, _ os.FileMode) error { return r.note(k) }
func (r recorderFS) Chown(_ context.Context, k string, _, _ int) error      { return r.note(k) }
func (r recorderFS) Chtimes(_ context.Context, k string, _ time.Time) error {
	return r.note(k)
}

type recorderAll struct {
	recorderMP
	fs recorderFS
}

func (r recorderAll) Chmod(ctx context.Context, k string, m os.FileMode) error {
	return r.fs.Chmod(ctx, k, m)
}
func (r recorderAll) Chown(ctx context.Context, k string, u, g int) error {
	return r.fs.Chown(ctx, k, u, g)
}
func (r recorderAll) Chtimes(ctx context.Context, k string, t time.Time) error {
	return r.fs.Chtimes(ctx, k, t)
}

// A prefixed view claims a capability exactly when the store below has it,
// and prefixes the keys of its calls.
func TestWithPrefixCapabilities(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name     string
		make     func(r *recorder) Storage
		mp, fsys bool
	}{
		{"plain", func(r *recorder) Storage { return r }, false, false},
		{"multipart", func(r *recorder) Storage { return recorderMP{r} }, true, false},
		{"filesystem", func(r *recorder) Storage { return recorderFS{r} }, false, true},
		{"both", func(r *recorder) Storage { return recorderAll{recorderMP{r}, recorderFS{r}} }, true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &recorder{}
			v := WithPrefix(WithPrefix(c.make(r), "a/"), "b/")
			m, isMP := v.(MultipartUploader)
			f, isFS := v.(FileSystem)
			if isMP != c.mp || isFS != c.fsys {
				t.Fatalf("view claims multipart=%v filesystem=%v, store has %v %v", isMP, isFS, c.mp, c.fsys)
			}
			if (AsMultipart(v) != nil) != c.mp || (AsFileSystem(v) != nil) != c.fsys {
				t.Fatal("AsMultipart/AsFileSystem disagree with the store")
			}
			_ = v.Put(ctx, "k", nil)
			want := 1
			if isMP {
				_ = m.AbortUpload(ctx, "m", "id")
				want++
			}
			if isFS {
				_ = f.Chmod(ctx, "f", 0o600)
				want++
			}
			if len(r.keys) != want {
				t.Fatalf("store saw %v, want %d calls", r.keys, want)
			}
			for _, k := range r.keys {
				if k[:4] != "a/b/" {
					t.Errorf("key %q reached the store without the prefix", k)
				}
			}
		})
	}
}
