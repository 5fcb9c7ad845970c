package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// KillBindfs kills with SIGKILL the bindfs daemon that serves dir (a mount
// of Bindfs: its command line names dir) and waits until it is gone,
// leaving the mount dead: calls in it fail with ENOTCONN, as when a FUSE
// client crashes.
func KillBindfs(t testing.TB, dir string) {
	t.Helper()
	pid := bindfsPID(dir)
	if pid == 0 {
		t.Fatalf("no bindfs daemon serves %s", dir)
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill bindfs %d: %v", pid, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("bindfs %d did not end", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// RemountBindfs detaches the (dead) mount at dir and mounts src on it
// through bindfs again, as an operator restarts a crashed FUSE client.
func RemountBindfs(t testing.TB, src, dir string) {
	t.Helper()
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil && err != unix.EINVAL {
		t.Fatalf("unmount %s: %v", dir, err)
	}
	bin, err := LookPath("bindfs")
	if err != nil {
		Unavailable(t, "bindfs not installed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, src, dir).CombinedOutput(); err != nil {
		t.Fatalf("bindfs %s %s: %v: %s", src, dir, err, out)
	}
}

// bindfsPID is the process id of the bindfs whose arguments end with dir.
func bindfsPID(dir string) int {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		args := strings.Split(string(bytes.TrimRight(b, "\x00")), "\x00")
		if len(args) >= 2 && filepath.Base(args[0]) == "bindfs" && args[len(args)-1] == dir {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	return 0
}

// alive reports whether pid is a process that has not ended (a zombie
// has).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z'
}
