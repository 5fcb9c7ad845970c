package s3

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
)

// stallServer is an S3 endpoint with the handler h makes; it is closed
// when the test ends, after release is closed so that stuck handlers
// return.
func stallServer(t *testing.T, h func(release <-chan struct{}) http.HandlerFunc) object.Storage {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(h(release))
	t.Cleanup(func() { close(release); srv.Close() })
	s, err := object.Open(context.Background(), "minio", srv.URL+"/b", object.Config{AccessKey: "a", SecretKey: object.NewSecret("b"), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// isStall checks that err is the stall error, a net.Error that timed out,
// and came well before the test's own bound.
func isStall(t *testing.T, what string, err error, took time.Duration) {
	t.Helper()
	var se *object.StallError
	var ne net.Error
	if !errors.As(err, &se) || !errors.As(err, &ne) || !ne.Timeout() || !strings.Contains(err.Error(), "no answer from the store for 300ms") {
		t.Errorf("%s: err = %v, want a StallError", what, err)
	}
	if took > 10*time.Second {
		t.Errorf("%s: took %v, the store stalled for good", what, took)
	}
}

// A store that takes requests and never answers (a stopped process):
// every kind of request fails with a StallError after the timeout.
func TestStallNoAnswer(t *testing.T) {
	s := stallServer(t, func(release <-chan struct{}) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { <-release }
	})
	ctx := context.Background()
	calls := map[string]func() error{
		"head": func() error { _, err := s.Head(ctx, "k"); return err },
		"list": func() error { _, err := s.List(ctx, object.ListOptions{}); return err },
		"get":  func() error { _, err := s.Get(ctx, "k", 0, -1); return err },
		"put":  func() error { return s.Put(ctx, "k", bytes.NewReader(make([]byte, 1<<20))) },
	}
	for name, call := range calls {
		t0 := time.Now()
		err := call()
		isStall(t, name, err, time.Since(t0))
	}
}

// A store that stops taking an upload halfway (its socket buffers full) and
// one that stops sending a download halfway: both fail with a StallError.
func TestStallMidTransfer(t *testing.T) {
	s := stallServer(t, func(release <-chan struct{}) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPut {
				<-release // reads nothing of the body
				return
			}
			w.Header().Set("Content-Length", "1048576")
			w.WriteHeader(http.StatusOK)
			w.Write(make([]byte, 4096))
			w.(http.Flusher).Flush()
			<-release
		}
	})
	ctx := context.Background()
	t0 := time.Now()
	err := s.Put(ctx, "big", bytes.NewReader(make([]byte, 256<<20)))
	isStall(t, "put of 256 MiB", err, time.Since(t0))

	rc, err := s.Get(ctx, "k", 0, -1)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	defer rc.Close()
	t0 = time.Now()
	n, err := io.Copy(io.Discard, rc)
	if n != 4096 {
		t.Errorf("read %d bytes before the stall, want 4096", n)
	}
	isStall(t, "body of a get", err, time.Since(t0))
}

// A transfer that keeps moving, slowly, for several times the timeout is
// not cut; nor is a caller that pauses between reads for longer than it.
func TestSlowTransferNotCut(t *testing.T) {
	const chunks = 12
	s := stallServer(t, func(<-chan struct{}) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "12288")
			w.WriteHeader(http.StatusOK)
			for range chunks {
				w.Write(make([]byte, 1024))
				w.(http.Flusher).Flush()
				time.Sleep(100 * time.Millisecond) // 1.2 s in all, the timeout is 300 ms
			}
		}
	})
	rc, err := s.Get(context.Background(), "k", 0, -1)
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	defer rc.Close()
	buf := make([]byte, 1024)
	got := 0
	for {
		n, err := rc.Read(buf)
		got += n
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("after %d bytes: %v", got, err)
		}
		if got == 2048 {
			time.Sleep(time.Second) // the caller pauses; the store is not hung
		}
	}
	if got != chunks*1024 {
		t.Errorf("read %d bytes, want %d", got, chunks*1024)
	}
}
