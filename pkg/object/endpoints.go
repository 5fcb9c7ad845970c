package object

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ParseEndpoint checks an endpoint given beside a store's URL and returns
// it as scheme://host[:port]: http or https, a host, and nothing else (no
// credentials, path, query or fragment).
func ParseEndpoint(raw string) (string, error) {
	bad := func(why string) (string, error) {
		return "", ConfigErrorf("invalid endpoint %q: %s (want http(s)://HOST[:PORT])", RedactURL(raw), why)
	}
	if !strings.Contains(raw, "://") {
		return bad("no scheme")
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return bad("not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return bad("scheme " + strconv.Quote(u.Scheme))
	case u.User != nil:
		return bad("credentials belong in the store URL or the flags")
	case u.Hostname() == "":
		return bad("no host")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return bad("the bucket and prefix come from the store URL")
	case strings.HasSuffix(u.Host, ":"):
		return bad("empty port")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return bad("port " + p)
		}
	}
	return u.Scheme + "://" + u.Host, nil
}

// EndpointStats are the counts of one endpoint of an Endpoints store.
type EndpointStats struct {
	Endpoint string // scheme://host[:port]
	Ops      int64  // requests sent to it
	Bytes    int64  // bytes of objects and parts sent or received
	Errors   int64  // requests that failed (a missing key is no failure)
	// Busy is the sum of its requests' times (a get's to the response
	// headers, not to the end of the body).
	Busy time.Duration
}

// Sub returns the counts of s since an earlier snapshot of the same
// endpoint.
func (s EndpointStats) Sub(before EndpointStats) EndpointStats {
	s.Ops -= before.Ops
	s.Bytes -= before.Bytes
	s.Errors -= before.Errors
	s.Busy -= before.Busy
	return s
}

// Endpoints is one store reached through several endpoints (the nodes of
// a cluster, or gateways in front of it): each request goes to the next
// endpoint in turn, and each endpoint keeps its own counts, so that a
// slow or failing node shows. It has the capabilities of the store (see
// AsMultipart, AsVersioner).
type Endpoints struct {
	eps  []*endpoint
	next atomic.Uint64
}

type endpoint struct {
	name                    string
	s                       Storage
	ops, bytes, errs, nanos atomic.Int64
}

var (
	_ Wrapper           = (*Endpoints)(nil)
	_ MultipartUploader = (*Endpoints)(nil)
	_ Versioner         = (*Endpoints)(nil)
)

// OpenEndpoints opens the store of the given type at rawURL once per
// endpoint (see Config.Endpoint), all checked before any is opened.
func OpenEndpoints(ctx context.Context, storageType, rawURL string, endpoints []string, cfg Config) (*Endpoints, error) {
	if len(endpoints) == 0 {
		return nil, ConfigErrorf("no endpoints given")
	}
	names, err := parseEndpoints(endpoints)
	if err != nil {
		return nil, err
	}
	e := &Endpoints{}
	for _, name := range names {
		cfg.Endpoint = name
		s, err := Open(ctx, storageType, rawURL, cfg)
		if err != nil {
			e.Close()
			return nil, err
		}
		e.eps = append(e.eps, &endpoint{name: name, s: s})
	}
	return e, nil
}

func parseEndpoints(endpoints []string) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	for _, raw := range endpoints {
		name, err := ParseEndpoint(strings.TrimSpace(raw))
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, ConfigErrorf("endpoint %s is given twice", name)
		}
		seen[name] = true
		names = append(names, name)
	}
	return names, nil
}

// Stats returns the counts of every endpoint, in the order given.
func (e *Endpoints) Stats() []EndpointStats {
	out := make([]EndpointStats, len(e.eps))
	for i, ep := range e.eps {
		out[i] = EndpointStats{Endpoint: ep.name, Ops: ep.ops.Load(), Bytes: ep.bytes.Load(),
			Errors: ep.errs.Load(), Busy: time.Duration(ep.nanos.Load())}
	}
	return out
}

// pick returns the endpoint of the next request.
func (e *Endpoints) pick() *endpoint {
	i := e.next.Add(1) - 1
	return e.eps[i%uint64(len(e.eps))]
}

// done counts one request that began at start and moved n bytes.
func (ep *endpoint) done(start time.Time, n int64, err error) {
	ep.ops.Add(1)
	ep.nanos.Add(int64(time.Since(start)))
	if err == nil {
		ep.bytes.Add(n)
	} else if !errors.Is(err, ErrNotExist) && !errors.Is(err, context.Canceled) {
		ep.errs.Add(1)
	}
}

