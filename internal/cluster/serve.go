package cluster

import (
	"bufio"
	"crypto/tls"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Limits on the connections an agent serves.
const (
	// MaxConns is how many connections an agent serves at once unless told
	// otherwise; one more is answered 503 and closed.
	MaxConns = 64
	// IdleTimeout closes a kept-alive connection that carries no request
	// for this long.
	IdleTimeout = 30 * time.Second
	// RequestTimeout bounds reading a request, its body included, and
	// writing an answer; an event stream sets a deadline per event.
	RequestTimeout = 30 * time.Second
	// refuseTimeout bounds the answer to a connection over the limit, and
	// refuseDrain the reading of its request.
	refuseTimeout = 2 * time.Second
	refuseDrain   = 500 * time.Millisecond
	// refuseLogEvery is how often refusals are logged at most.
	refuseLogEvery = 10 * time.Second
)

// Server is the agent's HTTP server: a connection that sends nothing, an
// idle kept-alive one, a request read too slowly or an answer not taken
// are closed, so that no client holds the agent's file descriptors.
func (a *Agent) Server() *http.Server {
	return &http.Server{Handler: a, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: RequestTimeout,
		WriteTimeout: RequestTimeout, IdleTimeout: a.o.IdleTimeout}
}

// Listen wraps ln so that at most limit connections are served at once
// (MaxConns if limit is 0). A connection beyond them is answered "503
// Service Unavailable" with the reason, and closed: its client hears why
// at once instead of waiting in the listen backlog, and the agent never
// runs out of file descriptors. ln is the plain listener: with tlsConf
// (nil for HTTP) the refusal is spoken over TLS, and the caller puts TLS
// over the listener returned.
func (a *Agent) Listen(ln net.Listener, limit int, tlsConf *tls.Config) net.Listener {
	if limit <= 0 {
		limit = MaxConns
	}
	body, _ := json.Marshal(ErrorBody{Error: "the agent serves " + strconv.Itoa(limit) + " connections at once and has no room for more (--max-connections)"})
	answer := "HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: " +
		strconv.Itoa(len(body)+1) + "\r\n\r\n" + string(body) + "\n"
	// A refusal holds a descriptor until it has read the request
	// (refuseDrain at most): a few at once, the rest closed unanswered.
	return &limitListener{Listener: ln, conns: make(chan struct{}, limit), refusing: make(chan struct{}, max(4, limit/8)),
		answer: []byte(answer), tls: tlsConf, logf: a.o.Logf}
}

// limitListener is a listener that serves a bounded number of
// connections at once and refuses more.
type limitListener struct {
	net.Listener
	conns    chan struct{} // one per connection served
	refusing chan struct{} // one per connection being refused
	answer   []byte
	tls      *tls.Config
	logf     func(format string, args ...any)
	refused  atomic.Int64 // since the last line logged
	logged   atomic.Int64 // when that line was, ns
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		select {
		case l.conns <- struct{}{}:
			return &limitConn{Conn: c, release: func() { <-l.conns }}, nil
		default:
		}
		select {
		case l.refusing <- struct{}{}:
			go l.refuse(c)
		default:
			_ = c.Close() // too many refusals at once to answer each
		}
	}
}

// refuse answers a connection over the limit and closes it. It reads the
// client's request first (for refuseDrain at most), so that closing with
// the request unread does not reset the connection, which can make the
// client lose the answer.
func (l *limitListener) refuse(c net.Conn) {
	defer func() { <-l.refusing }()
	if l.tls != nil {
		c = tls.Server(c, l.tls)
	}
	defer c.Close()
	l.log(c.RemoteAddr())
	_ = c.SetDeadline(time.Now().Add(refuseTimeout))
	if _, err := c.Write(l.answer); err != nil {
		return
	}
	_ = c.SetReadDeadline(time.Now().Add(refuseDrain))
	if req, err := http.ReadRequest(bufio.NewReader(c)); err == nil {
		_, _ = io.Copy(io.Discard, io.LimitReader(req.Body, 64<<10))
	}
}

// log says that connections are refused: the first at once, then at most
// one line per refuseLogEvery with their count, so that a flood of
// connections does not flood the log too.
func (l *limitListener) log(from net.Addr) {
	n := l.refused.Add(1)
	last, now := l.logged.Load(), time.Now().UnixNano()
	if (last != 0 && now-last < int64(refuseLogEvery)) || !l.logged.CompareAndSwap(last, now) {
		return
	}
	l.refused.Add(-n)
	if n == 1 {
		l.logf("refused a connection from %s: %d connections are served already (--max-connections)", from, cap(l.conns))
		return
	}
	l.logf("refused %d connections, the last from %s: %d connections are served already (--max-connections)", n, from, cap(l.conns))
}

// limitConn gives its place back when it closes.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}
