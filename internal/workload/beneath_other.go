//go:build !linux

package workload

import "golang.org/x/sys/unix"

// beneath resolves names as they are: there is no openat2 here.
type beneath struct{}

func openBeneath(*FilePhase) (beneath, error) { return beneath{}, nil }

func (b *beneath) close() {}

func (b *beneath) open(hold bool, path string, flags int, mode uint32) (int, error) {
	return sysOpen(hold, path, flags, mode)
}

func (b *beneath) stat(hold bool, path string, st *unix.Stat_t) error {
	return sysStat(hold, path, st)
}

func (b *beneath) unlink(hold bool, path string) error         { return sysUnlink(hold, path) }
func (b *beneath) mkdir(path string) error                     { return unix.Mkdir(path, 0o755) }
func (b *beneath) rmdir(path string) error                     { return unix.Rmdir(path) }
func (b *beneath) rename(from, to string) error                { return unix.Rename(from, to) }
func (b *beneath) chmod(path string, mode uint32) error        { return unix.Chmod(path, mode) }
func (b *beneath) utime(path string, ts []unix.Timespec) error { return unix.UtimesNano(path, ts) }
