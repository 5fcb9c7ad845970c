package testenv

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Tmpfs mounts a tmpfs of the given size (e.g. "4m") on a new directory
// and unmounts it when the test ends. It needs root.
func Tmpfs(t testing.TB, size string) string {
	t.Helper()
	return MountFS(t, "tmpfs", "size="+size)
}

// MountFS mounts a file system of a kernel type without a device (tmpfs,
// hugetlbfs, ...) with the given options on a new directory, and unmounts
// it when the test ends. It needs root.
func MountFS(t testing.TB, fsType, data string) string {
	t.Helper()
	RequireRoot(t)
	dir := t.TempDir()
	if err := unix.Mount(fsType, dir, fsType, 0, data); err != nil {
		Unavailable(t, "mount %s: %v", fsType, err)
	}
	t.Cleanup(func() { unmount(t, dir) })
	return dir
}

// ReadOnlyBind bind-mounts src read-only on a new directory and unmounts it
// when the test ends. It needs root.
func ReadOnlyBind(t testing.TB, src string) string {
	t.Helper()
	RequireRoot(t)
	dir := t.TempDir()
	if err := unix.Mount(src, dir, "", unix.MS_BIND, ""); err != nil {
		Unavailable(t, "bind mount: %v", err)
	}
	t.Cleanup(func() { unmount(t, dir) })
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
	return dir
}

// Bindfs mounts src through bindfs, a real FUSE file system, on a new
// directory and unmounts it when the test ends. opts are extra -o options
// (for example "subtype=juicefs" to look like a JuiceFS mount).
func Bindfs(t testing.TB, src string, opts ...string) string {
	t.Helper()
	RequireRoot(t)
	bin, err := LookPath("bindfs")
	if err != nil {
		Unavailable(t, "bindfs not installed")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		Unavailable(t, "/dev/fuse: %v", err)
	}
	dir := t.TempDir()
	args := []string{}
	if len(opts) > 0 {
		args = append(args, "-o", strings.Join(opts, ","))
	}
	args = append(args, src, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
		Unavailable(t, "bindfs %v: %v: %s", args, err, out)
	}
	t.Cleanup(func() { unmount(t, dir) })
	return dir
}

// unmount detaches a mount, retrying briefly while it is busy, and lazily
// as a last resort so a failed test does not leave a mount behind.
func unmount(t testing.TB, dir string) {
	for i := 0; i < 50; i++ {
		err := unix.Unmount(dir, 0)
		if err == nil || err == unix.EINVAL || err == unix.ENOENT {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
		t.Errorf("unmount %s: %v", dir, err)
	}
}
