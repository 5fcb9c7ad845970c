package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
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

// Ext4 returns a directory on an ext4 file system: a new temporary
// directory when the temporary directory is on ext4 already, else a
// loop-mounted ext4 image of the given size (LoopExt4).
func Ext4(t testing.TB, size string) string {
	t.Helper()
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err == nil && st.Type == unix.EXT4_SUPER_MAGIC {
		return dir
	}
	return LoopExt4(t, size)
}

// LoopExt4 makes an ext4 image of the given size (e.g. "128M"), mounts it
// through a loop device on a new directory, and unmounts it when the test
// ends; the loop device is then the only block device under the
// directory. It needs root, mkfs.ext4 and a loop device.
func LoopExt4(t testing.TB, size string) string {
	t.Helper()
	RequireRoot(t)
	mkfs, err := LookPath("mkfs.ext4")
	if err != nil {
		Unavailable(t, "mkfs.ext4 not installed (e2fsprogs)")
	}
	img := t.TempDir() + "/ext4.img"
	if out, err := exec.Command(mkfs, "-q", "-F", img, size).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v: %s", err, out)
	}
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-o", "loop", img, mnt).CombinedOutput(); err != nil {
		Unavailable(t, "loop-mount an ext4 image: %v: %s", err, strings.TrimSpace(string(out)))
	}
	t.Cleanup(func() { unmount(t, mnt) })
	return mnt
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
	NeedsServer(t, "a bindfs FUSE daemon")
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

// DeviceWritten is the bytes written so far to the block device that
// holds dir's file system (/sys/dev/block/MAJ:MIN/stat, whose seventh
// field counts 512-byte sectors written), as a LoopExt4 mount has one.
func DeviceWritten(dir string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return 0, err
	}
	dev := fmt.Sprintf("/sys/dev/block/%d:%d/stat", unix.Major(st.Dev), unix.Minor(st.Dev))
	b, err := os.ReadFile(dev)
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(b))
	if len(f) < 7 {
		return 0, fmt.Errorf("%s: %d fields", dev, len(f))
	}
	n, err := strconv.ParseInt(f[6], 10, 64)
	return n * 512, err
}
