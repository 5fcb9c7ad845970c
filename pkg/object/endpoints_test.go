package object_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/storetest"
	"github.com/fsbench/fsbench/pkg/object/objecttest"
)

func TestParseEndpoint(t *testing.T) {
	for _, c := range []struct{ in, want, bad string }{
		{in: "http://10.0.0.1:9000", want: "http://10.0.0.1:9000"},
		{in: "https://node2.example.com/", want: "https://node2.example.com"},
		{in: "http://[::1]:9000", want: "http://[::1]:9000"},
		{in: "10.0.0.1:9000", bad: "no scheme"},
		{in: "ftp://h:21", bad: `scheme "ftp"`},
		{in: "http://", bad: "no host"},
		{in: "http://h:", bad: "empty port"},
		{in: "http://h:70000", bad: "port 70000"},
		{in: "http://h:9000/bucket", bad: "bucket and prefix"},
		{in: "http://h:9000?x=1", bad: "bucket and prefix"},
		{in: "http://ak:sk@h:9000", bad: "credentials"},
		{in: "http://h:9x", bad: "not a URL"},
	} {
		got, err := object.ParseEndpoint(c.in)
		switch {
		case c.bad == "" && (err != nil || got != c.want):
			t.Errorf("ParseEndpoint(%q) = %q, %v; want %q", c.in, got, err, c.want)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("ParseEndpoint(%q) = %q, %v; want an error saying %q", c.in, got, err, c.bad)
		case c.bad != "" && strings.Contains(err.Error(), "sk@"):
			t.Errorf("ParseEndpoint(%q): the error shows the secret: %v", c.in, err)
		}
	}
}

func TestEndpointsOnlyForS3(t *testing.T) {
	_, err := object.OpenEndpoints(context.Background(), "file", t.TempDir(), []string{"http://127.0.0.1:1"}, object.Config{})
	var ce *object.ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "S3 drivers") {
		t.Fatalf("endpoints on a directory: %v, want a configuration error", err)
	}
	_, err = object.OpenEndpoints(context.Background(), "minio", "http://127.0.0.1:1/b",
		[]string{"http://127.0.0.1:2", "http://127.0.0.1:2/"}, object.Config{AccessKey: "a", SecretKey: object.NewSecret("s")})
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "given twice") {
		t.Fatalf("an endpoint given twice: %v, want a configuration error", err)
	}
}

// minioEndpoints opens the bucket of the shared MinIO through two names
// of the same server, 127.0.0.1 and localhost.
func minioEndpoints(t *testing.T, bucket string) *object.Endpoints {
	m := testenv.SharedMinIO(t, false)
	port := m.Endpoint[strings.LastIndex(m.Endpoint, ":"):]
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey), Threads: 4}
	e, err := object.OpenEndpoints(context.Background(), "minio", m.URL(bucket),
		[]string{"http://127.0.0.1" + port, "http://localhost" + port}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// The conformance suite passes through an Endpoints store, which sends
// every other request to each endpoint and counts them.
func TestEndpointsConformanceMinIO(t *testing.T) {
	e := minioEndpoints(t, "conformance")
	if object.AsMultipart(e) == nil || object.AsVersioner(e) == nil || object.AsFileSystem(e) != nil {
		t.Fatal("an Endpoints store of MinIO must have multipart and versioning, and no file attributes")
	}
	objecttest.Run(t, object.WithPrefix(e, storetest.UniquePrefix()))
	st := e.Stats()
	if len(st) != 2 {
		t.Fatalf("stats of %d endpoints, want 2", len(st))
	}
	total := st[0].Ops + st[1].Ops
	for _, s := range st {
		if s.Ops < total/2-1 || s.Ops > total/2+1 || s.Bytes == 0 || s.Busy <= 0 {
			t.Errorf("endpoint %s: %d of %d requests, %d bytes, busy %s; want half the requests, bytes and time",
				s.Endpoint, s.Ops, total, s.Bytes, s.Busy)
		}
	}
}

// A multi-object delete through two endpoints goes to each in turn and is
// counted as one request there; the keys are gone afterwards.
func TestEndpointsDeleteKeysMinIO(t *testing.T) {
	e := minioEndpoints(t, "batch")
	ctx := context.Background()
	if err := e.Create(ctx); err != nil {
		t.Fatal(err)
	}
	s := object.WithPrefix(e, storetest.UniquePrefix())
	b := object.AsBatchDeleter(s)
	if b == nil {
		t.Fatal("an Endpoints store of MinIO must have multi-object delete")
	}
	keys := []string{"a", "b", "c", "d"}
	for _, k := range keys {
		if err := s.Put(ctx, k, strings.NewReader(k)); err != nil {
			t.Fatal(err)
		}
	}
	before := e.Stats()
	for i := 0; i < len(keys); i += 2 {
		if err := b.DeleteKeys(ctx, keys[i:i+2]); err != nil {
			t.Fatal(err)
		}
	}
	for i, st := range e.Stats() {
		if d := st.Ops - before[i].Ops; d != 1 {
			t.Errorf("endpoint %s: %d requests for two deletes of two keys, want 1", st.Endpoint, d)
		}
	}
	for _, k := range keys {
		if _, err := s.Head(ctx, k); !errors.Is(err, object.ErrNotExist) {
			t.Errorf("%s after the delete: %v, want not found", k, err)
		}
	}
}

// versionedBucket makes a new bucket with versioning on.
func versionedBucket(t *testing.T) object.Storage {
	m := testenv.SharedMinIO(t, false)
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)}
	s := storetest.Open(t, "minio", m.URL(fmt.Sprintf("versions-%d", time.Now().UnixNano())), cfg)
	ctx := context.Background()
	if err := s.Create(ctx); err != nil {
		t.Fatal(err)
	}
	v := object.AsVersioner(s)
	if v == nil {
		t.Fatal("the S3 driver has no versioning")
	}
	if on, err := v.VersioningEnabled(ctx); err != nil || on {
		t.Fatalf("a new bucket: versioning %v, %v; want off", on, err)
	}
	if err := v.EnableVersioning(ctx); err != nil {
		t.Fatal(err)
	}
	if on, err := v.VersioningEnabled(ctx); err != nil || !on {
		t.Fatalf("after EnableVersioning: versioning %v, %v; want on", on, err)
	}
	return object.WithPrefix(s, "p/")
}

