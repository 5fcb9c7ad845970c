package cli

import (
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCPUProfile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	stop, err := startCPUProfile(path)
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for i := range 20_000_000 {
		x += i % 7
	}
	_ = x
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f) // a profile is gzipped protocol buffers
	if err != nil {
		t.Fatalf("profile is not gzipped: %v", err)
	}
	if b, err := io.ReadAll(z); err != nil || len(b) == 0 {
		t.Fatalf("profile: %d bytes, %v", len(b), err)
	}
}

func TestCPUProfileOffAndBadPath(t *testing.T) {
	stop, err := startCPUProfile("")
	if err != nil || stop() != nil {
		t.Fatalf("no path: %v", err)
	}
	_, err = startCPUProfile(filepath.Join(t.TempDir(), "missing", "cpu.pprof"))
	if err == nil || !strings.Contains(err.Error(), CPUProfileEnv) {
		t.Fatalf("bad path: %v", err)
	}
}
