//go:build !linux

package workload

import (
	"os"
	"syscall"
)

// hintAccess does nothing where posix_fadvise is not available.
func hintAccess(fd int, a Access) {}

// readDir reads every entry of a directory.
func (e *Runner) readDir(_ []byte, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return &PathError{Op: "readdir", Path: path, Err: err}
	}
	defer f.Close()
	for {
		names, err := f.Readdirnames(1024)
		if len(names) == 0 || err != nil {
			break
		}
	}
	return nil
}

// syncFS writes back dirty data where syncfs is not available: all of it,
// as sync does.
func syncFS(int) error { syscall.Sync(); return nil }
