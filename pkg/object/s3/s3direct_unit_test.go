package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/fsbench/fsbench/pkg/object"
)

// openDirect opens srv's bucket b and returns its direct path.
func openDirect(t *testing.T, typ, url string, cfg object.Config) (*s3Store, *s3Direct) {
	t.Helper()
	if cfg.AccessKey == "" && !cfg.Anonymous {
		cfg.AccessKey, cfg.SecretKey = "ak", object.NewSecret("sk")
	}
	s, err := object.Open(context.Background(), typ, url, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if w, ok := s.(object.Wrapper); ok {
		s = w.Unwrap()
	}
	st := s.(*s3Store)
	return st, st.direct
}

// The direct path goes where the SDK would: path-style or virtual-hosted,
// AWS's regional hosts, a separate endpoint; it is left out when the SDK
// must compute checksums or sign otherwise than SigV4 for s3.
func TestDirectEndpoints(t *testing.T) {
	for _, c := range []struct {
		typ, url, addr, endpoint, checksum string
		want                               string // scheme://host/path, "" for no direct path
	}{
		{"minio", "http://127.0.0.1:9000/bench/pre", "", "", "", "http://127.0.0.1:9000/bench"},
		{"s3", "https://bkt.s3.us-east-2.amazonaws.com/p", "", "", "", "https://bkt.s3.us-east-2.amazonaws.com"},
		{"s3", "https://bkt.s3.us-east-2.amazonaws.com", "path", "", "", "https://s3.us-east-2.amazonaws.com/bkt"},
		// Too short a name for a host: path-style, as the SDK does.
		{"s3", "https://b.s3.us-east-2.amazonaws.com", "", "", "", "https://s3.us-east-2.amazonaws.com/b"},
		{"s3", "https://ceph.example.com/bucket", "virtual", "", "", "https://bucket.ceph.example.com"},
		{"s3", "https://ceph.example.com/bucket", "", "http://10.0.0.2:7480", "", "http://10.0.0.2:7480/bucket"},
		{"cos", "https://bench-125.cos.ap-guangzhou.myqcloud.com", "", "", "", "https://bench-125.cos.ap-guangzhou.myqcloud.com"},
		{"minio", "http://127.0.0.1:9000/bench", "", "", "when-supported", ""},
	} {
		cfg := object.Config{Addressing: c.addr, Endpoint: c.endpoint, Checksum: c.checksum, Region: "us-east-2", Getenv: func(string) string { return "" }}
		_, d := openDirect(t, c.typ, c.url, cfg)
		got := ""
		if d != nil {
			got = d.base.String()
		}
		if got != c.want {
			t.Errorf("%s %s (%s %s %s): direct path to %q, want %q", c.typ, c.url, c.addr, c.endpoint, c.checksum, got, c.want)
		}
	}
}

// flakyStore is a fake store that answers the first fail requests with
// status and an S3 error, then with 200, and keeps what it was sent.
type flakyStore struct {
	mu     sync.Mutex
	fail   int
	status int
	code   string
	bodies [][]byte
	tokens []string
}

func (r *flakyStore) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	b, _ := io.ReadAll(req.Body)
	r.mu.Lock()
	r.bodies = append(r.bodies, b)
	r.tokens = append(r.tokens, req.Header.Get("X-Amz-Security-Token"))
	n := len(r.bodies)
	r.mu.Unlock()
	if n <= r.fail {
		if r.status == 0 { // a connection reset
			c, _, _ := w.(http.Hijacker).Hijack()
			c.Close()
			return
		}
		w.WriteHeader(r.status)
		io.WriteString(w, "<Error><Code>"+r.code+"</Code><Message>try later</Message></Error>")
		return
	}
	w.Header().Set("Content-Length", "4")
	io.WriteString(w, "body")
}

