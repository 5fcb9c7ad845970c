package testenv

import (
	"errors"
	"net"
	"sync"
	"testing"
)

// FreePort returns a TCP port that was free on 127.0.0.1 a moment ago, for
// a server the test starts. Another process may take it in between, so a
// server that can listen on port 0 and report its address is better.
func FreePort(t testing.TB) int {
	t.Helper()
	port, err := freePort()
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	return port
}

// given are the ports freePort has handed out in this process.
var given = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// freePort returns a port free on 127.0.0.1 a moment ago, never one it
// returned before in this process: the system may offer a port again as
// soon as it is closed, and a test that asks for two ports before its
// servers listen (a probe's, then Prometheus's) could get the same one
// twice.
func freePort() (int, error) {
	given.Lock()
	defer given.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if !given.ports[port] {
			given.ports[port] = true
			return port, nil
		}
	}
	return 0, errors.New("the system offered only ports already handed out")
}
