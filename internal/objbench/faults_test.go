package objbench

// The object store fails while the real binary runs against it: a MinIO
// server of the test's own is killed, or stopped (SIGSTOP), during the
// performance items; the binary is interrupted once or twice at each
// stage. The bucket holds an object of the user's that must come through
// untouched.

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/objecttest"
)

// startObjbench starts the binary on bucket of m with args added.
func startObjbench(t *testing.T, m *testenv.MinIO, bucket string, args ...string) *testenv.Process {
	t.Helper()
	cmd := exec.Command(testenv.Binary(t), append([]string{"objbench", "--storage", "minio", m.URL(bucket), "--json"}, args...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NO_COLOR=1",
		"ACCESS_KEY=" + m.AccessKey, "SECRET_KEY=" + m.SecretKey}
	return testenv.StartProcess(t, cmd)
}

// ours lists the run's keys in s: those under an objbench prefix.
func ours(t *testing.T, s object.Storage) []string {
	var keys []string
	for _, k := range objecttest.Keys(t, s) {
		if strings.HasPrefix(k, "fsbench-objbench-") {
			keys = append(keys, k)
		}
	}
	return keys
}

// lastLine is the last line of text.
func lastLine(text string) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return lines[len(lines)-1]
}

// storeFault runs the binary on a store of its own, breaks the store with
// brk once uploads are under way, and measures how long the binary takes
// to name it; mend then brings the store back.
func storeFault(t *testing.T, brk, mend func(*testenv.MinIO) error) (*testenv.Process, time.Duration, *testenv.MinIO, object.Storage) {
	m := testenv.NewMinIO(t)
	bucket, s := userBucket(t, m, "objbench-fault")
	p := startObjbench(t, m, bucket, "--skip-functional-tests", "--big-object-size", "4G", "-p", "2", "--timeout", "5s")
	p.Await("uploads under way", time.Minute, func() bool { return len(ours(t, s)) >= 4 })
	if err := brk(m); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	p.Await("the store named as not answering", 30*time.Second, func() bool { return strings.Contains(p.Stderr(), "is not answering") })
	took := time.Since(t0)
	if mend != nil {
		if err := mend(m); err != nil {
			t.Fatal(err)
		}
	}
	return p, took, m, s
}

// checkStoreFault checks the end of a run whose store failed and came
// back: exit 1, one error line naming the store, the partial result on
// stdout, what the run wrote deleted, the user's object untouched.
func checkStoreFault(t *testing.T, p *testenv.Process, took time.Duration, m *testenv.MinIO, s object.Storage, what string) {
	t.Helper()
	code, _ := p.Wait(3 * time.Minute)
	t.Logf("%s: reported %v after the fault (--timeout 5s)", what, took.Round(time.Millisecond))
	if took > 10*time.Second {
		t.Errorf("%s: reported after %v, want within 10 s", what, took)
	}
	stderr := p.Stderr()
	last := lastLine(stderr)
	want := regexp.MustCompile(`^fsbench: performance: store ` + regexp.QuoteMeta(m.Endpoint) + `/objbench-fault-\d+/ is not answering: `)
	if code != 1 || !want.MatchString(last) || strings.Contains(stderr, "panic") {
		t.Errorf("%s: exit %d, last line %q; want 1 and the store named\n%s", what, code, last, stderr)
	}
	res, err := report.ReadJSON(strings.NewReader(p.Stdout()))
	if err != nil || !strings.Contains(res.Error, "is not answering") || len(res.Phases) == 0 || !res.Phases[0].Incomplete {
		t.Errorf("%s: result on stdout: %v %+v", what, err, res)
	}
	if strings.Contains(stderr, "left behind") {
		t.Errorf("%s: objects left behind although the store came back:\n%s", what, stderr)
	}
	checkPrecious(t, s)
	t.Logf("%s: stderr:\n%s", what, stderr)
}

// TestStoreKilledMidRun: the MinIO process is killed during the uploads.
// fsbench names the store within seconds, waits for it, and once it is
// restarted on the same data deletes what the run wrote.
func TestStoreKilledMidRun(t *testing.T) {
	p, took, m, s := storeFault(t, (*testenv.MinIO).Kill, (*testenv.MinIO).Restart)
	checkStoreFault(t, p, took, m, s, "killed store")
}

// TestStoreHungMidRun: the MinIO process is stopped (SIGSTOP) during the
// uploads: it keeps its connections and answers nothing. fsbench names it
// after --timeout of silence, and cleans up once it runs again (SIGCONT).
func TestStoreHungMidRun(t *testing.T) {
	p, took, m, s := storeFault(t, (*testenv.MinIO).Pause, (*testenv.MinIO).Resume)
	checkStoreFault(t, p, took, m, s, "hung store")
}