// 503 SlowDown, 500 and connection resets are retried with the whole
// body each time, up to --retries times; then the error is the store's.
func TestDirectRetries(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 10000)
	for _, c := range []struct {
		status  int
		code    string
		retries int
		kind    error
	}{
		{503, "SlowDown", 2, nil},
		{503, "SlowDown", 1, object.ErrThrottled},
		{0, "", 2, nil},
		{0, "", 0, nil},
	} {
		rec := &flakyStore{fail: 2, status: c.status, code: c.code}
		srv := httptest.NewServer(rec)
		s, d := openDirect(t, "minio", srv.URL+"/b", object.Config{Retries: c.retries, SessionToken: object.NewSecret("token-1")})
		if d == nil {
			t.Fatal("no direct path")
		}
		err := s.Put(context.Background(), "k", bytes.NewReader(data))
		srv.Close()
		want := min(c.retries+1, 3)
		switch {
		case c.retries >= 2 && err != nil:
			t.Errorf("%d %s, %d retries: %v", c.status, c.code, c.retries, err)
		case c.retries < 2 && err == nil:
			t.Errorf("%d %s, %d retries: no error", c.status, c.code, c.retries)
		case c.kind != nil && !errors.Is(err, c.kind):
			t.Errorf("%d %s, %d retries: %v, want %v", c.status, c.code, c.retries, err, c.kind)
		}
		if len(rec.bodies) != want {
			t.Errorf("%d %s, %d retries: %d requests, want %d", c.status, c.code, c.retries, len(rec.bodies), want)
		}
		for i, b := range rec.bodies {
			if c.status != 0 && !bytes.Equal(b, data) || rec.tokens[i] != "token-1" {
				t.Errorf("%d %s: request %d: body of %d bytes, token %q", c.status, c.code, i, len(b), rec.tokens[i])
			}
		}
	}
}

// A 4xx is not retried.
func TestDirectNoRetryOnRefusal(t *testing.T) {
	rec := &flakyStore{fail: 5, status: 403, code: "AccessDenied"}
	srv := httptest.NewServer(rec)
	defer srv.Close()
	s, _ := openDirect(t, "minio", srv.URL+"/b", object.Config{Retries: 3})
	_, err := s.Get(context.Background(), "k", 0, -1)
	if !errors.Is(err, object.ErrAccess) || len(rec.bodies) != 1 {
		t.Errorf("403: %d requests, %v", len(rec.bodies), err)
	}
}

// A get returns at the headers: the caller reads the first bytes while
// the store still holds back the rest.
func TestDirectGetStreams(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "6")
		io.WriteString(w, "abc")
		w.(http.Flusher).Flush()
		<-release
		io.WriteString(w, "def")
	}))
	defer srv.Close()
	defer close(release)
	s, _ := openDirect(t, "minio", srv.URL+"/b", object.Config{})
	rc, err := s.Get(context.Background(), "k", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	buf := make([]byte, 6)
	n, err := rc.Read(buf)
	if err != nil || string(buf[:n]) != "abc" {
		t.Fatalf("first read: %q, %v", buf[:n], err)
	}
	release <- struct{}{}
	rest, err := io.ReadAll(rc)
	if err != nil || string(rest) != "def" {
		t.Errorf("rest: %q, %v", rest, err)
	}
}

// Anonymous requests carry no signature; others carry SigV4 with the
// unsigned payload marker, and the session token when there is one.
func TestDirectSigning(t *testing.T) {
	var auth, sha, token string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		auth, sha, token = r.Header.Get("Authorization"), r.Header.Get("X-Amz-Content-Sha256"), r.Header.Get("X-Amz-Security-Token")
		io.Copy(io.Discard, r.Body)
	}))
	defer srv.Close()
	for _, c := range []struct {
		cfg                 object.Config
		auth, sha, token    string
		wantSigned, wantTok bool
	}{
		{cfg: object.Config{}, wantSigned: true},
		{cfg: object.Config{SessionToken: object.NewSecret("tok")}, wantSigned: true, wantTok: true},
		{cfg: object.Config{Anonymous: true, Getenv: func(string) string { return "" }}},
	} {
		s, _ := openDirect(t, "s3", srv.URL+"/b", c.cfg)
		if err := s.Put(context.Background(), "k", strings.NewReader("x")); err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(auth, "AWS4-HMAC-SHA256 Credential=ak/") != c.wantSigned || (token == "tok") != c.wantTok {
			t.Errorf("%+v: authorization %q, token %q", c.cfg, auth, token)
		}
		if c.wantSigned && (sha != "UNSIGNED-PAYLOAD" || !strings.Contains(auth, "x-amz-content-sha256")) {
			t.Errorf("payload hash %q in %q", sha, auth)
		}
	}
}
