package objbench

// Tests of the real fsbench binary against real servers: MinIO over HTTP
// and HTTPS, nfs-ganesha, a directory.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/objecttest"
)

// quickArgs keep a full run (every check and item) short.
var quickArgs = []string{"--big-object-size", "32M", "--block-size", "4M", "--small-objects", "30", "--small-object-size", "64K", "-p", "4"}

type runOut = testenv.Output

// fsbench runs the binary with env added to a clean environment.
func fsbench(t *testing.T, env []string, args ...string) runOut {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return testenv.Run(t, ctx, env, args...)
}

// minioEnv returns the server and the environment holding its credentials.
func minioEnv(t *testing.T, tls bool) (*testenv.MinIO, []string) {
	m := testenv.SharedMinIO(t, tls)
	return m, []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + m.SecretKey}
}

// openMinIO opens bucket directly, to look at it from outside the binary.
func openMinIO(t *testing.T, m *testenv.MinIO, bucket string) object.Storage {
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey), CACertFile: m.CACert}
	s, err := object.Open(context.Background(), "minio", m.URL(bucket), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if err := s.Create(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// putPrecious stores an object of the user's that the run must not touch.
// userBucket is a new bucket named prefix-N holding one object of the
// user's, which a run must leave alone (checkPrecious).
func userBucket(t *testing.T, m *testenv.MinIO, prefix string) (string, object.Storage) {
	t.Helper()
	bucket := fmt.Sprintf("%s-%d", prefix, time.Now().UnixNano()%1e9)
	s := openMinIO(t, m, bucket)
	putPrecious(t, s)
	return bucket, s
}

func putPrecious(t *testing.T, s object.Storage) {
	t.Helper()
	if err := s.Put(context.Background(), "precious/data.bin", strings.NewReader("user data, keep")); err != nil {
		t.Fatal(err)
	}
}

func checkPrecious(t *testing.T, s object.Storage) {
	t.Helper()
	keys := objecttest.Keys(t, s)
	if len(keys) != 1 || keys[0] != "precious/data.bin" {
		t.Errorf("after the run the bucket holds %v, want only precious/data.bin", keys)
	}
	rc, err := s.Get(context.Background(), "precious/data.bin", 0, -1)
	if err != nil {
		t.Fatalf("the user's object: %v", err)
	}
	defer rc.Close()
	var b bytes.Buffer
	b.ReadFrom(rc)
	if b.String() != "user data, keep" {
		t.Errorf("the user's object changed: %q", b.String())
	}
}

// checkRun reads the JSON result and checks a complete, healthy run.
func checkRun(t *testing.T, r runOut, resultFile string, wantFS bool, secrets ...string) *report.Result {
	t.Helper()
	if r.Code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", r.Code, r.Stderr, r.Stdout)
	}
	for _, want := range []string{"Start Functional Testing ...", "Start Performance Testing ..."} {
		if !strings.Contains(r.Stderr, want) {
			t.Errorf("stderr lacks %q", want)
		}
	}
	res, err := report.ReadJSON(strings.NewReader(r.Stdout))
	if err != nil {
		t.Fatalf("stdout is not a JSON result: %v\n%s", err, r.Stdout)
	}
	if res.Command != "objbench" || res.Usage.PeakRSSBytes == 0 {
		t.Errorf("result: command %q, usage %+v", res.Command, res.Usage)
	}
	checkResult(t, res, wantFS)
	file, err := os.ReadFile(resultFile)
	if err != nil {
		t.Fatalf("result file: %v", err)
	}
	for _, s := range secrets {
		for name, text := range map[string]string{"stdout": r.Stdout, "stderr": r.Stderr, "result file": string(file)} {
			if strings.Contains(text, s) {
				t.Errorf("the secret %q appears in %s", s, name)
			}
		}
	}
	return res
}

func TestBinaryMinIO(t *testing.T) {
	for _, tls := range []bool{false, true} {
		t.Run(map[bool]string{false: "http", true: "https"}[tls], func(t *testing.T) {
			m, env := minioEnv(t, tls)
			bucket, s := userBucket(t, m, fmt.Sprintf("objbench-%t", tls))
			resFile := filepath.Join(t.TempDir(), "result.json")
			args := append([]string{"objbench", "--storage", "minio", m.URL(bucket), "--json", "--result-file", resFile}, quickArgs...)
			if tls {
				args = append(args, "--ca-cert", m.CACert)
			}
			r := fsbench(t, env, args...)
			res := checkRun(t, r, resFile, false, m.SecretKey)
			if !strings.HasPrefix(res.Target.URL, m.Endpoint+"/"+bucket) || res.Target.Storage != "minio" {
				t.Errorf("target = %+v", res.Target)
			}
			checkPrecious(t, s)
		})
	}
}

func TestBinaryFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "precious"), []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	resFile := filepath.Join(t.TempDir(), "result.json")
	r := fsbench(t, nil, append([]string{"objbench", dir, "--json", "--result-file", resFile}, quickArgs...)...)
	checkRun(t, r, resFile, true)
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("after the run %s holds %d entries, want 1", dir, len(ents))
	}
}

