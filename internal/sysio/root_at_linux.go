//go:build linux

package sysio

import "golang.org/x/sys/unix"

// The calls below give the bare errno, for callers that name the path in
// errors of their own and compare the cause (the workload engine's file
// operations).

// Fd is the root's descriptor (O_PATH), for a caller that makes openat2
// calls beneath it itself.
func (r *Root) Fd() int { return r.fd }

// OpenAt is Open whose error is the bare errno.
func (r *Root) OpenAt(name string, flags int, mode uint32) (int, error) {
	return r.open(clean(name), flags|unix.O_CLOEXEC, mode)
}

// At runs op on the directory that holds name beneath the root, opened
// as Open would, and name's last component, which op must not follow
// (unlinkat, mkdirat, renameat do not). op's error comes back bare.
func (r *Root) At(name string, op func(dir int, base string) error) error {
	dir, base, err := r.parent(name)
	if err != nil {
		return err
	}
	defer r.release(dir)
	return op(dir, base)
}
