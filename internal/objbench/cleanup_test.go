package objbench

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// deleteCounter stands between the binary and MinIO and counts the DELETE
// requests in flight at once.
type deleteCounter struct {
	mu             sync.Mutex
	now, most, all int
}

func (d *deleteCounter) add(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.now += n
	if n > 0 {
		d.all++
	}
	d.most = max(d.most, d.now)
}

// The clean-up deletes the run's objects on the run's threads, never on
// more, and leaves nothing of the run and all of the user's.
func TestCleanupUsesThreads(t *testing.T) {
	m, _ := minioEnv(t, false)
	bucket, s := userBucket(t, m, "objclean")
	target, _ := url.Parse(m.Endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var d deleteCounter
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			d.add(1)
			defer d.add(-1)
			time.Sleep(2 * time.Millisecond) // overlaps show even on a fast store
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	pm := *m
	pm.Endpoint = srv.URL
	p := startObjbench(t, &pm, bucket, "--workload", "put", "--ops", "400", "--obj-size", "1K", "-p", "4")
	if code, _ := p.Wait(2 * time.Minute); code != 0 {
		t.Fatalf("exit %d\n%s", code, p.Stderr())
	}
	if d.all < 400 {
		t.Errorf("%d deletes for the 400 objects put", d.all)
	}
	if d.most < 2 || d.most > 4 {
		t.Errorf("at most %d deletes at once; want 2 to 4 with -p 4", d.most)
	}
	checkPrecious(t, s)
}

// slowDown answers an S3 request as a throttling store does.
func slowDown(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusServiceUnavailable)
	fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
}

// A store that throttles one DELETE in 7 (about 14 %) during the clean-up:
// the throttled deletes are tried again after a pause, nothing of the run
// is left, and the warning says how many were throttled.
func TestCleanupRetriesThrottledDeletes(t *testing.T) {
	m, _ := minioEnv(t, false)
	bucket, s := userBucket(t, m, "objthrottle")
	target, _ := url.Parse(m.Endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var n, throttled atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && n.Add(1)%7 == 0 {
			throttled.Add(1)
			slowDown(w)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	pm := *m
	pm.Endpoint = srv.URL
	p := startObjbench(t, &pm, bucket, "--workload", "put", "--ops", "200", "--obj-size", "1K", "-p", "4")
	code, _ := p.Wait(2 * time.Minute)
	if code != 0 || strings.Contains(p.Stderr(), "left behind") {
		t.Fatalf("exit %d\n%s", code, p.Stderr())
	}
	want := fmt.Sprintf("Warning: clean up: the store throttled %d requests (503 SlowDown / 429); they were tried again after a pause", throttled.Load())
	if throttled.Load() == 0 || !strings.Contains(p.Stderr(), want) {
		t.Errorf("%d deletes throttled; stderr lacks %q:\n%s", throttled.Load(), want, p.Stderr())
	}
	t.Logf("%d of %d deletes throttled:\n%s", throttled.Load(), n.Load(), p.Stderr())
	checkPrecious(t, s)
}

// One of two endpoints dies as the clean-up begins: its port closes (new
// connections are refused), or it hangs (it takes requests and never
// answers, as a stopped process does). The clean-up goes on through the
// endpoint that answers, says so, and leaves nothing of the run.
func TestCleanupSkipsDeadEndpoint(t *testing.T) {
	for _, how := range []string{"closed", "hung"} {
		t.Run(how, func(t *testing.T) {
			m, _ := minioEnv(t, false)
			bucket, s := userBucket(t, m, "objdeadep")
			target, _ := url.Parse(m.Endpoint)
			proxy := httputil.NewSingleHostReverseProxy(target)
			var srv *httptest.Server
			var once sync.Once
			var broken atomic.Bool
			release := make(chan struct{})
			srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodDelete && how == "closed" {
					once.Do(func() { go srv.Close() }) // the port closes: later connections are refused
					if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
						conn.Close() // and this request gets no answer
					}
					return
				}
				if r.Method == http.MethodDelete || broken.Load() {
					broken.Store(true)
					select { // no answer to this request or any after it
					case <-release:
					case <-r.Context().Done():
					}
					return
				}
				proxy.ServeHTTP(w, r)
			}))
			defer srv.Close()
			defer close(release)
			dead := srv.URL
			p := startObjbench(t, m, bucket, "--endpoints", dead+","+m.Endpoint, "--timeout", "2s",
				"--workload", "put", "--ops", "100", "--obj-size", "1K", "-p", "4")
			code, _ := p.Wait(4 * time.Minute)
			if code != 0 || strings.Contains(p.Stderr(), "left behind") || strings.Contains(p.Stderr(), "kept appearing") {
				t.Fatalf("exit %d\n%s", code, p.Stderr())
			}
			if want := "Warning: clean up: deleting through the endpoints that answer, without endpoint " + dead + ": "; !strings.Contains(p.Stderr(), want) {
				t.Errorf("stderr lacks %q:\n%s", want, p.Stderr())
			}
			t.Log(p.Stderr())
			checkPrecious(t, s)
		})
	}
}

// A store that deletes an object and then answers 500 (a reply lost or
// mangled on the way back): the clean-up counts what is left by listing,
// finds nothing, and claims no leftovers.
func TestCleanupCountsWhatIsLeft(t *testing.T) {
	m, _ := minioEnv(t, false)
	bucket, s := userBucket(t, m, "objlostreply")
	target, _ := url.Parse(m.Endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	var n, lost atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && n.Add(1)%5 == 0 {
			rec := httptest.NewRecorder()
			proxy.ServeHTTP(rec, r) // deleted in MinIO
			if rec.Code/100 == 2 {
				lost.Add(1)
			}
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>InternalError</Code><Message>We encountered an internal error.</Message></Error>`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer srv.Close()
	pm := *m
	pm.Endpoint = srv.URL
	p := startObjbench(t, &pm, bucket, "--workload", "put", "--ops", "100", "--obj-size", "1K", "-p", "4")
	code, _ := p.Wait(2 * time.Minute)
	if lost.Load() == 0 {
		t.Fatal("no delete had its answer replaced")
	}
	if code != 0 || strings.Contains(p.Stderr(), "left behind") || strings.Contains(p.Stderr(), "could not be deleted") {
		t.Errorf("exit %d, %d answers lost; nothing is left, yet:\n%s", code, lost.Load(), p.Stderr())
	}
	checkPrecious(t, s)
}
