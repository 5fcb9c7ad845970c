package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
)

func TestParseS3URL(t *testing.T) {
	for _, c := range []struct {
		p          provider
		url, addr  string
		endpoint   string
		bucket     string
		prefix     string
		region     string
		virtual    bool
		ak, secret string
		err        string
	}{
		{p: providerS3, url: "https://mybucket.s3.us-east-2.amazonaws.com", endpoint: "https://s3.us-east-2.amazonaws.com", bucket: "mybucket", region: "us-east-2", virtual: true},
		{p: providerS3, url: "https://my.dotted.bucket.s3.eu-west-1.amazonaws.com/some/prefix", endpoint: "https://s3.eu-west-1.amazonaws.com", bucket: "my.dotted.bucket", prefix: "some/prefix/", region: "eu-west-1", virtual: true},
		{p: providerS3, url: "https://b.s3-ap-south-1.amazonaws.com/", endpoint: "https://s3.ap-south-1.amazonaws.com", bucket: "b", region: "ap-south-1", virtual: true},
		{p: providerS3, url: "https://b.s3.amazonaws.com", endpoint: "https://s3.amazonaws.com", bucket: "b", region: "us-east-1", virtual: true},
		{p: providerS3, url: "s3://bucket/pre/fix/", bucket: "bucket", prefix: "pre/fix/", virtual: true},
		{p: providerS3, url: "http://10.0.0.1:7480/bucket/p", endpoint: "http://10.0.0.1:7480", bucket: "bucket", prefix: "p/"},
		{p: providerS3, url: "https://ceph.example.com/bucket", addr: "virtual", endpoint: "https://ceph.example.com", bucket: "bucket", virtual: true},
		{p: providerS3, url: "https://b.s3.us-east-2.amazonaws.com", addr: "path", endpoint: "https://s3.us-east-2.amazonaws.com", bucket: "b", region: "us-east-2"},
		{p: providerMinIO, url: "http://127.0.0.1:9000/bench", endpoint: "http://127.0.0.1:9000", bucket: "bench"},
		{p: providerMinIO, url: "https://AK:S%2FK@minio.local:9000/bench", endpoint: "https://minio.local:9000", bucket: "bench", ak: "AK", secret: "S/K"},
		{p: providerCOS, url: "https://bench-1250000000.cos.ap-guangzhou.myqcloud.com", endpoint: "https://cos.ap-guangzhou.myqcloud.com", bucket: "bench-1250000000", region: "ap-guangzhou", virtual: true},
		{p: providerCOS, url: "https://bench-1250000000.cos.ap-guangzhou.myqcloud.com/pre", endpoint: "https://cos.ap-guangzhou.myqcloud.com", bucket: "bench-1250000000", prefix: "pre/", region: "ap-guangzhou", virtual: true},
		{p: providerMinIO, url: "http://127.0.0.1:9000", err: "no bucket"},
		{p: providerMinIO, url: "127.0.0.1:9000/b", err: "invalid minio URL"},
		{p: providerMinIO, url: "s3://b", err: "for --storage s3"},
		{p: providerS3, url: "ftp://host/b", err: "scheme"},
		{p: providerS3, url: "http://host/b?x=1", err: "query"},
		{p: providerS3, url: "http://host:/b", err: "empty port"},
		{p: providerS3, url: "https://h/b", addr: "diagonal", err: "addressing"},
	} {
		tg, err := parseS3URL(c.p, c.url, c.addr)
		if c.err != "" {
			var ce *object.ConfigError
			if err == nil || !strings.Contains(err.Error(), c.err) || !errors.As(err, &ce) {
				t.Errorf("%s %s: err = %v, want a ConfigError with %q", c.p.name, c.url, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", c.p.name, c.url, err)
			continue
		}
		got := fmt.Sprintf("%s|%s|%s|%s|%v|%s|%s", tg.endpoint, tg.bucket, tg.prefix, tg.region, tg.virtual, tg.urlAccess, tg.urlSecret.Reveal())
		want := fmt.Sprintf("%s|%s|%s|%s|%v|%s|%s", c.endpoint, c.bucket, c.prefix, c.region, c.virtual, c.ak, c.secret)
		if got != want {
			t.Errorf("%s %s:\n got %s\nwant %s", c.p.name, c.url, got, want)
		}
		if strings.Contains(tg.display(), "S/K") || strings.Contains(tg.display(), "AK:") {
			t.Errorf("display %s shows credentials", tg.display())
		}
	}
}

func TestCredentialsOrder(t *testing.T) {
	env := map[string]string{}
	cfg := object.Config{Getenv: func(k string) string { return env[k] }}
	open := func(typ, url string, c object.Config) error {
		s, err := object.Open(context.Background(), typ, url, c)
		if err == nil {
			s.Close()
		}
		return err
	}
	// minio without any credentials: a ConfigError naming the variables.
	err := open("minio", "http://127.0.0.1:1/b", cfg)
	var ce *object.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "MINIO_ACCESS_KEY") {
		t.Errorf("no credentials: %v", err)
	}
	// An access key without a secret.
	env["ACCESS_KEY"] = "ak"
	if err := open("minio", "http://127.0.0.1:1/b", cfg); !errors.As(err, &ce) {
		t.Errorf("access key alone: %v", err)
	}
	env["SECRET_KEY"] = "sk"
	if err := open("minio", "http://127.0.0.1:1/b", cfg); err != nil {
		t.Errorf("ACCESS_KEY/SECRET_KEY: %v", err)
	}
	delete(env, "ACCESS_KEY")
	delete(env, "SECRET_KEY")
	env["COS_SECRETID"], env["COS_SECRETKEY"] = "id", "key"
	if err := open("cos", "https://b-1.cos.ap-beijing.myqcloud.com", cfg); err != nil {
		t.Errorf("COS_SECRETID/COS_SECRETKEY: %v", err)
	}
	cfg.Anonymous = true
	if err := open("minio", "http://127.0.0.1:1/b", cfg); err != nil {
		t.Errorf("anonymous: %v", err)
	}
}

// fakeS3 answers every request with status and an S3 error document.
func fakeS3(t *testing.T, status int, code string) object.Storage {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(status)
		if r.Method != http.MethodHead {
			fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>msg of %s</Message></Error>`, code, code)
		}
	}))
	t.Cleanup(srv.Close)
	s, err := object.Open(context.Background(), "minio", srv.URL+"/b", object.Config{AccessKey: "ak", SecretKey: object.NewSecret("sk-secret")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestS3ErrorMapping(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		status int
		code   string
		kind   error
	}{
		{503, "SlowDown", object.ErrThrottled},
		{429, "TooManyRequests", object.ErrThrottled},
		{403, "SignatureDoesNotMatch", object.ErrAccess},
		{403, "AccessDenied", object.ErrAccess},
		{404, "NoSuchBucket", object.ErrNoBucket},
		{404, "NoSuchKey", object.ErrNotExist},
	} {
		s := fakeS3(t, c.status, c.code)
		_, err := s.Get(ctx, "some/key", 0, -1)
		if !errors.Is(err, c.kind) {
			t.Errorf("%d %s: err = %v, want %v", c.status, c.code, err, c.kind)
		}
		msg := fmt.Sprint(err)
		if !strings.HasPrefix(msg, "get some/key: ") || strings.Count(msg, "\n") > 0 || !strings.Contains(msg, c.code) {
			t.Errorf("%d %s: message %q", c.status, c.code, msg)
		}
		if strings.Contains(msg, "sk-secret") {
			t.Errorf("secret in %q", msg)
		}
	}
	// HEAD has no body: a 404 is "not found".
	s := fakeS3(t, 404, "")
	if _, err := s.Head(ctx, "k"); !errors.Is(err, object.ErrNotExist) {
		t.Errorf("head 404: %v", err)
	}
}

func TestS3NoRetriesByDefault(t *testing.T) {
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n++
		w.WriteHeader(500)
		fmt.Fprint(w, `<Error><Code>InternalError</Code><Message>boom</Message></Error>`)
	}))
	defer srv.Close()
	for _, retries := range []int{0, 2} {
		n = 0
		s, err := object.Open(context.Background(), "minio", srv.URL+"/b", object.Config{AccessKey: "a", SecretKey: object.NewSecret("b"), Retries: retries})
		if err != nil {
			t.Fatal(err)
		}
		_, err = s.Head(context.Background(), "k")
		s.Close()
		if err == nil || n != retries+1 {
			t.Errorf("retries %d: %d requests, err %v", retries, n, err)
		}
	}
}

// A server that accepts the connection and never answers: the call ends
// when the context does.
func TestS3ContextBoundsHang(t *testing.T) {
	block := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-block }))
	defer srv.Close()
	defer close(block)
	s, err := object.Open(context.Background(), "minio", srv.URL+"/b", object.Config{AccessKey: "a", SecretKey: object.NewSecret("b")})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = s.Head(ctx, "k")
	if !errors.Is(err, context.DeadlineExceeded) || time.Since(t0) > 5*time.Second {
		t.Errorf("err %v after %v", err, time.Since(t0))
	}
}

func FuzzParseS3URL(f *testing.F) {
	for _, s := range []string{"https://b.s3.us-east-1.amazonaws.com/p", "s3://b", "http://h:9/b/p", "https://b-1.cos.r.myqcloud.com", "https://a:b@h/c"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, p := range []provider{providerS3, providerMinIO, providerCOS} {
			tg, err := parseS3URL(p, s, "")
			if err != nil {
				if tg != nil {
					t.Fatal("target with an error")
				}
				continue
			}
			if tg.bucket == "" {
				t.Fatalf("%q: no bucket and no error", s)
			}
			if pw := tg.urlSecret.Reveal(); len(pw) > 3 && strings.Contains(tg.display(), pw) {
				t.Fatalf("%q: display %q shows the secret", s, tg.display())
			}
		}
	})
}

// The S3 client is configured for measuring: no Expect: 100-continue, no
// checksum trailers unless asked, UNSIGNED-PAYLOAD over HTTP and HTTPS
// unless payloads are to be signed.
func TestS3RequestShape(t *testing.T) {
	type seen struct{ expect, sha, encoding, trailer, checksum string }
	unsigned := func(t *testing.T, s seen) {
		if s.sha != "UNSIGNED-PAYLOAD" {
			t.Errorf("payload hash %q, want UNSIGNED-PAYLOAD", s.sha)
		}
	}
	signed := func(t *testing.T, s seen) {
		if len(s.sha) != 64 || strings.Contains(s.sha, "UNSIGNED") {
			t.Errorf("payload hash %q, want the body's SHA-256", s.sha)
		}
	}
	noChecksum := func(t *testing.T, s seen) {
		if s.encoding != "" || s.trailer != "" || s.checksum != "" {
			t.Errorf("when-required: encoding %q trailer %q checksum %q, want none", s.encoding, s.trailer, s.checksum)
		}
	}
	for _, c := range []struct {
		tls      bool
		checksum string
		sign     bool
		checks   []func(t *testing.T, s seen)
	}{
		{false, "", false, []func(*testing.T, seen){unsigned, noChecksum}},
		{true, "", false, []func(*testing.T, seen){unsigned, noChecksum}},
		{false, "", true, []func(*testing.T, seen){signed, noChecksum}},
		{true, "", true, []func(*testing.T, seen){signed, noChecksum}},
		{true, "when-supported", false, []func(*testing.T, seen){func(t *testing.T, s seen) {
			if s.trailer == "" || s.sha != "STREAMING-UNSIGNED-PAYLOAD-TRAILER" {
				t.Errorf("HTTPS when-supported: trailer %q payload hash %q, want a trailing checksum", s.trailer, s.sha)
			}
		}}},
		{false, "when-supported", false, []func(*testing.T, seen){unsigned, func(t *testing.T, s seen) {
			if s.checksum == "" {
				t.Errorf("HTTP when-supported: no checksum header")
			}
		}}},
	} {
		t.Run(fmt.Sprintf("tls=%v,checksum=%s,sign=%v", c.tls, c.checksum, c.sign), func(t *testing.T) {
			var got seen
			h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				got = seen{r.Header.Get("Expect"), r.Header.Get("X-Amz-Content-Sha256"), r.Header.Get("Content-Encoding"),
					r.Header.Get("X-Amz-Trailer"), r.Header.Get("X-Amz-Checksum-Crc32")}
				io.Copy(io.Discard, r.Body)
				w.Header().Set("ETag", `"x"`)
			})
			srv := httptest.NewUnstartedServer(h)
			if c.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			s, err := object.Open(context.Background(), "minio", srv.URL+"/b", object.Config{AccessKey: "a", SecretKey: object.NewSecret("b"),
				Insecure: true, Checksum: c.checksum, SignPayload: c.sign})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.Put(context.Background(), "k", strings.NewReader(strings.Repeat("x", 6<<20))); err != nil {
				t.Fatalf("put: %v", err)
			}
			if got.expect != "" {
				t.Errorf("Expect: %s", got.expect)
			}
			for _, check := range c.checks {
				check(t, got)
			}
		})
	}
}

func TestS3StorageClassAndAnonymous(t *testing.T) {
	var class, auth string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		class, auth = r.Header.Get("X-Amz-Storage-Class"), r.Header.Get("Authorization")
		io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	s, err := object.Open(context.Background(), "s3", srv.URL+"/b", object.Config{AccessKey: "a", SecretKey: object.NewSecret("b"), StorageClass: "STANDARD_IA"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(context.Background(), "k", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	if class != "STANDARD_IA" || !strings.HasPrefix(auth, "AWS4-HMAC-SHA256") {
		t.Errorf("storage class %q, authorization %q", class, auth)
	}
	a, err := object.Open(context.Background(), "s3", srv.URL+"/b", object.Config{Anonymous: true, Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if err := a.Put(context.Background(), "k", strings.NewReader("x")); err != nil {
		t.Fatal(err)
	}
	if auth != "" {
		t.Errorf("anonymous request signed: %q", auth)
	}
}