// TestStoreGoneForGood: the store does not come back; Ctrl-C stops the
// wait, and one line names the prefix left behind and says how to remove
// it. The objects are there when the store returns; the user's object is
// untouched.
func TestStoreGoneForGood(t *testing.T) {
	p, _, m, s := storeFault(t, (*testenv.MinIO).Kill, nil)
	p.Await("the wait for the store", 30*time.Second, func() bool { return strings.Contains(p.Stderr(), "waiting up to") })
	p.Signal(syscall.SIGINT)
	code, _ := p.Wait(30 * time.Second)
	stderr := p.Stderr()
	left := regexp.MustCompile(`left behind: the objects under (` + regexp.QuoteMeta(m.Endpoint) + `/objbench-fault-\d+/(fsbench-objbench-[^ ]+/)) \(delete every key under that prefix`).FindStringSubmatch(stderr)
	if code != 1 || left == nil || strings.Contains(stderr, "panic") {
		t.Fatalf("exit %d; want 1 and a line naming the prefix left behind:\n%s", code, stderr)
	}
	t.Logf("stderr:\n%s", stderr)
	if err := m.Restart(); err != nil {
		t.Fatal(err)
	}
	keys := ours(t, s)
	if len(keys) == 0 {
		t.Errorf("nothing under %s, which the line says is left behind", left[1])
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, left[2]) {
			t.Errorf("key %s is not under the prefix named, %s", k, left[2])
		}
		if err := s.Delete(t.Context(), k); err != nil {
			t.Fatal(err)
		}
	}
	checkPrecious(t, s)
}

// holdingProxy stands between the binary and MinIO. Once hold is set, it
// holds the next listing of the bucket (the clean-up's first step), tells
// reached, and lets it through when release is closed.
type holdingProxy struct {
	srv  *httptest.Server
	hold atomic.Bool
	// holdAfterDelete sets hold at the first delete: the listing after the
	// delete item is the clean-up's.
	holdAfterDelete bool
	reached         chan struct{}
	release         chan struct{}
	once            sync.Once
}

