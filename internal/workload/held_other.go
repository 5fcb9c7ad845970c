//go:build !linux || !(amd64 || arm64)

package workload

import "golang.org/x/sys/unix"

// Here every call goes through Go's usual entry: hold is ignored.

func sysOpen(hold bool, path string, flags int, mode uint32) (int, error) {
	return unix.Open(path, flags, mode)
}

func sysClose(hold bool, fd int) error { return unix.Close(fd) }

func sysPwrite(hold bool, fd int, b []byte, off int64) (int, error) { return unix.Pwrite(fd, b, off) }

func sysPread(hold bool, fd int, b []byte, off int64) (int, error) { return unix.Pread(fd, b, off) }

func sysStat(hold bool, path string, st *unix.Stat_t) error { return unix.Stat(path, st) }

func sysUnlink(hold bool, path string) error { return unix.Unlink(path) }

func sysFstat(hold bool, fd int, st *unix.Stat_t) error { return unix.Fstat(fd, st) }