// A missing directory is made as a missing bucket is, and said to be: a
// mistyped mount point must not be benchmarked without a word.
func TestBinaryFileCreatesDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "not", "yet")
	r := fsbench(t, nil, append([]string{"objbench", dir, "--json"}, quickArgs...)...)
	if want := "created directory file://" + dir + "/, which did not exist"; r.Code != 0 || !strings.Contains(r.Stderr, want) {
		t.Fatalf("exit %d, stderr %q; want 0 and %q", r.Code, r.Stderr, want)
	}
	if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
		t.Errorf("after the run %s holds %d entries (%v), want it empty", dir, len(ents), err)
	}
}

func TestBinaryNFS(t *testing.T) {
	n := testenv.SharedNFS(t)
	sub := filepath.Join(n.Export, "objbench")
	if err := os.MkdirAll(filepath.Join(sub, "precious"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sub, "precious", "data.bin"), []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	resFile := filepath.Join(t.TempDir(), "result.json")
	// The HOST:/PATH form.
	url := n.Host + ":" + sub
	r := fsbench(t, nil, append([]string{"objbench", "--storage", "nfs", url, "--json", "--result-file", resFile}, quickArgs...)...)
	checkRun(t, r, resFile, true)
	ents, _ := os.ReadDir(sub)
	if len(ents) != 1 || ents[0].Name() != "precious" {
		t.Errorf("after the run the export holds %v, want only precious", ents)
	}
	if b, _ := os.ReadFile(filepath.Join(sub, "precious", "data.bin")); string(b) != "keep" {
		t.Errorf("the user's file changed: %q", b)
	}
}

func TestBinaryNFSMissingExport(t *testing.T) {
	n := testenv.SharedNFS(t)
	r := fsbench(t, nil, "objbench", "--storage", "nfs", "nfs://"+n.Host+"/no/such/export", "--timeout", "3s")
	if r.Code == 0 || strings.Count(strings.TrimSpace(r.Stderr), "\n") != 0 || !strings.Contains(r.Stderr, "no export") {
		t.Errorf("missing export: exit %d, stderr %q; want one line naming the problem", r.Code, r.Stderr)
	}
	if strings.Contains(r.Stderr, "panic") || r.Took > 30*time.Second {
		t.Errorf("missing export: took %v: %s", r.Took, r.Stderr)
	}
}

// Bad credentials, endpoints and certificates: one line, non-zero exit, no
// secret, and no waiting (bounded by --timeout; the test allows a lot).
func TestBinaryFailsFast(t *testing.T) {
	m, _ := minioEnv(t, false)
	mt, _ := minioEnv(t, true)
	closed := closedPort(t)
	const wrong = "wrong-secret-0123456789"
	for _, c := range []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"wrong secret", []string{"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + wrong},
			[]string{"--storage", "minio", m.URL("objbench-wrong")}, "SignatureDoesNotMatch"},
		{"secret in the URL", nil,
			[]string{"--storage", "minio", strings.Replace(m.URL("objbench-wrong"), "://", "://"+m.AccessKey+":"+wrong+"@", 1)}, "SignatureDoesNotMatch"},
		{"unreachable port", []string{"ACCESS_KEY=a", "SECRET_KEY=" + wrong},
			[]string{"--storage", "minio", "http://127.0.0.1:" + closed + "/bucket"}, "connection refused"},
		{"TLS without its CA", []string{"ACCESS_KEY=" + mt.AccessKey, "SECRET_KEY=" + mt.SecretKey},
			[]string{"--storage", "minio", mt.URL("objbench-tls")}, "--ca-cert"},
		{"HTTP to an HTTPS port", []string{"ACCESS_KEY=" + mt.AccessKey, "SECRET_KEY=" + wrong},
			[]string{"--storage", "minio", strings.Replace(mt.URL("b"), "https:", "http:", 1)}, ""},
		{"NFS without a server", nil,
			[]string{"--storage", "nfs", "nfs://127.0.0.2/export", "--timeout", "2s"}, "127.0.0.2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			resFile := filepath.Join(t.TempDir(), "r.json")
			r := fsbench(t, c.env, append([]string{"objbench", "--timeout", "5s", "--result-file", resFile}, c.args...)...)
			if r.Code == 0 || r.Code == 3 {
				t.Errorf("exit %d, want a failure", r.Code)
			}
			if lines := strings.Split(strings.TrimSpace(r.Stderr), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "fsbench: ") {
				t.Errorf("stderr is not one error line:\n%s", r.Stderr)
			}
			if !strings.Contains(r.Stderr, c.want) {
				t.Errorf("stderr %q does not mention %q", r.Stderr, c.want)
			}
			file, _ := os.ReadFile(resFile) // written only if the run got that far
			if strings.Contains(r.Stderr+r.Stdout+string(file), wrong) {
				t.Errorf("the secret appears in the output or the result file: %s", r.Stderr)
			}
			if r.Took > 30*time.Second {
				t.Errorf("took %v", r.Took)
			}
		})
	}
}

func closedPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(l.Addr().String())
	l.Close()
	return port
}

// Ctrl-C in the middle of the performance items: the run stops, deletes
// what it wrote, prints what it measured and exits 130.
func TestBinaryInterrupt(t *testing.T) {
	m, env := minioEnv(t, false)
	bucket, s := userBucket(t, m, "objbench-int")
	resFile := filepath.Join(t.TempDir(), "r.json")
	cmd := exec.Command(testenv.Binary(t), "objbench", "--storage", "minio", m.URL(bucket), "--skip-functional-tests",
		"--big-object-size", "4G", "-p", "2", "--result-file", resFile)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "NO_COLOR=1"}, env...)
	p := testenv.StartProcess(t, cmd)
	// Some uploads done, many to go: with two threads, a third block in
	// the bucket means one thread finished a block and took the next, so
	// the upload counts at least one operation.
	p.Await("three uploaded blocks", 2*time.Minute, func() bool {
		return strings.Contains(p.Stderr(), "Start Performance Testing") && len(blocks(t, s)) >= 3
	})
	p.Signal(syscall.SIGINT)
	t0 := time.Now()
	code, _ := p.Wait(2 * time.Minute)
	if code != 130 {
		t.Fatalf("exit %d, want 130\n%s", code, p.Stderr())
	}
	t.Logf("stopped and cleaned up %v after SIGINT", time.Since(t0).Round(time.Millisecond))
	if !strings.Contains(p.Stdout(), "interrupted") {
		t.Errorf("stdout lacks the partial results:\n%s", p.Stdout())
	}
	b, err := os.ReadFile(resFile)
	if err != nil {
		t.Fatalf("result file: %v", err)
	}
	res, err := report.ReadJSON(bytes.NewReader(b))
	if err != nil || !res.Interrupted || len(res.Phases) == 0 || !res.Phases[0].Incomplete || res.Phases[0].Ops == 0 {
		t.Errorf("result file: interrupted run with an incomplete upload expected; got %v %+v\nstderr:\n%s", err, res, p.Stderr())
	}
	checkPrecious(t, s)
}

// blocks lists the blocks of the big object the run put in s so far.
func blocks(t *testing.T, s object.Storage) []string {
	return slices.DeleteFunc(ours(t, s), func(k string) bool { return !strings.Contains(k, "/big/") })
}

// A store that answers 503 SlowDown to some requests: the run counts them
// as throttled, retries after a pause, and completes.
func TestThrottledCounted(t *testing.T) {
	m, _ := minioEnv(t, false)
	bucket := fmt.Sprintf("objbench-slow-%d", time.Now().UnixNano()%1e6)
	openMinIO(t, m, bucket)
	target, _ := url.Parse(m.Endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Every 7th request for an object (not a listing).
		if r.Method == http.MethodGet && strings.Count(r.URL.Path, "/") > 1 && n.Add(1)%7 == 0 {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	o := small("minio", srv.URL+"/"+bucket)
	o.SkipFunctional = true
	o.Object = object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)}
	res := &report.Result{}
	if err := Run(context.Background(), o, res); err != nil {
		t.Fatalf("Run: %v", err)
	}
	var throttled int64
	for _, p := range res.Phases {
		throttled += p.Throttled
		if p.Errors != 0 {
			t.Errorf("%s: %d errors: %v", p.Name, p.Errors, p.ErrorSamples)
		}
	}
	if throttled == 0 {
		t.Errorf("no throttled requests counted")
	}
}

