// Package testenv gives tests the real parts they run against: FUSE mounts,
// a MinIO server, an NFS server, the fsbench binary. A part that cannot be
// had skips the test on a developer's machine but fails it under CI
// (CI=true), so a broken set-up cannot hide behind a skip.
//
// It serves tests only: no package but tests and pkg/object's test stores
// imports it, and the comparison
// scripts with fsbench's peers are not here (they are in
// benchmarks/scripts).
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// InCI reports whether the tests run under CI, where every part must be there.
func InCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v == "true" || v == "1" || v == "yes"
}

// Unavailable skips t, or fails it under CI, because a part is missing.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("required test dependency missing (CI=true): "+format, args...)
	}
	t.Skipf("skipped, dependency missing (run internal/testenv/install.sh): "+format, args...)
}

// NeedsServer skips t under -short (make unit), which runs the tests that
// need nothing but Go: it starts no server, daemon, container or browser.
// what names the part t would start.
func NeedsServer(t testing.TB, what string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("-short: needs %s (make test runs it)", what)
	}
}

// RequireRoot skips (or fails under CI) a test that needs root.
func RequireRoot(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Unavailable(t, "test needs root")
	}
}

// BinDir is where install.sh puts the programs it builds.
func BinDir() string {
	if d := os.Getenv("FSBENCH_TEST_BIN"); d != "" {
		return d
	}
	home, _ := os.UserHomeDir()
	return filepath.Join(home, ".cache", "fsbench-test", "bin")
}

// LookPath finds a program on PATH, in BinDir, or in /usr/sbin and /sbin.
func LookPath(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	for _, d := range []string{BinDir(), "/usr/sbin", "/sbin", "/usr/local/sbin"} {
		p := filepath.Join(d, name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

// RepoRoot returns the top of the repository.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

var (
	buildOnce sync.Once
	buildPath string
	buildErr  error
	buildOut  []byte
)

// Main runs a package's tests, then stops the servers they started and
// removes the fsbench binary built for them. Call it from TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
func Main(m *testing.M) {
	if spec := os.Getenv(seccompEnv); spec != "" {
		runDenied(spec)
	}
	code := m.Run()
	StopServers()
	if buildPath != "" {
		os.RemoveAll(filepath.Dir(buildPath))
	}
	os.Exit(code)
}

// Binary builds the fsbench binary once per test process and returns its
// path; Main removes it.
func Binary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fsbench-bin-")
		if err != nil {
			buildErr = err
			return
		}
		buildPath = filepath.Join(dir, "fsbench")
		cmd := exec.Command("go", "build", "-o", buildPath, "./cmd/fsbench")
		cmd.Dir = RepoRoot()
		buildOut, buildErr = cmd.CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("build fsbench: %v\n%s", buildErr, buildOut)
	}
	return buildPath
}
