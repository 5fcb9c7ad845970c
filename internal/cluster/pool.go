package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"
)

// Pool is many agents served by one process, each on its own port: the
// protocol and the sockets are the real ones, the processes are not, so
// that a coordinator can be driven with thousands of agents on one
// machine.
type Pool struct {
	Addrs   []string // host:port of each agent, in order
	agents  []*Agent
	servers []*http.Server
	wg      sync.WaitGroup
}

// ServePool serves n agents made with o, the first on listen (host:port)
// and each next one on the next port; port 0 lets the system choose each
// port. maxConns bounds each agent's connections (MaxConns if 0); with
// tlsConf the agents speak HTTPS.
func ServePool(o AgentOptions, listen string, n, maxConns int, tlsConf *tls.Config) (*Pool, error) {
	host, portText, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("listen %q: %w", listen, err)
	}
	port, err := strconv.Atoi(portText)
	if err != nil || port < 0 || (port > 0 && port+n-1 > 65535) {
		return nil, fmt.Errorf("listen %q: %d ports from %s do not fit below 65536", listen, n, portText)
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	p := &Pool{}
	for i := range n {
		ao := o
		ao.Roots = slices.Clone(o.Roots)
		a, err := NewAgent(ao)
		if err != nil {
			p.Close()
			return nil, err
		}
		next := 0
		if port > 0 {
			next = port + i
		}
		addr := net.JoinHostPort(host, strconv.Itoa(next))
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("listen on %s: %w", addr, err)
		}
		ln = a.Listen(ln, maxConns, tlsConf)
		srv := a.Server()
		if tlsConf != nil {
			srv.TLSConfig = tlsConf
			ln = tls.NewListener(ln, tlsConf)
		}
		p.agents, p.servers = append(p.agents, a), append(p.servers, srv)
		p.Addrs = append(p.Addrs, ln.Addr().String())
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				o.Logf("agent %s: %v", ln.Addr(), err)
			}
		}()
	}
	return p, nil
}

// Close stops every agent: each cancels its job, if any, and removes its
// files.
func (p *Pool) Close() {
	var wg sync.WaitGroup
	for i, a := range p.agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_ = p.servers[i].Shutdown(ctx)
		}()
	}
	wg.Wait()
	p.wg.Wait()
}
