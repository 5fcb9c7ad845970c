package objbench

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync"
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
