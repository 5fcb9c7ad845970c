package all_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/file"
)

func TestRegistry(t *testing.T) {
	if got := strings.Join(object.Names(), ","); got != "cos,file,minio,nfs,s3" {
		t.Errorf("drivers = %s", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("registering a driver twice does not panic")
		}
	}()
	object.Register(object.Driver{Name: "file", Open: func(context.Context, string, object.Config) (object.Storage, error) { return nil, nil }})
}

func TestOpenUnknown(t *testing.T) {
	_, err := object.Open(context.Background(), "gcs", "gs://b", object.Config{})
	if !errors.Is(err, object.ErrUnknownDriver) || !strings.Contains(err.Error(), "s3") {
		t.Errorf("err = %v", err)
	}
}

// fileAndS3 opens a directory store (file attributes, no multipart) and an
// S3 store (multipart, no file attributes) that is never contacted.
func fileAndS3(t *testing.T) (object.Storage, object.Storage) {
	t.Helper()
	f, err := file.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s3, err := object.Open(context.Background(), "minio", "http://127.0.0.1:1/b", object.Config{AccessKey: "a", SecretKey: object.NewSecret("b")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s3.Close() })
	return f, s3
}

func TestCapabilitiesThroughPrefixes(t *testing.T) {
	f, s3 := fileAndS3(t)
	nested := func(s object.Storage) object.Storage { return object.WithPrefix(object.WithPrefix(s, "a/"), "b/") }
	if object.AsFileSystem(nested(f)) == nil || object.AsMultipart(nested(f)) != nil {
		t.Error("file: file attributes, no multipart expected")
	}
	if object.AsMultipart(nested(s3)) == nil || object.AsFileSystem(nested(s3)) != nil {
		t.Error("s3: multipart, no file attributes expected")
	}
	if object.AsBatchDeleter(nested(s3)) == nil || object.AsBatchDeleter(nested(f)) != nil {
		t.Error("multi-object delete expected on s3 only")
	}
	if got := nested(f).String(); !strings.HasSuffix(got, "/a/b/") {
		t.Errorf("String = %s", got)
	}
}

// FuzzOpen: whatever the URL given to a driver that does not dial to open
// (s3, minio, cos, file), object.Open never panics and never shows the secret in
// its error or in the store's name; errors are one line, and the URL's
// form is a ConfigError or an error naming the path.
func FuzzOpen(f *testing.F) {
	for _, s := range []string{
		"https://b.s3.us-east-2.amazonaws.com/p", "s3://bucket/pre/fix", "http://127.0.0.1:9000/b", "http://ak:sk-in-url-secret@h:1/b",
		"https://b-1250000000.cos.ap-guangzhou.myqcloud.com", "file:///tmp/x", "file://host/x", "/tmp/y", "", "://", "http://[::1]:9/b",
		"s3://", "https://%zz/b", "http://h/b?x=1#f", "http://h:99999/b",
	} {
		f.Add("minio", s)
		f.Add("s3", s)
	}
	f.Add("file", "relative/dir")
	f.Add("cos", "https://x.cos.r.myqcloud.com/")
	const secret = "sk-fuzz-secret-9f1c"
	f.Fuzz(func(t *testing.T, driver, rawURL string) {
		switch driver {
		case "s3", "minio", "cos", "file":
		default:
			return // nfs dials the server to open it
		}
		cfg := object.Config{AccessKey: "ak", SecretKey: object.NewSecret(secret), Getenv: func(string) string { return "" }, Timeout: time.Second}
		s, err := object.Open(context.Background(), driver, rawURL, cfg)
		if err != nil {
			msg := err.Error()
			if strings.Contains(msg, secret) || strings.Contains(msg, "\n") && !strings.Contains(rawURL, "\n") {
				t.Fatalf("Open(%s, %q): error %q", driver, rawURL, msg)
			}
			return
		}
		defer s.Close()
		if name := s.String(); strings.Contains(name, secret) {
			t.Fatalf("Open(%s, %q): name %q shows the secret", driver, rawURL, name)
		}
		if u, perr := url.Parse(rawURL); perr == nil && u.User != nil {
			// A password that is also part of the host or the path
			// ("http://:b@h/b") is in the name as that part.
			rest := *u
			rest.User = nil
			pw, ok := u.User.Password()
			if ok && len(pw) > 3 && strings.Contains(s.String(), pw) && !strings.Contains(rest.String(), pw) {
				t.Fatalf("Open(%s, %q): name %q shows the URL's password", driver, rawURL, s.String())
			}
		}
	})
}