// String describes the store by its first endpoint.
func (e *Endpoints) String() string { return e.eps[0].s.String() }

// Unwrap returns the store at the first endpoint, which has the same
// capabilities as the others.
func (e *Endpoints) Unwrap() Storage { return e.eps[0].s }

// Close closes the store at every endpoint.
func (e *Endpoints) Close() error {
	var errs []error
	for _, ep := range e.eps {
		errs = append(errs, ep.s.Close())
	}
	return errors.Join(errs...)
}

// Create creates the bucket through the next endpoint.
func (e *Endpoints) Create(ctx context.Context) error {
	ep, t := e.pick(), time.Now()
	err := ep.s.Create(ctx)
	ep.done(t, 0, err)
	return err
}

// Put stores key through the next endpoint.
func (e *Endpoints) Put(ctx context.Context, key string, data io.ReadSeeker) error {
	n := bodySize(data)
	ep, t := e.pick(), time.Now()
	err := ep.s.Put(ctx, key, data)
	ep.done(t, n, err)
	return err
}

// Get reads key through the next endpoint; the bytes are counted as they
// are read.
func (e *Endpoints) Get(ctx context.Context, key string, off, limit int64) (io.ReadCloser, error) {
	ep, t := e.pick(), time.Now()
	rc, err := ep.s.Get(ctx, key, off, limit)
	ep.done(t, 0, err)
	if err != nil {
		return nil, err
	}
	return &countedBody{ReadCloser: rc, ep: ep}, nil
}

// bodySize is how many bytes a put sends: data is read from offset 0 to
// its end. A body that cannot seek is not counted.
func bodySize(data io.Seeker) int64 {
	n, err := data.Seek(0, io.SeekEnd)
	if _, err2 := data.Seek(0, io.SeekStart); err != nil || err2 != nil {
		return 0
	}
	return n
}

// countedBody adds the bytes read to its endpoint's count.
type countedBody struct {
	io.ReadCloser
	ep *endpoint
}

func (b *countedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.ep.bytes.Add(int64(n))
	return n, err
}

// Head asks the next endpoint.
func (e *Endpoints) Head(ctx context.Context, key string) (Object, error) {
	ep, t := e.pick(), time.Now()
	o, err := ep.s.Head(ctx, key)
	ep.done(t, 0, err)
	return o, err
}

// Delete deletes key through the next endpoint.
func (e *Endpoints) Delete(ctx context.Context, key string) error {
	ep, t := e.pick(), time.Now()
	err := ep.s.Delete(ctx, key)
	ep.done(t, 0, err)
	return err
}

// List lists through the next endpoint.
func (e *Endpoints) List(ctx context.Context, opt ListOptions) (*ListPage, error) {
	ep, t := e.pick(), time.Now()
	page, err := ep.s.List(ctx, opt)
	ep.done(t, 0, err)
	return page, err
}

// Probe lists (opt) through every endpoint at once, each within timeout,
// and returns each endpoint's error, in the order given (nil: it
// answered). A clean-up uses it to find the endpoints it can delete
// through, so that one dead or hung node does not fail the deletes meant
// for the whole store.
func (e *Endpoints) Probe(ctx context.Context, opt ListOptions, timeout time.Duration) []error {
	errs := make([]error, len(e.eps))
	var wg sync.WaitGroup
	for i, ep := range e.eps {
		wg.Go(func() {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			_, err := ep.s.List(pctx, opt)
			switch {
			case err != nil && ctx.Err() == nil && pctx.Err() != nil:
				errs[i] = fmt.Errorf("endpoint %s: no answer within %v: %w", ep.name, timeout, err)
			case err != nil:
				errs[i] = fmt.Errorf("endpoint %s: %w", ep.name, err)
			}
		})
	}
	wg.Wait()
	return errs
}

// Only returns the store reached through the endpoints for which keep is
// true (keep is in the order given), counting into the same per-endpoint
// figures; nil when it keeps none.
func (e *Endpoints) Only(keep []bool) *Endpoints {
	out := &Endpoints{}
	for i, ep := range e.eps {
		if i < len(keep) && keep[i] {
			out.eps = append(out.eps, ep)
		}
	}
	if len(out.eps) == 0 {
		return nil
	}
	return out
}
