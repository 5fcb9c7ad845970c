package workload

import "golang.org/x/sys/unix"

// hintAccess tells the kernel how a file is about to be read or written,
// as fio does by default (fadvise_hint): random access turns readahead
// off, sequential access widens it.
func hintAccess(fd int, a Access) {
	advice := unix.FADV_SEQUENTIAL
	if a == Random {
		advice = unix.FADV_RANDOM
	}
	_ = unix.Fadvise(fd, 0, 0, advice)
}

// readDir reads every entry of a directory with getdents into the worker's
// buffer: no allocation. The directory is opened beneath the phase's.
func (e *Runner) readDir(dirents []byte, path string) error {
	fd, err := e.beneath.open(e.hold, path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &PathError{Op: "readdir", Path: path, Err: err}
	}
	for {
		n, err := unix.Getdents(fd, dirents)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			unix.Close(fd)
			return &PathError{Op: "readdir", Path: path, Err: err}
		}
		if n <= 0 {
			break
		}
	}
	if err := unix.Close(fd); err != nil {
		return &PathError{Op: "close", Path: path, Err: err}
	}
	return nil
}

// syncFS writes back the dirty data of the file system fd is on.
func syncFS(fd int) error { return unix.Syncfs(fd) }
