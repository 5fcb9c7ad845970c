//go:build unix

package live

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// processAlive reports whether pid names a process, ours or another user's.
func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

func statUID(st os.FileInfo) int {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return int(s.Uid)
	}
	return -1
}
