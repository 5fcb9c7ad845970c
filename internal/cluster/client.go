package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// NewTransport is the HTTP transport a coordinator talks to its agents
// through; the caller adds TLS. Each agent keeps its connection for
// requests open between them, however many agents there are: a
// transport's default (100 idle connections in all) closed most of them
// after each request to a thousand agents, and every ping opened a new one.
// One a host, not more: a second request made while the first was under
// way (a ping during a release) closes its connection after its answer,
// so that the coordinator's open files are two a host at most, the event
// stream's and this one, and the requests in flight (fitFiles).
func NewTransport() *http.Transport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0 // no limit in all
	tr.MaxIdleConnsPerHost = 1
	return tr
}

func (c *Coordinator) request(ctx context.Context, method string, h *host, path string, body any) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.Scheme+"://"+h.addr+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+c.Token)
	req.Close = c.closeConns
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// call makes one request and decodes its answer into out (if not nil).
func (c *Coordinator) call(ctx context.Context, h *host, method, path string, body, out any) error {
	req, err := c.request(ctx, method, h, path, body)
	if err != nil {
		return err
	}
	resp, err := c.Client.Do(req)
	if err != nil {
		return c.unreachable(ctx, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return answerError(resp)
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if err := json.NewDecoder(io.LimitReader(resp.Body, 256<<20)).Decode(out); err != nil {
		return fmt.Errorf("malformed answer: %w", err)
	}
	return nil
}

// unreachable shortens a transport error to what the user needs, and
// names the time limit that ended a request that got no answer: the
// client's limit on one request, or the limit of ctx (see eachHost).
func (c *Coordinator) unreachable(ctx context.Context, err error) error {
	if strings.Contains(err.Error(), "http: server gave HTTP response to HTTPS client") {
		return errors.New("the agent speaks plain HTTP, not TLS: drop --tls-ca, or start the agent with --tls-cert/--tls-key")
	}
	var ne net.Error
	err = bare{err}
	switch cause := context.Cause(ctx); {
	case ctx.Err() != nil && cause != ctx.Err():
		return fmt.Errorf("%v: %w", cause, err)
	case ctx.Err() == nil && c.Client.Timeout > 0 && errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("no answer within %v, the limit on one request to an agent: %w", c.Client.Timeout, err)
	}
	return fmt.Errorf("unreachable: %w", err)
}

// bare is a transport error without the request's URL and addresses,
// which the host's name says already: hosts that fail alike read alike,
// and are told together.
type bare struct{ err error }

func (b bare) Error() string {
	e := b.err
	var ue *url.Error
	if errors.As(e, &ue) {
		e = ue.Err
	}
	var oe *net.OpError
	if errors.As(e, &oe) && oe.Err != nil {
		return oe.Op + ": " + oe.Err.Error()
	}
	return e.Error()
}

func (b bare) Unwrap() error { return b.err }

// answer is an agent's answer that refuses a request.
type answer struct {
	status int
	msg    string
}

func (a *answer) Error() string { return a.msg }

// busy reports whether the agent may take the request later: it had no
// room for another connection, or for another release.
func (a *answer) busy() bool {
	return a.status == http.StatusServiceUnavailable || a.status == http.StatusTooManyRequests
}

func answerError(resp *http.Response) error {
	var eb ErrorBody
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if json.Unmarshal(b, &eb) == nil && eb.Error != "" {
		return &answer{resp.StatusCode, eb.Error}
	}
	return &answer{resp.StatusCode, "agent answered " + resp.Status}
}
