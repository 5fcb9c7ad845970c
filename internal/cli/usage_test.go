package cli

import (
	"encoding/json"
	"runtime"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
)

// TestPeakMemoryIsOwn: fsbench started by a process holding 400 MiB (a
// test binary, a CI driver; Go's os/exec starts it by vfork, whose
// borrowed memory the kernel's maxrss keeps across exec) reports its own
// peak memory, tens of MiB for a small run, not its parent's.
func TestPeakMemoryIsOwn(t *testing.T) {
	ballast := make([]byte, 400<<20)
	for i := range ballast {
		ballast[i] = byte(i) | 1 // resident, not a mapping of zeros
	}
	out, stderr, code := runFsbench(t, "bench", t.TempDir(), "--big-file-size", "4M", "--small-file-count", "8", "-p", "1",
		"--drop-caches", "never", "-o", "json")
	runtime.KeepAlive(ballast)
	var r report.Result
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if peak := r.Usage.PeakRSSBytes; peak <= 0 || peak > 200<<20 {
		t.Errorf("peak memory %d MiB: the parent's 400 MiB, not the run's own", peak>>20)
	}
}
