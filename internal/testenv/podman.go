package testenv

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// PodmanScript is the script through which the image build (make image) and
// the tests run podman, with the runtime and containers.conf settings the
// host needs.
func PodmanScript() string {
	return filepath.Join(RepoRoot(), "internal", "testenv", "podman.sh")
}

// Podman returns the command line that runs podman through PodmanScript,
// skipping t (failing it under CI) when podman or runc is missing.
func Podman(t testing.TB) []string {
	t.Helper()
	NeedsServer(t, "podman")
	if _, err := exec.LookPath("podman"); err != nil {
		Unavailable(t, "podman not found")
	}
	if _, err := LookPath("runc"); err != nil {
		Unavailable(t, "runc not found")
	}
	return []string{"bash", PodmanScript()}
}

// AtExit registers f to run when Main ends, after the package's tests, with
// the stops of the shared servers (the last registered runs first).
func AtExit(f func()) {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	stoppers = append(stoppers, f)
}
