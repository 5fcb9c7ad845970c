//go:build linux

package sysio

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"unsafe"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"
)

func addrOf(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// AdviseHuge asks the kernel to back the whole huge pages (HugePage bytes,
// aligned) that lie inside buf with transparent huge pages; the rest of buf
// keeps small pages, so the process uses no more memory than before. It
// is advice: a kernel with huge pages off ignores it. A buffer the kernel
// copies from on every write (a stream of file data) then costs one TLB
// entry per 2 MiB instead of 512, which made 1 MiB buffered writes about
// 10% faster on the machine benchmarks/records/fio.md describes.
func AdviseHuge(buf []byte) {
	lo := (addrOf(buf) + HugePage - 1) &^ (HugePage - 1)
	hi := (addrOf(buf) + uintptr(len(buf))) &^ (HugePage - 1)
	if hi <= lo {
		return
	}
	start := int(lo - addrOf(buf))
	_ = unix.Madvise(buf[start:start+int(hi-lo)], unix.MADV_HUGEPAGE)
}

// DirectFlag is the open flag for direct I/O on this system.
const DirectFlag = unix.O_DIRECT

// NoAtimeFlag is the open flag that keeps a read from updating the file's
// access time (O_NOATIME); 0 where there is none.
const NoAtimeFlag = unix.O_NOATIME

// ProbeDirect creates a scratch file in dir with O_DIRECT, reads the
// alignment the kernel requires (statx STATX_DIOALIGN where available), and
// removes the file. dir must be a directory fsbench created.
func ProbeDirect(dir, fsType string) (Alignment, error) {
	p := filepath.Join(dir, ".direct-probe")
	fd, err := unix.Open(p, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_DIRECT|unix.O_CLOEXEC, 0o600)
	if err != nil {
		if refusesDirect(err) {
			return Alignment{}, fmt.Errorf("%w: %s (type %s)", ErrDirectUnsupported, dir, fsType)
		}
		return Alignment{}, fmt.Errorf("probe O_DIRECT in %s: %w", dir, err)
	}
	defer os.Remove(p)
	defer unix.Close(fd)
	a, err := dioAlign(fd, dir, fsType)
	if err != nil {
		return Alignment{}, err
	}
	// A write of one aligned block proves the path really works: some FUSE
	// file systems accept the flag at open and fail the first I/O.
	buf := AlignedBuffer(a.Offset, a.Mem)
	if _, err := unix.Pwrite(fd, buf, 0); err != nil {
		if refusesDirect(err) {
			return Alignment{}, fmt.Errorf("%w: %s (type %s): %v", ErrDirectUnsupported, dir, fsType, err)
		}
		return Alignment{}, fmt.Errorf("probe O_DIRECT write in %s: %w", dir, err)
	}
	return a, nil
}

// dioAlign is the alignment the kernel requires for O_DIRECT on the open
// fd of where (statx STATX_DIOALIGN), DefaultAlign where it does not say;
// ErrDirectUnsupported where it says the file system takes none.
func dioAlign(fd int, where, fsType string) (Alignment, error) {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_DIOALIGN, &st); err != nil || st.Mask&unix.STATX_DIOALIGN == 0 {
		return Alignment{Mem: DefaultAlign, Offset: DefaultAlign, Source: "default"}, nil
	}
	if st.Dio_offset_align == 0 {
		return Alignment{}, fmt.Errorf("%w: %s (type %s)", ErrDirectUnsupported, where, fsType)
	}
	return Alignment{Mem: int(st.Dio_mem_align), Offset: int(st.Dio_offset_align), Source: "statx"}, nil
}

// refusesDirect reports whether err is the kernel's refusal of O_DIRECT
// (at open or at the first I/O).
func refusesDirect(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP)
}

// OpenNoAtime opens path with flags and O_NOATIME, so that reading it
// leaves its access time alone, or plainly where the kernel refuses that
// (EPERM: not the owner, no CAP_FOWNER).
func OpenNoAtime(path string, flags int) (int, error) {
	flags |= unix.O_CLOEXEC
	fd, err := unix.Open(path, flags|NoAtimeFlag, 0)
	if err == unix.EPERM {
		fd, err = unix.Open(path, flags, 0)
	}
	return fd, err
}

