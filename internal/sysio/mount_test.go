package sysio

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

const mountinfo = `22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,errors=remount-ro
23 22 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw
30 22 0:26 / /dev/shm rw,nosuid,nodev shared:4 - tmpfs tmpfs rw,inode64
41 22 0:35 / /mnt/jfs rw,relatime shared:20 - fuse.juicefs JuiceFS:myjfs rw,user_id=0,group_id=0,default_permissions,allow_other
42 22 0:36 /export /mnt/my\040nfs rw,relatime shared:21 - nfs4 server:/export rw,vers=4.2,rsize=1048576
43 22 254:0 /data /mnt/ro ro,relatime shared:1 - ext4 /dev/vda rw
garbage line without separator
44 22 0:37 / /mnt/jfs/sub rw - tmpfs tmpfs rw
`

func TestParseMountInfo(t *testing.T) {
	ms := ParseMountInfo([]byte(mountinfo))
	if len(ms) != 7 {
		t.Fatalf("parsed %d mounts, want 7", len(ms))
	}
	jfs := ms[3]
	if jfs.ID != 41 || jfs.Parent != 22 || jfs.Major != 0 || jfs.Minor != 35 || jfs.MountPoint != "/mnt/jfs" || jfs.FSType != "fuse.juicefs" || jfs.Source != "JuiceFS:myjfs" || jfs.ReadOnly() {
		t.Errorf("jfs = %+v", jfs)
	}
	if nfs := ms[4]; nfs.MountPoint != "/mnt/my nfs" || nfs.Root != "/export" || nfs.Source != "server:/export" || nfs.SuperOpts != "rw,vers=4.2,rsize=1048576" {
		t.Errorf("nfs = %+v", nfs)
	}
	if !ms[5].ReadOnly() {
		t.Error("ro mount not read-only")
	}
	for path, want := range map[string]string{
		"/":                    "/",
		"/home/x":              "/",
		"/mnt/jfs":             "/mnt/jfs",
		"/mnt/jfs/a/b":         "/mnt/jfs",
		"/mnt/jfsx":            "/",
		"/mnt/jfs/sub/f":       "/mnt/jfs/sub",
		"/mnt/my nfs/dir":      "/mnt/my nfs",
		"/dev/shm":             "/dev/shm",
		"/proc/self/mountinfo": "/proc",
	} {
		m, ok := MountOf(ms, path)
		if !ok || m.MountPoint != want {
			t.Errorf("MountOf(%q) = %q, want %q", path, m.MountPoint, want)
		}
	}
}

func TestFindMountWithProcRoot(t *testing.T) {
	root := t.TempDir()
	os.MkdirAll(filepath.Join(root, "self"), 0o755)
	os.WriteFile(filepath.Join(root, "self", "mountinfo"), []byte(mountinfo), 0o644)
	old := ProcRoot
	ProcRoot = root
	defer func() { ProcRoot = old }()
	m, err := FindMount("/mnt/jfs/bench")
	if err != nil || m.FSType != "fuse.juicefs" {
		t.Fatalf("FindMount = %+v, %v", m, err)
	}
	ProcRoot = filepath.Join(root, "nope")
	if _, err := FindMount("/"); err == nil {
		t.Error("missing mountinfo gave no error")
	}
}

func TestFindMountReal(t *testing.T) {
	m, err := FindMount(t.TempDir())
	if err != nil || m.FSType == "" || m.MountPoint == "" {
		t.Fatalf("FindMount(temp dir) = %+v, %v", m, err)
	}
}

func TestAlignedBuffer(t *testing.T) {
	for _, align := range []int{1, 512, 4096, 65536} {
		b := AlignedBuffer(1<<20+3, align)
		if len(b) != 1<<20+3 || cap(b) != len(b) {
			t.Errorf("align %d: len %d cap %d", align, len(b), cap(b))
		}
		if align > 1 && addrOf(b)%uintptr(align) != 0 {
			t.Errorf("buffer not aligned to %d", align)
		}
	}
	a := Alignment{Mem: 512, Offset: 4096, Source: "statx"}
	if err := a.CheckAligned([]string{"x", "y"}, []int64{8192, 0}); err != nil {
		t.Error(err)
	}
	if err := a.CheckAligned([]string{"x", "--block-size"}, []int64{8192, 1000}); err == nil {
		t.Error("1000 accepted as 4096-aligned")
	}
}

func TestProbeDirectAndCacheDrops(t *testing.T) {
	dir := t.TempDir()
	a, err := ProbeDirect(dir, "test")
	if err != nil {
		testenv.Unavailable(t, "O_DIRECT on the temp dir's file system: %v", err)
	}
	if a.Offset <= 0 || a.Mem <= 0 || a.Offset&(a.Offset-1) != 0 {
		t.Errorf("alignment = %+v", a)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("probe left %v", entries)
	}
	f := filepath.Join(dir, "f")
	os.WriteFile(f, make([]byte, 1<<20), 0o644)
	if err := DropFileCache(f); err != nil {
		t.Error(err)
	}
	if err := DropFileCache(filepath.Join(dir, "missing")); err == nil {
		t.Error("missing file dropped without error")
	}
	if u := GetUsage(); u.MaxRSSBytes <= 0 {
		t.Errorf("usage = %+v", u)
	}
	if Kernel() == "" {
		t.Error("no kernel release")
	}
}

func FuzzParseMountInfo(f *testing.F) {
	f.Add([]byte(mountinfo))
	f.Add([]byte("1 2 3:4 / / rw - x y\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, m := range ParseMountInfo(data) {
			_ = m.ReadOnly()
		}
	})
}
