package s3

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
)

// stallGuard wraps an HTTP transport so that a request fails with a
// object.StallError when nothing moves for d while it is under way.
func stallGuard(rt http.RoundTripper, d time.Duration) http.RoundTripper {
	return &stallTransport{rt: rt, d: d}
}

type stallTransport struct {
	rt http.RoundTripper
	d  time.Duration
}

func (t *stallTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	wd := &watchdog{d: t.d, ctx: ctx, stalled: &object.StallError{After: t.d}}
	wd.timer = time.AfterFunc(t.d, func() { cancel(wd.stalled) })
	r2 := req.WithContext(ctx)
	// A small body goes out with the headers at once; wrapping it would
	// hide from net/http that it is in memory (see smallBody).
	if req.Body != nil && req.Body != http.NoBody && (req.ContentLength <= 0 || req.ContentLength > smallBody) {
		r2.Body = &sentBody{ReadCloser: req.Body, wd: wd}
		if req.GetBody != nil {
			r2.GetBody = func() (io.ReadCloser, error) {
				b, err := req.GetBody()
				if err != nil {
					return nil, err
				}
				return &sentBody{ReadCloser: b, wd: wd}, nil
			}
		}
	}
	resp, err := t.rt.RoundTrip(r2)
	wd.timer.Stop()
	if err != nil {
		cancel(nil)
		return nil, wd.explain(err)
	}
	resp.Body = &receivedBody{ReadCloser: resp.Body, wd: wd, done: func() { cancel(nil) }}
	return resp, nil
}

// CloseIdleConnections closes the idle connections of the transport below.
func (t *stallTransport) CloseIdleConnections() {
	if c, ok := t.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// watchdog cancels a request's context when it is not kicked for d.
type watchdog struct {
	d       time.Duration
	timer   *time.Timer
	ctx     context.Context
	stalled *object.StallError
}

func (w *watchdog) kick() { w.timer.Reset(w.d) }

// explain replaces the cancellation error of a stalled request by the
// object.StallError that caused it.
func (w *watchdog) explain(err error) error {
	if err != nil && err != io.EOF && context.Cause(w.ctx) == error(w.stalled) {
		return w.stalled
	}
	return err
}

// sentBody is a request body: each read the transport makes to send it is
// progress.
type sentBody struct {
	io.ReadCloser
	wd *watchdog
}

func (b *sentBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.wd.kick()
	}
	return n, err
}

// receivedBody is a response body, watched only while the caller waits in
// Read: a caller that pauses between reads is not taken for a hung store.
type receivedBody struct {
	io.ReadCloser
	wd   *watchdog
	done func()
	once sync.Once
}

func (b *receivedBody) Read(p []byte) (int, error) {
	b.wd.kick()
	n, err := b.ReadCloser.Read(p)
	b.wd.timer.Stop()
	return n, b.wd.explain(err)
}

func (b *receivedBody) Close() error {
	err := b.ReadCloser.Close()
	b.wd.timer.Stop()
	b.once.Do(b.done)
	return err
}
