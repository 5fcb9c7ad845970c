package prom

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// NewRegistry returns a registry holding the Go runtime's and the
// process's own metrics (memory, goroutines, file descriptors), which show
// whether a long run stays flat, and cs.
func NewRegistry(cs ...prometheus.Collector) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	cs = append(cs, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	return reg, nil
}

// Server serves a registry's metrics over HTTP at /metrics.
type Server struct {
	ln  net.Listener
	srv *http.Server
	err chan error
}

// Serve listens on addr (host:port; ":0" picks a free port) and serves
// g's metrics until Close. A bad or busy address fails here, before any
// work starts.
func Serve(addr string, g prometheus.Gatherer) (*Server, error) {
	if addr == "" {
		return nil, errors.New("--metrics-listen: empty address")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(g, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprintln(w, "fsbench: metrics at /metrics")
	})
	s := &Server{ln: ln, err: make(chan error, 1),
		srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, WriteTimeout: time.Minute}}
	go func() { s.err <- s.srv.Serve(ln) }()
	return s, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// URL is the address of the metrics page.
func (s *Server) URL() string { return "http://" + s.Addr() + "/metrics" }

// Close stops the server, letting a scrape in progress finish for a while.
func (s *Server) Close() error {
	if s == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := s.srv.Shutdown(ctx)
	if e := <-s.err; !errors.Is(e, http.ErrServerClosed) && err == nil {
		err = e
	}
	return err
}
