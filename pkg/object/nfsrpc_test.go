package object

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"
)

// A call to a server that never answers returns as soon as its context is
// cancelled (not after the call's own bound), and its connection is not
// used again.
func TestRPCCancelInterruptsCall(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conns := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns <- c // read nothing, answer nothing
		}
	}()
	p := &rpcPool{addr: l.Addr().String(), dialWait: 5 * time.Second, callWait: time.Hour, maxIdle: 4}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	err = p.call(ctx, rpcCall{prog: progNFS, vers: 3, proc: 0, args: struct{}{}}, func(*bytes.Reader) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("call: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("call returned after %v: not interrupted", d)
	}
	if len(p.idle) != 0 {
		t.Errorf("the interrupted connection went back to the pool")
	}
	server := <-conns
	server.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, server); err != nil {
		t.Errorf("the interrupted connection is still open: %v", err)
	}
}
