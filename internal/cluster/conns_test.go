package cluster_test

// What an agent holds against clients that hold its connections: real
// agents over HTTP, real sockets.

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
)

// idleConn opens a connection, sends a request (without the token if
// token is ""), reads the answer and leaves the connection idle, as a
// client that holds it.
func idleConn(t *testing.T, addr, token string) (net.Conn, *http.Response) {
	t.Helper()
	c, resp, err := tryConn(addr, token)
	if err != nil {
		t.Fatalf("answer on a new connection: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c, resp
}

func tryConn(addr, token string) (net.Conn, *http.Response, error) {
	return tryConnTLS(addr, token, nil)
}

// tryConnTLS is tryConn over TLS with conf, or plain with nil.
func tryConnTLS(addr, token string, conf *tls.Config) (net.Conn, *http.Response, error) {
	var c net.Conn
	var err error
	if conf != nil {
		c, err = tls.Dial("tcp", addr, conf)
	} else {
		c, err = net.Dial("tcp", addr)
	}
	if err != nil {
		return nil, nil, err
	}
	req := "GET /v1/info HTTP/1.1\r\nHost: x\r\n"
	if token != "" {
		req += "Authorization: Bearer " + token + "\r\n"
	}
	_ = c.SetDeadline(time.Now().Add(20 * time.Second))
	br := bufio.NewReader(c)
	resp, err := func() (*http.Response, error) {
		if _, err := io.WriteString(c, req+"\r\n"); err != nil {
			return nil, err
		}
		return http.ReadResponse(br, nil)
	}()
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return &bufConn{c, br}, resp, nil
}

type bufConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// An agent closes connections left idle, so that no client holds its file
// descriptors, and still runs a job.
func TestAgentClosesIdleConnections(t *testing.T) {
	root := t.TempDir()
	a := startAgent(t, root, "--idle-timeout", "300ms")
	var conns []net.Conn
	for range 5 {
		c, resp := idleConn(t, a.addr, "")
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("without the token: %s", resp.Status)
		}
		conns = append(conns, c)
	}
	for i, c := range conns {
		_ = c.SetReadDeadline(time.Now().Add(20 * time.Second))
		if n, err := c.Read(make([]byte, 1)); n != 0 || !errors.Is(err, io.EOF) {
			t.Errorf("idle connection %d: read %d bytes, %v; want it closed by the agent", i, n, err)
		}
	}
	out := coordinator(t, context.Background(), "bench", root, "--big-file-size", "1M", "--small-file-count", "2", "--hosts", a.addr)
	if out.Code != 0 {
		t.Fatalf("a job after idle connections: exit %d: %s", out.Code, out.Stderr)
	}
}

// An agent serves at most --max-connections at once: one more is told so
// (503) at once, and once connections go, it serves again.
func TestAgentConnectionCap(t *testing.T) {
	root := t.TempDir()
	a := startAgent(t, root, "--max-connections", "4")
	var held []net.Conn
	for range 4 {
		c, resp := idleConn(t, a.addr, testToken)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("a connection under the cap: %s", resp.Status)
		}
		held = append(held, c)
	}
	c, resp := idleConn(t, a.addr, testToken)
	c.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a connection over the cap: %s, want 503", resp.Status)
	}
	waitFor(t, 20*time.Second, func() bool { return strings.Contains(a.log.String(), "connections are served already") })
	for _, c := range held {
		c.Close()
	}
	waitFor(t, 20*time.Second, func() bool {
		c, resp, err := tryConn(a.addr, testToken)
		if err != nil {
			return false
		}
		c.Close()
		return resp.StatusCode == http.StatusOK
	})
	out := coordinator(t, context.Background(), "bench", root, "--big-file-size", "1M", "--small-file-count", "2", "--hosts", a.addr)
	if out.Code != 0 {
		t.Fatalf("a job after the cap was reached: exit %d: %s", out.Code, out.Stderr)
	}
}

// Over TLS, a connection beyond the cap is told so over TLS too.
func TestAgentConnectionCapTLS(t *testing.T) {
	root, certs := t.TempDir(), t.TempDir()
	if err := testenv.WriteSelfSigned(certs); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, root, "--max-connections", "1",
		"--tls-cert", filepath.Join(certs, "public.crt"), "--tls-key", filepath.Join(certs, "private.key"))
	pem, err := os.ReadFile(filepath.Join(certs, "public.crt"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	conf := &tls.Config{RootCAs: pool, ServerName: "127.0.0.1"}
	held, resp, err := tryConnTLS(a.addr, testToken, conf)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a connection under the cap: %v %v", resp, err)
	}
	defer held.Close()
	c, resp, err := tryConnTLS(a.addr, testToken, conf)
	if err != nil {
		t.Fatalf("a connection over the cap: %v", err)
	}
	c.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a connection over the cap: %s, want 503", resp.Status)
	}
}
