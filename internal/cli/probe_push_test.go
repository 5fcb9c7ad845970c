package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// pushOnce runs a probe of one round of a tiny bench that pushes to gw
// and returns its log.
func pushOnce(t *testing.T, gw string) string {
	t.Helper()
	app, _, errb := testApp(nil)
	o := &ProbeOptions{Interval: time.Millisecond, Rounds: 1, HistoryEvery: 1, Push: gw,
		Args: []string{"bench", t.TempDir(), "--rw", "write", "--file-size", "4K", "--ops", "1"}}
	if err := o.resolve(); err != nil {
		t.Fatal(err)
	}
	if err := runProbe(context.Background(), app, o); err != nil {
		t.Fatalf("probe: %v\n%s", err, errb)
	}
	return errb.String()
}

var pushErrorLine = regexp.MustCompile(`(?m)^time=\S+ round=1 push_error=.*$`)

func pushError(t *testing.T, log string) string {
	t.Helper()
	line := pushErrorLine.FindString(log)
	if line == "" {
		t.Fatalf("no push_error line in the log:\n%.2000s", log)
	}
	return line
}

// TestProbePushHugeErrorBody pushes to a gateway that answers 500 with a
// body of 8 MiB: the log line says so in a few hundred bytes.
func TestProbePushHugeErrorBody(t *testing.T) {
	body := strings.Repeat("x", 8<<20)
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
		w.Write([]byte(body))
	}))
	defer gw.Close()
	line := pushError(t, pushOnce(t, gw.URL))
	if len(line) > 500 || !strings.Contains(line, "500") {
		t.Errorf("push_error line of %d bytes, want one under 500 that gives the status: %.600s", len(line), line)
	}
}

// TestProbePushTimeout pushes to a gateway that never answers: the push
// ends with a timeout, and the probe with it.
func TestProbePushTimeout(t *testing.T) {
	hang := make(chan struct{})
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-hang:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(gw.Close)
	t.Cleanup(func() { close(hang) })
	if line := pushError(t, pushOnce(t, gw.URL)); !strings.Contains(line, "no answer within 1s") {
		t.Errorf("push_error %q, want a timeout", line)
	}
}

func TestPushTimeoutFollowsInterval(t *testing.T) {
	for interval, want := range map[time.Duration]time.Duration{
		time.Millisecond: time.Second, 5 * time.Second: 5 * time.Second, 5 * time.Minute: 30 * time.Second,
	} {
		if got := pushClient(interval).Timeout; got != want {
			t.Errorf("--interval %v: push timeout %v, want %v", interval, got, want)
		}
	}
}

// TestProbePushRedirectKeepsCredentials pushes with a user and password
// to a gateway that redirects (307) to a server on another port: that
// server never sees the credentials.
func TestProbePushRedirectKeepsCredentials(t *testing.T) {
	var hits, withAuth atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.Header.Get("Authorization") != "" {
			withAuth.Add(1)
		}
	}))
	defer other.Close()
	gw := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") == "" {
			t.Errorf("the gateway itself got no credentials")
		}
		http.Redirect(w, r, other.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer gw.Close()
	u, _ := url.Parse(gw.URL)
	u.User = url.UserPassword("probe", "SECRET-PW")
	log := pushOnce(t, u.String())
	if n := withAuth.Load(); n > 0 {
		t.Errorf("the server redirected to got the credentials (%d of %d requests)", n, hits.Load())
	}
	line := pushError(t, log)
	if !strings.Contains(line, "redirected") || strings.Contains(line, "SECRET-PW") {
		t.Errorf("push_error %q, want one saying the redirect was not followed, without the password", line)
	}
}
