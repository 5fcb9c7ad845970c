//go:build linux && (amd64 || arm64)

package workload

import (
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The file system calls of a worker, through Go's usual entry or, with
// hold, through the raw one, which keeps the worker's P (Runner.hold).
//
// Through the usual entry a call hands its P to Go's scheduler and takes it
// back on return. On a process bound to one core, as a rank started by
// mpirun is, that hand-off put other threads of the process on the core
// the worker needed: held, IO500's create phases with 2 ranks on tmpfs ran
// 5 to 8% faster (benchmarks/records/hpc-io500.md).

// cwd is AT_FDCWD, a variable so that it converts to a call's uintptr.
var cwd = unix.AT_FDCWD

// cPath is path with a NUL after it, in buf when it fits: a held call
// allocates nothing for a path that does.
func cPath(buf *[512]byte, path string) (*byte, error) {
	if len(path) >= len(buf) {
		return unix.BytePtrFromString(path)
	}
	if strings.IndexByte(path, 0) >= 0 {
		return nil, unix.EINVAL
	}
	copy(buf[:], path)
	buf[len(path)] = 0
	return &buf[0], nil
}

func errnoOf(e unix.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

func sysOpen(hold bool, path string, flags int, mode uint32) (int, error) {
	if !hold {
		return unix.Open(path, flags, mode)
	}
	var buf [512]byte
	p, err := cPath(&buf, path)
	if err != nil {
		return -1, err
	}
	fd, _, e := unix.RawSyscall6(unix.SYS_OPENAT, uintptr(cwd), uintptr(unsafe.Pointer(p)), uintptr(flags|unix.O_LARGEFILE), uintptr(mode), 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func sysClose(hold bool, fd int) error {
	if !hold {
		return unix.Close(fd)
	}
	_, _, e := unix.RawSyscall(unix.SYS_CLOSE, uintptr(fd), 0, 0)
	return errnoOf(e)
}

func sysPwrite(hold bool, fd int, b []byte, off int64) (int, error) {
	if !hold {
		return unix.Pwrite(fd, b, off)
	}
	return rawIO(unix.SYS_PWRITE64, fd, b, off)
}

func sysPread(hold bool, fd int, b []byte, off int64) (int, error) {
	if !hold {
		return unix.Pread(fd, b, off)
	}
	return rawIO(unix.SYS_PREAD64, fd, b, off)
}

// rawIO is pread or pwrite (trap) through the raw entry.
func rawIO(trap uintptr, fd int, b []byte, off int64) (int, error) {
	n, _, e := unix.RawSyscall6(trap, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(b))), uintptr(len(b)), uintptr(off), 0, 0)
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func sysStat(hold bool, path string, st *unix.Stat_t) error {
	if !hold {
		return unix.Stat(path, st)
	}
	var buf [512]byte
	p, err := cPath(&buf, path)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall6(unix.SYS_NEWFSTATAT, uintptr(cwd), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(st)), 0, 0, 0)
	return errnoOf(e)
}

func sysUnlink(hold bool, path string) error {
	if !hold {
		return unix.Unlink(path)
	}
	var buf [512]byte
	p, err := cPath(&buf, path)
	if err != nil {
		return err
	}
	_, _, e := unix.RawSyscall(unix.SYS_UNLINKAT, uintptr(cwd), uintptr(unsafe.Pointer(p)), 0)
	return errnoOf(e)
}

func sysFstat(hold bool, fd int, st *unix.Stat_t) error {
	if !hold {
		return unix.Fstat(fd, st)
	}
	_, _, e := unix.RawSyscall(unix.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(st)), 0)
	return errnoOf(e)
}

// sysOpenat2 is openat2 beneath dir (RESOLVE_BENEATH), the path in a
// buffer on the stack (no allocation), held or not; ENOSYS where the
// kernel lacks it, EAGAIN when a rename raced the lookup: the caller then
// resolves through sysio.Root.
func sysOpenat2(hold bool, dir int, path string, flags int, mode uint32) (int, error) {
	var buf [512]byte
	p, err := cPath(&buf, path)
	if err != nil {
		return -1, err
	}
	if flags&unix.O_PATH == 0 { // openat2 refuses O_PATH with any flag but a few
		flags |= unix.O_LARGEFILE
	}
	how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
	if flags&unix.O_CREAT != 0 {
		how.Mode = uint64(mode)
	}
	var fd uintptr
	var e unix.Errno
	if hold {
		fd, _, e = unix.RawSyscall6(unix.SYS_OPENAT2, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
	} else {
		fd, _, e = unix.Syscall6(unix.SYS_OPENAT2, uintptr(dir), uintptr(unsafe.Pointer(p)), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
	}
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}