func getVersion(t *testing.T, v object.Versioner, key, id string) ([]byte, error) {
	rc, err := v.GetVersion(context.Background(), key, id, 0, -1)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	return io.ReadAll(rc)
}

func listVersions(t *testing.T, v object.Versioner) []object.Version {
	page, err := v.ListVersions(context.Background(), object.VersionListOptions{Prefix: "k"})
	if err != nil {
		t.Fatal(err)
	}
	return page.Versions
}

// Two puts of one key make two versions, each readable; deleting one
// version leaves the other.
func TestVersioningMinIO(t *testing.T) {
	s := versionedBucket(t)
	v := object.AsVersioner(s)
	ctx := context.Background()
	id1, err1 := v.PutVersion(ctx, "k", bytes.NewReader([]byte("first")))
	id2, err2 := v.PutVersion(ctx, "k", bytes.NewReader([]byte("second")))
	if err1 != nil || err2 != nil || id1 == "" || id1 == id2 {
		t.Fatalf("two puts: %q %v, %q %v; want two version IDs", id1, err1, id2, err2)
	}
	for id, want := range map[string]string{id1: "first", id2: "second"} {
		if got, err := getVersion(t, v, "k", id); err != nil || string(got) != want {
			t.Errorf("version %s: %q, %v; want %q", id, got, err, want)
		}
	}
	vs := listVersions(t, v)
	if len(vs) != 2 || vs[0].ID != id2 || !vs[0].Latest || vs[1].ID != id1 || vs[0].Key != "k" {
		t.Fatalf("versions %+v; want %s (latest) then %s of key k", vs, id2, id1)
	}
	if err := v.DeleteVersion(ctx, "k", id1); err != nil {
		t.Fatal(err)
	}
	if _, err := getVersion(t, v, "k", id1); !errors.Is(err, object.ErrNotExist) {
		t.Errorf("deleted version: %v, want ErrNotExist", err)
	}
	if got, err := getVersion(t, v, "k", id2); err != nil || string(got) != "second" {
		t.Errorf("the other version after the delete: %q, %v", got, err)
	}
	if h, err := v.HeadVersion(ctx, "k", id2); err != nil || h.Size != 6 || h.ID != id2 || h.Key != "k" {
		t.Errorf("head of version %s: %+v, %v", id2, h, err)
	}
	if vs := listVersions(t, v); len(vs) != 1 || vs[0].ID != id2 {
		t.Errorf("versions after deleting %s: %+v", id1, vs)
	}
	if err := v.DeleteVersion(ctx, "k", id2); err != nil {
		t.Fatal(err)
	}
	if vs := listVersions(t, v); len(vs) != 0 {
		t.Errorf("versions after deleting both: %+v", vs)
	}
}

// Stores without versioning say so, through prefixes too; an S3 bucket
// with versioning off gives no version ID.
func TestVersioningNotSupported(t *testing.T) {
	f := storetest.Open(t, "file", t.TempDir(), object.Config{})
	if object.AsVersioner(f) != nil || object.AsVersioner(object.WithPrefix(f, "x/")) != nil {
		t.Fatal("a directory claims versioning")
	}
	s := storetest.MinIO(t, false)
	_, err := object.AsVersioner(s).PutVersion(context.Background(), "unversioned", bytes.NewReader([]byte("x")))
	if !errors.Is(err, object.ErrNotSupported) || !strings.Contains(err.Error(), "versioning is off") {
		t.Fatalf("put of a version in an unversioned bucket: %v, want not supported", err)
	}
	_ = s.Delete(context.Background(), "unversioned")
}