// ProbeDirectRead opens an existing file, name beneath directory root
// (a symbolic link on the way followed only while it stays beneath),
// read-only with O_DIRECT, reads the alignment the kernel requires, and
// reads its first aligned block, writing nothing: the probe for data
// that is not fsbench's own.
func ProbeDirectRead(root, name, fsType string) (Alignment, error) {
	path := filepath.Join(root, name)
	fd, err := openBeneathNoAtime(root, name, unix.O_RDONLY|unix.O_DIRECT)
	if err != nil {
		if refusesDirect(err) {
			return Alignment{}, fmt.Errorf("%w: %s (type %s)", ErrDirectUnsupported, path, fsType)
		}
		return Alignment{}, fmt.Errorf("probe O_DIRECT on %s: %w", path, err)
	}
	defer unix.Close(fd)
	a, err := dioAlign(fd, path, fsType)
	if err != nil {
		return Alignment{}, err
	}
	buf := AlignedBuffer(a.Offset, a.Mem)
	if _, err := unix.Pread(fd, buf, 0); err != nil {
		if refusesDirect(err) {
			return Alignment{}, fmt.Errorf("%w: %s (type %s): %v", ErrDirectUnsupported, path, fsType, err)
		}
		return Alignment{}, fmt.Errorf("probe O_DIRECT read of %s: %w", path, err)
	}
	return a, nil
}

// openBeneathNoAtime opens name beneath root with flags and O_NOATIME,
// or without it where the kernel refuses it; the error is the bare cause.
func openBeneathNoAtime(root, name string, flags int) (int, error) {
	r, err := OpenRoot(root)
	if err != nil {
		return -1, PathCause(err)
	}
	defer r.Close()
	fd, err := r.OpenAt(name, flags|NoAtimeFlag, 0)
	if err == unix.EPERM {
		fd, err = r.OpenAt(name, flags, 0)
	}
	return fd, err
}

// DropCaches flushes dirty data and asks the kernel to drop its page,
// dentry and inode caches. It needs root.
func DropCaches() error {
	unix.Sync()
	fd, err := unix.Open(filepath.Join(ProcRoot, "sys/vm/drop_caches"), unix.O_WRONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("drop caches: %w", err)
	}
	defer unix.Close(fd)
	if _, err := unix.Write(fd, []byte("3")); err != nil {
		return fmt.Errorf("drop caches: %w", err)
	}
	return nil
}

// SyncFS writes back the dirty data of the file system that holds dir
// (syncfs(2)), and no other's.
func SyncFS(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("sync %s: %w", dir, err)
	}
	return nil
}

// DropFileCache writes back one file's dirty pages and drops its cached
// pages. It works without privileges, for files we can open.
func DropFileCache(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := unix.Fdatasync(fd); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("fdatasync %s: %w", path, err)
	}
	if err := unix.Fadvise(fd, 0, 0, unix.FADV_DONTNEED); err != nil {
		return fmt.Errorf("fadvise %s: %w", path, err)
	}
	return nil
}

// GetUsage returns this process's CPU time and peak resident memory.
func GetUsage() Usage {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		return Usage{}
	}
	return Usage{
		UserSec:     float64(ru.Utime.Sec) + float64(ru.Utime.Usec)/1e6,
		SysSec:      float64(ru.Stime.Sec) + float64(ru.Stime.Usec)/1e6,
		MaxRSSBytes: peakRSS(ru.Maxrss * 1024), // kilobytes on Linux
	}
}

// peakRSS is this process's own peak resident memory: the high-water mark
// of its memory (VmHWM). The kernel's getrusage figure, maxrss, is kept
// for the process across exec, and a parent that started it by vfork (Go's
// os/exec, posix_spawn) lent it its own memory until then: started from a
// test binary or a CI driver of 200 MiB, fsbench said it had used 200 MiB.
// maxrss is the answer only where /proc cannot be read.
func peakRSS(maxrss int64) int64 {
	p, err := procfs.Self()
	if err != nil {
		return maxrss
	}
	st, err := p.NewStatus()
	if err != nil || st.VmHWM == 0 {
		return maxrss
	}
	return int64(st.VmHWM)
}

// LoadAverage is the system's load average over the last minute: runnable
// and waiting tasks, for comparing how busy the machine was during two
// runs; 0 when unknown.
func LoadAverage() float64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return float64(si.Loads[0]) / (1 << unix.SI_LOAD_SHIFT)
}