// A bucket that does not exist and may not be created: one clear error
// before anything is written.
func TestMissingBucketWithoutPermission(t *testing.T) {
	var puts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/xml")
		switch {
		case r.Method == http.MethodGet: // list
			w.WriteHeader(http.StatusNotFound)
			fmt.Fprint(w, `<Error><Code>NoSuchBucket</Code><Message>The specified bucket does not exist</Message></Error>`)
		case r.Method == http.MethodPut && r.URL.Path == "/nobucket": // create
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>`)
		default:
			puts.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
		}
	}))
	defer srv.Close()
	o := small("minio", srv.URL+"/nobucket")
	o.Object = object.Config{AccessKey: "ak", SecretKey: object.NewSecret("sk")}
	err := Run(context.Background(), o, &report.Result{})
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, object.ErrNoBucket) || !errors.Is(err, object.ErrAccess) {
		t.Fatalf("err = %v, want a prepare error: no bucket, access denied", err)
	}
	msg := err.Error()
	if strings.Contains(msg, "\n") || !strings.Contains(msg, "nobucket does not exist") || !strings.Contains(msg, "AccessDenied") {
		t.Errorf("message %q", msg)
	}
	if puts.Load() != 0 {
		t.Errorf("%d other requests were sent", puts.Load())
	}
}

// A missing bucket is created, also with --skip-functional-tests.
func TestBinaryCreatesBucket(t *testing.T) {
	m, env := minioEnv(t, false)
	bucket := fmt.Sprintf("objbench-new-%d", time.Now().UnixNano()%1e6)
	r := fsbench(t, env, "objbench", "--storage", "minio", m.URL(bucket), "--skip-functional-tests",
		"--big-object-size", "8M", "--small-objects", "4", "-p", "2", "--json")
	if r.Code != 0 || !strings.Contains(r.Stderr, "created bucket") {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if keys := objecttest.Keys(t, openMinIO(t, m, bucket)); len(keys) != 0 {
		t.Errorf("objects left in the new bucket: %v", keys)
	}
}

// flipReader flips one byte of a body.
type flipReader struct {
	r   io.ReadCloser
	off int64
	at  int64
}

func (f *flipReader) Read(p []byte) (int, error) {
	n, err := f.r.Read(p)
	if f.at >= f.off && f.at < f.off+int64(n) {
		p[f.at-f.off] ^= 0x55
	}
	f.off += int64(n)
	return n, err
}

func (f *flipReader) Close() error { return f.r.Close() }

// A store that corrupts the downloads of the big object: every download is
// checked, the corruption is counted as errors with the key and offset,
// and the binary exits 1 after printing the results.
func TestCorruptDownloadsDetected(t *testing.T) {
	res := corruptRun(t, "1M", "8M", 5000)
	d := res.FindPhase("download")
	if d == nil || d.Errors != 8 || len(d.ErrorSamples) == 0 || !strings.Contains(d.ErrorSamples[0], "differs from the upload at byte 5000") {
		t.Errorf("download phase = %+v", d)
	}
	if g := res.FindPhase("get-small"); g == nil || g.Errors != 0 {
		t.Errorf("get-small = %+v", g)
	}
}

// Objects larger than a thread's buffer are uploaded streamed from the
// pattern and checked a buffer at a time: a byte flipped past the first
// buffer is still found, at its offset, and the rest verifies.
func TestCorruptStreamedDownloadsDetected(t *testing.T) {
	const at = maxBuffer*2 + 12345
	res := corruptRun(t, "3M", "6M", at)
	d := res.FindPhase("download")
	want := fmt.Sprintf("differs from the upload at byte %d", at)
	if d == nil || d.Errors != 2 || len(d.ErrorSamples) == 0 || !strings.Contains(d.ErrorSamples[0], want) {
		t.Errorf("download phase = %+v", d)
	}
	if u := res.FindPhase("upload"); u == nil || u.Errors != 0 || u.Bytes != 6<<20 {
		t.Errorf("upload phase = %+v", u)
	}
}

// corruptRun runs objbench through a proxy that flips the byte at offset
// at of every download of the big object, and returns its result.
func corruptRun(t *testing.T, blockSize, bigSize string, at int64) *report.Result {
	m, env := minioEnv(t, false)
	bucket := fmt.Sprintf("objbench-bad-%d", time.Now().UnixNano()%1e6)
	openMinIO(t, m, bucket)
	target, _ := url.Parse(m.Endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method == http.MethodGet && strings.Contains(resp.Request.URL.Path, "/big/") {
			resp.Body = &flipReader{r: resp.Body, at: at}
		}
		return nil
	}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	r := fsbench(t, env, "objbench", "--storage", "minio", srv.URL+"/"+bucket, "--skip-functional-tests",
		"--big-object-size", bigSize, "--block-size", blockSize, "--small-objects", "4", "-p", "2", "--json")
	if r.Code != 1 {
		t.Fatalf("exit %d, want 1\n%s", r.Code, r.Stderr)
	}
	res, err := report.ReadJSON(strings.NewReader(r.Stdout))
	if err != nil {
		t.Fatalf("no result on stdout: %v", err)
	}
	return res
}

// A URL with a prefix: the run's keys live below it, and keys beside it
// are not touched.
func TestRunUnderURLPrefix(t *testing.T) {
	m, _ := minioEnv(t, false)
	bucket, s := userBucket(t, m, "objbench-pre")
	o := small("minio", m.URL(bucket)+"/team/bench")
	o.Object = object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)}
	res := &report.Result{}
	var seen []string
	o.Hooks.ItemStart = func(title, _ string, total int64, poll func() int64) { seen = append(seen, title) }
	if err := Run(context.Background(), o, res); err != nil {
		t.Fatalf("Run: %v", err)
	}
	checkResult(t, res, false)
	if !strings.HasSuffix(res.Target.URL, "/"+bucket+"/team/bench/") {
		t.Errorf("target URL %s", res.Target.URL)
	}
	if len(seen) != 7 {
		t.Errorf("progress shown for %v, want the 7 items S3 can do", seen)
	}
	checkPrecious(t, s)
}

// A store that answers every request with 503 SlowDown: the run gives up
// when its limit on reaching the store runs out, and the error names
// both, not just "context deadline exceeded".
func TestAlwaysThrottledNamesCause(t *testing.T) {
	env := []string{"ACCESS_KEY=a", "SECRET_KEY=never-shown-0123"}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { slowDown(w) }))
	defer srv.Close()
	r := fsbench(t, env, "objbench", "--storage", "minio", srv.URL+"/objbench-throttled", "--timeout", "1s")
	want := "(the limit on reaching the store (3 x --timeout), 3s, ran out); the store throttled "
	if r.Code != 1 || !strings.Contains(r.Stderr, "SlowDown") || !strings.Contains(r.Stderr, want) ||
		!strings.HasSuffix(strings.TrimSpace(r.Stderr), "of the attempts (503 SlowDown / 429)") {
		t.Errorf("exit %d, stderr %q; want 1 naming SlowDown and %q", r.Code, r.Stderr, want)
	}
	t.Log(r.Stderr)
}

// TestMinIOTableWhole: on MinIO, the warning of "get partial object" is
// whole in the table and in JSON (the store's own reason, HTTP 416), and
// the items MinIO cannot do (chmod, chown, mtime) are named under the
// performance table instead of being rows of it.
func TestMinIOTableWhole(t *testing.T) {
	m, env := minioEnv(t, false)
	bucket, s := userBucket(t, m, "table")
	resFile := filepath.Join(t.TempDir(), "result.json")
	r := fsbench(t, env, append([]string{"objbench", "--storage", "minio", m.URL(bucket), "--result-file", resFile}, quickArgs...)...)
	if r.Code != 0 {
		t.Fatalf("exit %d\n%s", r.Code, r.Stderr)
	}
	b, err := os.ReadFile(resFile)
	if err != nil {
		t.Fatal(err)
	}
	res, err := report.ReadJSON(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var reason string
	for _, c := range res.Checks {
		if c.Name == "get partial object" {
			reason = c.Reason
		}
	}
	if !strings.HasSuffix(reason, "(HTTP 416)") {
		t.Errorf("JSON reason of get partial object = %q, want the whole reason, ending (HTTP 416)", reason)
	}
	if got := checkCell(r.Stdout, "get partial object"); got != "warning: "+reason {
		t.Errorf("the table does not show the whole reason %q, but %q:\n%s", reason, got, r.Stdout)
	}
	if strings.Contains(r.Stdout, "| change permissions") || !strings.Contains(r.Stdout, "Not supported by this storage, so not measured: change permissions") {
		t.Errorf("unsupported items are rows of the performance table, or not named:\n%s", r.Stdout)
	}
	checkPrecious(t, s)
}

// checkCell is the RESULT cell of a check in the table of functional
// checks, its lines (a long one wraps within the cell) joined by spaces.
func checkCell(table, name string) string {
	var parts []string
	in := false
	for _, l := range strings.Split(table, "\n") {
		cells := strings.Split(l, "|")
		if len(cells) != 5 {
			in = false
			continue
		}
		test := strings.TrimSpace(cells[2])
		switch {
		case test == name:
			in = true
		case test != "":
			in = false
		}
		if in {
			parts = append(parts, strings.TrimSpace(cells[3]))
		}
	}
	return strings.Join(parts, " ")
}
