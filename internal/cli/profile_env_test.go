package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartProfile: FSBENCH_CPUPROFILE writes a profile; a path that
// cannot be written is one line on stderr, and the run goes on.
func TestStartProfile(t *testing.T) {
	var errw bytes.Buffer
	if stop := startProfile("", &errw); stop != nil {
		t.Fatal("profiling without a file")
	}
	file := filepath.Join(t.TempDir(), "cpu.prof")
	stop := startProfile(file, &errw)
	if stop == nil {
		t.Fatalf("no profile: %s", errw.String())
	}
	stop()
	if st, err := os.Stat(file); err != nil || st.Size() == 0 {
		t.Fatalf("profile %s: %v", file, err)
	}
	if stop := startProfile(filepath.Join(t.TempDir(), "no", "such", "dir"), &errw); stop != nil {
		t.Fatal("profile started in a missing directory")
	}
	if !strings.HasPrefix(errw.String(), "fsbench: FSBENCH_CPUPROFILE:") || strings.Count(errw.String(), "\n") != 1 {
		t.Errorf("stderr: %q", errw.String())
	}
}