func newHoldingProxy(t *testing.T, m *testenv.MinIO) *holdingProxy {
	target, _ := url.Parse(m.Endpoint)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ErrorLog = log.New(io.Discard, "", 0) // requests cut short by the interrupts
	h := &holdingProxy{reached: make(chan struct{}), release: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete && h.holdAfterDelete {
			h.hold.Store(true)
		}
		if r.Method == http.MethodGet && r.URL.Query().Has("list-type") && h.hold.Load() {
			h.once.Do(func() { close(h.reached) })
			<-h.release
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { h.let(); h.srv.Close() })
	return h
}

func (h *holdingProxy) let() {
	select {
	case <-h.release:
	default:
		close(h.release)
	}
}

// interruptAt starts a run through a holding proxy and interrupts it at
// stage: "functional" and "performance" freeze the binary (SIGSTOP) once
// the stage has begun and queue a Ctrl-C for it to find when it runs on;
// "cleanup" lets the run finish its items and interrupts it while the
// proxy holds the clean-up's listing. holdCleanup (for "functional" and
// "performance") sets the proxy to hold the next listing while the binary
// is frozen, before the Ctrl-C: set after it, the clean-up's listing
// could pass first on a busy machine and never be held.
func interruptAt(t *testing.T, stage string, holdCleanup bool) (*testenv.Process, *holdingProxy, object.Storage) {
	m, _ := minioEnv(t, false)
	bucket, s := userBucket(t, m, "objbench-sigint")
	h := newHoldingProxy(t, m)
	pm := *m
	pm.Endpoint = h.srv.URL
	args := []string{"--big-object-size", "1G", "-p", "2"}
	if stage == "cleanup" {
		args = append(args[:0], "--skip-functional-tests", "--big-object-size", "8M", "--small-objects", "10", "-p", "2")
	}
	h.holdAfterDelete = stage == "cleanup"
	p := startObjbench(t, &pm, bucket, args...)
	switch stage {
	case "functional":
		p.Await("the functional checks", time.Minute, func() bool { return len(ours(t, s)) > 0 })
	case "performance":
		p.Await("uploads", time.Minute, func() bool {
			return strings.Contains(p.Stderr(), "Start Performance Testing") && len(ours(t, s)) >= 4
		})
	case "cleanup":
		waitReached(t, h)
		p.Signal(syscall.SIGINT)
		p.Await("the interrupt taken in", time.Minute, func() bool {
			return strings.Contains(p.Stderr(), "fsbench: interrupted: stopping and cleaning up")
		})
		h.let()
		return p, h, s
	}
	p.Signal(syscall.SIGSTOP)
	if stage == "functional" && strings.Contains(p.Stderr(), "Start Performance Testing") {
		t.Fatalf("the functional checks ended before the binary was stopped")
	}
	h.hold.Store(holdCleanup)
	p.Signal(syscall.SIGINT)
	p.Signal(syscall.SIGCONT)
	return p, h, s
}

func waitReached(t *testing.T, h *holdingProxy) {
	t.Helper()
	select {
	case <-h.reached:
	case <-time.After(time.Minute):
		t.Fatal("the clean-up never listed the bucket")
	}
}

// TestInterruptOnce: Ctrl-C at each stage of a run against a real MinIO
// server (the functional checks, the performance items, the clean-up): the
// run stops, deletes what it wrote, prints what it measured and exits
// 130; the user's object is untouched. Every try is counted for the
// report of faults.
func TestInterruptOnce(t *testing.T) {
	for _, stage := range []string{"functional", "performance", "cleanup"} {
		t.Run(stage, func(t *testing.T) {
			p, _, s := interruptAt(t, stage, false)
			code, _ := p.Wait(2 * time.Minute)
			res, err := report.ReadJSON(strings.NewReader(p.Stdout()))
			if code != 130 || err != nil || !res.Interrupted {
				t.Fatalf("exit %d, result %v; want 130 and the interrupted result\n%s", code, err, p.Stderr())
			}
			switch stage {
			case "functional":
				if len(res.Phases) != 0 || strings.Contains(p.Stderr(), "Start Performance Testing") {
					t.Errorf("phases %d: want the checks run so far and no items", len(res.Phases))
				}
			case "performance":
				if len(res.Phases) == 0 || !res.Phases[0].Incomplete || res.Phases[0].Ops == 0 {
					t.Errorf("phases %+v: want an incomplete upload", res.Phases)
				}
			case "cleanup":
				for _, ph := range res.Phases {
					if ph.Incomplete {
						t.Errorf("%s incomplete: every item ran before the clean-up", ph.Name)
					}
				}
				if d := res.FindPhase("delete"); d == nil || d.Ops == 0 {
					t.Errorf("the delete item did not run: %+v", d)
				}
			}
			if strings.Contains(p.Stderr(), "left behind") {
				t.Errorf("left behind:\n%s", p.Stderr())
			}
			t.Logf("single Ctrl-C at %s: cleaned up (objects of the run left: %d)", stage, len(ours(t, s)))
			checkPrecious(t, s)
		})
	}
}

// TestInterruptTwice: a second Ctrl-C while the clean-up runs (held at
// its first listing) ends the binary at once with one line naming the
// prefix left behind and how to remove it; the prefix holds the run's
// objects and nothing else was touched.
func TestInterruptTwice(t *testing.T) {
	for _, stage := range []string{"functional", "performance"} {
		t.Run(stage, func(t *testing.T) {
			p, h, s := interruptAt(t, stage, true)
			waitReached(t, h)
			// fsbench takes one Ctrl-C delivered twice within 50 ms (by a
			// terminal and by timeout, say) for one; this is a second.
			time.Sleep(100 * time.Millisecond)
			p.Signal(syscall.SIGINT)
			t0 := time.Now()
			code, ended := p.Wait(30 * time.Second)
			took := ended.Sub(t0)
			t.Logf("second Ctrl-C at %s: exit after %v", stage, took.Round(time.Millisecond))
			last := lastLine(p.Stderr())
			left := regexp.MustCompile(`^fsbench: interrupted again: left behind the objects under http://127\.0\.0\.1:\d+/objbench-sigint-\d+/(fsbench-objbench-[^ ]+/) \(delete every key under that prefix to remove them\)$`).FindStringSubmatch(last)
			if code != 130 || left == nil {
				t.Fatalf("exit %d, last line %q; want 130 and the prefix left behind\n%s", code, last, p.Stderr())
			}
			if took > 2*time.Second {
				t.Errorf("exit %v after the second Ctrl-C, want at once (2 s at most)", took)
			}
			h.let()
			keys := ours(t, s)
			if len(keys) == 0 && stage == "performance" {
				t.Errorf("the prefix named holds nothing")
			}
			for _, k := range keys {
				if !strings.HasPrefix(k, left[1]) {
					t.Errorf("key %s is not under the prefix named, %s", k, left[1])
				}
				if err := s.Delete(t.Context(), k); err != nil {
					t.Fatal(err)
				}
			}
			checkPrecious(t, s)
		})
	}
}
