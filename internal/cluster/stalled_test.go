package cluster_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestStorageStalledFromStart: the storage of PATH answers nothing from
// the very first look (its FUSE daemon stopped before the run starts).
// Launched ranks end by their --rendezvous-timeout and a plain bench 30 s
// after its first look at PATH, each with one line naming the directory,
// exit 1, while the storage is still stopped.
func TestStorageStalledFromStart(t *testing.T) {
	testenv.NeedsServer(t, "launched ranks")
	back := t.TempDir()
	// Never looked up through the mount: no entry the kernel caches
	// answers for the daemon.
	if err := os.Mkdir(filepath.Join(back, "run"), 0o755); err != nil {
		t.Fatal(err)
	}
	mnt := testenv.Bindfs(t, back)
	stopDaemon(t, bindfsDaemon(t, mnt))
	path := filepath.Join(mnt, "run")

	ps := startRanks(t, nil, "7016", []int{0, 1}, 2, append([]string{"bench", path, "--rendezvous-timeout", "3s"}, smallBench...)...)
	plain := exec.Command(testenv.Binary(t), append([]string{"bench", path}, smallBench...)...)
	plain.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NO_COLOR=1"}
	plain.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	p := &rankProc{cmd: plain}
	plain.Stdout, plain.Stderr = &p.out, &p.err
	if err := plain.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = plain.Process.Kill() })
	waitRanks(t, append(ps, p), 3*time.Minute) // a hang guard only

	want := "fsbench: rendezvous " + path + ": the storage did not answer within 3s (--rendezvous-timeout)"
	for i, r := range ps {
		if r.code != 1 || r.err.String() != want+"\n" {
			t.Errorf("rank %d: exit %d, %q; want 1 and %q", i, r.code, r.err.String(), want)
		}
	}
	want = "fsbench: path " + path + ": the storage did not answer within 30s"
	if p.code != 1 || p.err.String() != want+"\n" {
		t.Errorf("plain bench: exit %d, %q; want 1 and %q", p.code, p.err.String(), want)
	}
}