// A distributed MinIO of two nodes, one per network namespace: requests
// alternate between the nodes, and what one node took the other serves.
func TestEndpointsDistributedMinIO(t *testing.T) {
	c := testenv.NewMinIOCluster(t, 2)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cfg := object.Config{AccessKey: c.AccessKey, SecretKey: object.NewSecret(c.SecretKey), Threads: 4}
	e, err := object.OpenEndpoints(ctx, "minio", c.URL("nodes"), c.Endpoints, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Create(ctx); err != nil {
		t.Fatal(err)
	}
	const n = 40
	for i := range n {
		data := bytes.Repeat([]byte{byte(i)}, 1000+i)
		if err := e.Put(ctx, fmt.Sprintf("k%d", i), bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
	}
	// Request j goes to node j%2: Create was 0, put i was 1+i; one list
	// makes get i request 42+i, on the other node than its put.
	if page, err := e.List(ctx, object.ListOptions{}); err != nil || len(page.Objects) != n {
		t.Fatalf("list: %v, %v; want %d objects", page, err, n)
	}
	for i := range n {
		rc, err := e.Get(ctx, fmt.Sprintf("k%d", i), 0, -1)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc)
		rc.Close()
		if err != nil || !bytes.Equal(got, bytes.Repeat([]byte{byte(i)}, 1000+i)) {
			t.Fatalf("k%d read through the other node: %d bytes, %v", i, len(got), err)
		}
	}
	checkHalves(t, e.Stats(), 2*n+2)
}

// checkHalves checks that each of two endpoints took half the requests.
func checkHalves(t *testing.T, st []object.EndpointStats, total int64) {
	t.Helper()
	for _, s := range st {
		t.Logf("%s: %d requests, %d bytes, %d errors, busy %s", s.Endpoint, s.Ops, s.Bytes, s.Errors, s.Busy)
		if s.Ops < total/2 || s.Ops > total/2+1 || s.Errors != 0 {
			t.Errorf("endpoint %s: %d requests (%d errors) of %d, want half and no error", s.Endpoint, s.Ops, s.Errors, total)
		}
	}
	if len(st) != 2 || st[0].Endpoint == st[1].Endpoint {
		t.Fatalf("stats %+v, want two endpoints", st)
	}
}

// An endpoint ParseEndpoint accepts parses again to itself, and nothing
// makes it panic.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"http://10.0.0.1:9000", "https://h/", "h:9000", "http://[::1]:1", "http://a:b@h", "http://h:99999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ep, err := object.ParseEndpoint(s)
		if err != nil {
			return
		}
		if again, err := object.ParseEndpoint(ep); err != nil || again != ep {
			t.Fatalf("ParseEndpoint(%q) = %q, which parses to %q, %v", s, ep, again, err)
		}
	})
}

// Probe tells the endpoints that answer from a hung one (named with the
// probe's limit) and a closed port; Only keeps those that answered, and
// what goes through it counts for them.
func TestEndpointsProbeAndOnly(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	hung := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		select {
		case <-hung:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(hung)
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey), Timeout: time.Minute}
	e, err := object.OpenEndpoints(context.Background(), "minio", m.URL("probe"), []string{m.Endpoint, srv.URL, closed.URL}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	errs := e.Probe(context.Background(), object.ListOptions{Limit: 1}, 300*time.Millisecond)
	if len(errs) != 3 || errs[0] != nil && !errors.Is(errs[0], object.ErrNoBucket) ||
		errs[1] == nil || !strings.HasPrefix(errs[1].Error(), "endpoint "+srv.URL+": no answer within 300ms: ") ||
		errs[2] == nil || !strings.Contains(errs[2].Error(), "connection refused") {
		t.Fatalf("probe: %v", errs)
	}
	live := e.Only([]bool{true, false, false})
	if st := live.Stats(); len(st) != 1 || st[0].Endpoint != m.Endpoint {
		t.Fatalf("kept %+v, want only %s", st, m.Endpoint)
	}
	before := e.Stats()[0].Ops
	_, _ = live.List(context.Background(), object.ListOptions{Limit: 1})
	if got := e.Stats()[0].Ops; got != before+1 {
		t.Errorf("a request through the kept endpoint counted %d, want %d", got, before+1)
	}
	if e.Only([]bool{false, false, false}) != nil {
		t.Error("keeping none is not nil")
	}
}
