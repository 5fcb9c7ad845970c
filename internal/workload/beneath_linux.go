//go:build linux

package workload

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/sysio"
)

// beneath is the directory a phase's targets lie in, held open while the
// phase runs: each target is resolved beneath it (openat2
// RESOLVE_BENEATH), whatever the phase does to it (read, stat, list,
// create, write, rename, remove), so that a directory of the tree swapped
// for a symbolic link by another user leads no operation out of it. The
// zero beneath resolves names as they are.
type beneath struct {
	root *sysio.Root
	dir  string // its name, which the targets' paths start with
}

// openBeneath opens the directory of p's targets.
func openBeneath(p *FilePhase) (beneath, error) {
	if p.Targets.root == "" {
		return beneath{}, nil
	}
	r, err := sysio.OpenRoot(p.Targets.root)
	if errors.Is(err, unix.ENOENT) {
		// Gone (unmounted, removed): said of the first target, as its
		// operation would have (the caller explains a vanished directory).
		return beneath{}, &PathError{Op: "open", Path: p.Targets.Paths[0], Err: unix.ENOENT}
	}
	if err != nil {
		return beneath{}, err
	}
	return beneath{r, p.Targets.root}, nil
}

// errEscape is what a resolution beneath the directory refused (EXDEV):
// a symbolic link on the way leads out of it.
var errEscape error = escapeError{}

type escapeError struct{}

func (escapeError) Error() string {
	return "a symbolic link on the way leads out of the run's directory"
}
func (escapeError) Is(target error) bool { return target == unix.EXDEV }

// escaped names EXDEV from a call beneath the directory as errEscape.
func escaped(err error) error {
	if err == unix.EXDEV {
		return errEscape
	}
	return err
}

func (b *beneath) close() {
	if b.root != nil {
		b.root.Close()
		*b = beneath{}
	}
}

// rel is path relative to the directory, when there is one and path lies
// in it.
func (b *beneath) rel(path string) (string, bool) {
	n := len(b.dir)
	if b.root == nil || len(path) <= n+1 || path[n] != '/' || path[:n] != b.dir {
		return "", false
	}
	return path[n+1:], true
}

// open opens path (openFlags's call), beneath the directory when it lies
// in it: openat2 with the path on the stack (no allocation), or through
// sysio.Root where the kernel lacks openat2 or a rename raced the lookup.
func (b *beneath) open(hold bool, path string, flags int, mode uint32) (int, error) {
	rel, ok := b.rel(path)
	if !ok {
		return sysOpen(hold, path, flags, mode)
	}
	if fd, err := sysOpenat2(hold, b.root.Fd(), rel, flags, mode); err != unix.ENOSYS && err != unix.EAGAIN {
		return fd, escaped(err)
	}
	fd, err := b.root.OpenAt(rel, flags, mode)
	return fd, escaped(err)
}

// stat is stat(2) of path. Beneath the directory, the file is opened
// O_PATH (a symbolic link on the way followed only while it stays
// beneath) and fstat'ed.
func (b *beneath) stat(hold bool, path string, st *unix.Stat_t) error {
	if _, ok := b.rel(path); !ok {
		return sysStat(hold, path, st)
	}
	fd, err := b.open(hold, path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	err = sysFstat(hold, fd, st)
	sysClose(hold, fd)
	return err
}

func (b *beneath) unlink(hold bool, path string) error {
	if rel, ok := b.rel(path); ok {
		return escaped(b.root.At(rel, unlinkAt))
	}
	return sysUnlink(hold, path)
}

func (b *beneath) mkdir(path string) error {
	if rel, ok := b.rel(path); ok {
		return escaped(b.root.At(rel, mkdirAt))
	}
	return unix.Mkdir(path, 0o755)
}

func (b *beneath) rmdir(path string) error {
	if rel, ok := b.rel(path); ok {
		return escaped(b.root.At(rel, rmdirAt))
	}
	return unix.Rmdir(path)
}

func (b *beneath) rename(from, to string) error {
	relFrom, ok := b.rel(from)
	relTo, ok2 := b.rel(to)
	if !ok || !ok2 {
		return unix.Rename(from, to)
	}
	err := b.root.Rename(relFrom, relTo, 0)
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

func (b *beneath) chmod(path string, mode uint32) error {
	rel, ok := b.rel(path)
	if !ok {
		return unix.Chmod(path, mode)
	}
	fd, err := b.attrOpen(rel)
	if err != nil {
		return err
	}
	err = unix.Fchmod(fd, mode)
	unix.Close(fd)
	return err
}

func (b *beneath) utime(path string, ts []unix.Timespec) error {
	rel, ok := b.rel(path)
	if !ok {
		return unix.UtimesNano(path, ts)
	}
	fd, err := b.attrOpen(rel)
	if err != nil {
		return err
	}
	err = unix.UtimesNanoAt(fd, "", ts, unix.AT_EMPTY_PATH)
	unix.Close(fd)
	return err
}

// attrOpen opens rel beneath the directory for a change of its
// attributes (no closure: chmod and utime are per-operation calls).
func (b *beneath) attrOpen(rel string) (int, error) {
	fd, err := b.root.OpenAt(rel, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, 0)
	return fd, escaped(err)
}

func unlinkAt(dir int, base string) error { return unix.Unlinkat(dir, base, 0) }
func mkdirAt(dir int, base string) error  { return unix.Mkdirat(dir, base, 0o755) }
func rmdirAt(dir int, base string) error  { return unix.Unlinkat(dir, base, unix.AT_REMOVEDIR) }
