package testenv

import "testing"

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
