package testenv

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFreePortNeverTwice: the ports handed out in a process are all
// different, though the system may offer a closed port again at once.
func TestFreePortNeverTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 300 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
}

// TestStartHTTPTakesAnotherPort: a server whose port another process took
// before it listened is started again on another port, and is ready there.
func TestStartHTTPTakesAnotherPort(t *testing.T) {
	NeedsServer(t, "a python http.server")
	python, err := exec.LookPath("python3")
	if err != nil {
		Unavailable(t, "python3: %v", err)
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "-"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "-", "ready"), []byte("ok"), 0o644); err != nil {
		t.Fatal(err)
	}
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	ports := []int{taken.Addr().(*net.TCPAddr).Port, FreePort(t)}
	tries := 0
	proc, url := startHTTP(t, "http.server", func() int { tries++; return ports[tries-1] }, func(addr string) *exec.Cmd {
		_, port, _ := net.SplitHostPort(addr)
		return exec.Command(python, "-m", "http.server", "--bind", "127.0.0.1", "--directory", dir, port)
	})
	if tries != 2 || url != fmt.Sprintf("http://127.0.0.1:%d", ports[1]) || proc.Exited() {
		t.Fatalf("%d tries, %s, exited %v", tries, url, proc.Exited())
	}
}