// MemoryBytes is the host's memory, 0 when unknown.
func MemoryBytes() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// Kernel returns the kernel release, e.g. "6.1.0-18-amd64".
func Kernel() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return ""
	}
	return unix.ByteSliceToString(u.Release[:])
}

// OpenFileLimit returns how many files the process may have open (the
// soft RLIMIT_NOFILE), or 0 if unknown or unlimited.
func OpenFileLimit() int {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil || r.Cur == unix.RLIM_INFINITY || r.Cur > 1<<30 {
		return 0
	}
	return int(r.Cur)
}

// RaiseOpenFileLimit raises the number of files the process may open to
// at least n, the hard limit too where the process may (root), and
// returns the limit it has then (0: unlimited or unknown).
func RaiseOpenFileLimit(n int) int {
	var r unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &r); err != nil || r.Cur == unix.RLIM_INFINITY || r.Cur >= uint64(n) {
		return OpenFileLimit()
	}
	want := unix.Rlimit{Cur: uint64(n), Max: max(r.Max, uint64(n))}
	if unix.Setrlimit(unix.RLIMIT_NOFILE, &want) != nil && r.Cur < r.Max {
		want = unix.Rlimit{Cur: r.Max, Max: r.Max}
		_ = unix.Setrlimit(unix.RLIMIT_NOFILE, &want)
	}
	return OpenFileLimit()
}

// localMagic are the file systems whose calls run in this kernel on this
// host's memory or disks: a call takes microseconds to milliseconds and no
// server can hold it for minutes.
var localMagic = map[int64]bool{
	unix.TMPFS_MAGIC: true, unix.RAMFS_MAGIC: true, unix.EXT4_SUPER_MAGIC: true, // ext2, ext3 and ext4
	unix.XFS_SUPER_MAGIC: true, unix.BTRFS_SUPER_MAGIC: true, unix.F2FS_SUPER_MAGIC: true,
	unix.OVERLAYFS_SUPER_MAGIC: true, // a container's root, over local layers
}

// LocalFS reports whether the file system holding path is a local kernel
// one (tmpfs, ext4, XFS, Btrfs, F2FS, overlay): not NFS, FUSE, a cluster file
// system or anything else a network or a daemon answers for. It is false
// when path cannot be examined.
func LocalFS(path string) bool {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return false
	}
	return localMagic[int64(st.Type)]
}

// CPUs lists the CPUs the calling thread may run on: the process's as a
// launcher bound it (mpirun binds each of a few ranks to a core), since
// every thread starts with that set. Nil when it cannot be read.
func CPUs() []int {
	var set unix.CPUSet
	if unix.SchedGetaffinity(0, &set) != nil {
		return nil
	}
	var cpus []int
	for c := 0; c < len(set)*64; c++ {
		if set.IsSet(c) {
			cpus = append(cpus, c)
		}
	}
	return cpus
}

// RunOn lets the calling thread run on cpus alone. The caller keeps its
// goroutine on the thread (runtime.LockOSThread) for as long as it wants
// that, and ends the goroutine locked, so that the thread ends with it.
func RunOn(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		if c < 0 || c >= len(set)*64 {
			return fmt.Errorf("CPU %d is out of range", c)
		}
		set.Set(c)
	}
	if set.Count() == 0 {
		return errors.New("no CPU to run on")
	}
	return unix.SchedSetaffinity(0, &set)
}

// CreateNew makes the new file path (it must not exist) for writing and
// appending: through its directory, held open while check, when set, is
// given the directory's real path, and never through a link as its last
// component. An agent checks that the directory lies under its allowed
// roots so: a directory of the path that another user swaps for a link
// after the check is not the one the file is made in.
func CreateNew(path string, perm os.FileMode, check func(dir string) error) (*os.File, error) {
	dir, err := unix.Open(filepath.Dir(path), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: filepath.Dir(path), Err: err}
	}
	defer unix.Close(dir)
	if check != nil {
		real, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(dir))
		if err == nil {
			err = check(real)
		}
		if err != nil {
			return nil, err
		}
	}
	fd, err := unix.Openat(dir, filepath.Base(path), unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "create", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), path), nil
}
