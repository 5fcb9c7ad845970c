package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// TestOriginSharedDevice: while another process reads a file of the same
// loop device over and over, bench reads its own file there (slowed by a
// blkio limit, so that the other reader's bytes outweigh its own): the
// origin of read-big is this process's own bytes, at most 100%, and names
// the device shared, where the device's counter alone said far more than
// the phase read.
func TestOriginSharedDevice(t *testing.T) {
	testenv.NeedsServer(t, "a loop device, a blkio cgroup and a concurrent reader")
	mnt := testenv.LoopExt4(t, "256M")
	other := filepath.Join(mnt, "other")
	if err := os.WriteFile(other, make([]byte, 64<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "rounds")
	reader := exec.Command("sh", "-c", `while :; do dd if="$0" of=/dev/null bs=1M iflag=direct 2>/dev/null; echo >>"$1"; done`, other, marker)
	reader.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-reader.Process.Pid, syscall.SIGKILL)
		reader.Wait()
	})
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break // the reader has read the file once: it is running
		}
		if time.Now().After(deadline) {
			t.Fatal("the concurrent reader did not read its file within a minute")
		}
	}
	cg := blkioCgroup(t, mnt, 8<<20)
	out, err := inCgroup(t, cg, "bench", mnt, "-p", "1", "--big-file-size", "16M", "--block-size", "256K",
		"--small-file-count", "0", "--direct", "--drop-caches", "never", "-o", "json").Output()
	if err != nil {
		t.Fatalf("bench: %v", err)
	}
	r, err := report.ReadJSON(strings.NewReader(string(out)))
	if err != nil {
		t.Fatal(err)
	}
	p := r.FindPhase("read-big")
	if p == nil || p.Origin == nil {
		t.Fatalf("no origin of read-big: %+v", p)
	}
	o := p.Origin
	line := report.OriginLine(p)
	t.Log(line)
	if o.FromStorage == nil || *o.FromStorage > 100 || !o.Own || !o.Shared || o.DeviceBytes == nil || *o.DeviceBytes <= *o.StorageBytes {
		t.Errorf("origin %+v: want the process's own share, at most 100%%, of a shared device", o)
	}
	if !strings.Contains(line, "block device loop") || !strings.Contains(line, "shared device") {
		t.Errorf("origin line %q names no shared loop device", line)
	}
}
