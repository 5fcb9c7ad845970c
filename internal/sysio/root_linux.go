//go:build linux

package sysio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// Root is a directory that names are resolved beneath: a name given to
// its methods is relative to the directory it holds open, and no name
// leads out of it, by "..", an absolute path or a symbolic link, even
// when another user swaps a directory of the path for a link meanwhile,
// or the directory itself is removed and its name given to a link.
//
// Where the kernel has openat2 (Linux 5.6), each name is resolved by it
// with RESOLVE_BENEATH; elsewhere by a walk that opens one component at
// a time with O_NOFOLLOW and refuses "..". Operations that take no open
// file (mkdir, unlink, rename, stat) resolve the name's directory that
// way and act on its last component, which they never follow.
type Root struct {
	fd   int
	name string
}

// noOpenat2 is set once openat2 is found missing (ENOSYS): the walk is
// used from then on.
var noOpenat2 atomic.Bool

// OpenRoot opens dir as a Root. dir itself may be reached through
// symbolic links: it is the caller's.
func OpenRoot(dir string) (*Root, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return &Root{fd: fd, name: dir}, nil
}

// OpenRootNoFollow is OpenRoot for a directory whose last component must
// not be a symbolic link: one the caller has just made where others may
// write (a run directory in /tmp), which another user could replace with
// a link between its mkdir and this open. It must also be the caller's.
func OpenRootNoFollow(dir string) (*Root, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || int(st.Uid) != os.Geteuid() {
		unix.Close(fd)
		if err == nil {
			err = fmt.Errorf("owned by uid %d, not by this process's %d: replaced by another user", st.Uid, os.Geteuid())
		}
		return nil, &os.PathError{Op: "open", Path: dir, Err: err}
	}
	return &Root{fd: fd, name: dir}, nil
}

// PinDir opens directory rel beneath base (a symbolic link on the way
// followed only while it stays beneath), making it as MkdirAll does when
// it is missing (made then says so): the name it returns,
// /proc/self/fd/N, leads to that directory alone, whatever is swapped
// into its path later, until release closes it.
func PinDir(base, rel string) (name string, made bool, release func(), err error) {
	r, err := OpenRoot(base)
	if err != nil {
		return "", false, nil, err
	}
	defer r.Close()
	fd, err := r.Open(rel, unix.O_PATH|unix.O_DIRECTORY, 0)
	if errors.Is(err, unix.ENOENT) {
		if err := r.MkdirAll(rel, 0o755); err != nil {
			return "", false, nil, err
		}
		made = true
		fd, err = r.Open(rel, unix.O_PATH|unix.O_DIRECTORY, 0)
	}
	if errors.Is(err, unix.EXDEV) {
		return "", false, nil, fmt.Errorf("%s: a symbolic link on the way leads out of %s", r.join(rel), base)
	}
	if err != nil {
		return "", false, nil, err
	}
	return "/proc/self/fd/" + strconv.Itoa(fd), made, func() { unix.Close(fd) }, nil
}

// Name is the directory's name as given to OpenRoot.
func (r *Root) Name() string { return r.name }

// Close closes the directory.
func (r *Root) Close() error { return unix.Close(r.fd) }

// clean is name relative to the root: "." for the root itself. An
// absolute name is taken below the root.
func clean(name string) string {
	name = strings.TrimLeft(name, "/")
	if name == "" {
		return "."
	}
	return name
}

// Open opens name beneath the root with open(2)'s flags and mode and
// returns the descriptor (close-on-exec). A symbolic link is followed
// only while it stays beneath the root; with O_NOFOLLOW, not at all.
func (r *Root) Open(name string, flags int, mode uint32) (int, error) {
	fd, err := r.open(clean(name), flags|unix.O_CLOEXEC, mode)
	if err != nil {
		return -1, &os.PathError{Op: "open", Path: r.join(name), Err: err}
	}
	return fd, nil
}

// OpenFile is Open as an *os.File.
func (r *Root) OpenFile(name string, flags int, perm os.FileMode) (*os.File, error) {
	fd, err := r.Open(name, flags, uint32(perm.Perm()))
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), r.join(name)), nil
}

func (r *Root) join(name string) string { return path.Join(r.name, clean(name)) }

func (r *Root) open(name string, flags int, mode uint32) (int, error) {
	if !noOpenat2.Load() {
		how := unix.OpenHow{Flags: uint64(flags), Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS}
		if flags&unix.O_CREAT != 0 || flags&unix.O_TMPFILE == unix.O_TMPFILE { // openat2 refuses a mode without them
			how.Mode = uint64(mode)
		}
		for try := 0; ; try++ {
			fd, err := unix.Openat2(r.fd, name, &how)
			if (err == unix.EINTR || err == unix.EAGAIN) && try < 64 { // EAGAIN: a rename raced the lookup
				continue
			}
			if err != unix.ENOSYS {
				return fd, err
			}
			noOpenat2.Store(true)
			break
		}
	}
	return r.walk(name, flags, mode)
}

// walk opens name one component at a time, each directory with
// O_NOFOLLOW, refusing "..": openat2's RESOLVE_BENEATH without the
// kernel's help (a symbolic link inside the root is refused too).
func (r *Root) walk(name string, flags int, mode uint32) (int, error) {
	parts := strings.Split(name, "/")
	dir := r.fd
	defer func() {
		if dir != r.fd {
			unix.Close(dir)
		}
	}()
	for i, p := range parts {
		if p == ".." {
			return -1, unix.EXDEV // as openat2 says of an escape
		}
		if p == "" || p == "." && i < len(parts)-1 {
			continue
		}
		if i == len(parts)-1 {
			return unix.Openat(dir, p, flags|unix.O_NOFOLLOW, mode)
		}
		fd, err := unix.Openat(dir, p, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, err
		}
		if dir != r.fd {
			unix.Close(dir)
		}
		dir = fd
	}
	return unix.Openat(dir, ".", flags, mode)
}

// parent opens the directory of name beneath the root and returns it
// with name's last component; release(dir) closes it when it is not the
// root's own descriptor. No closure: this is on the engine's per-operation
// path.
func (r *Root) parent(name string) (dir int, base string, err error) {
	name = clean(name)
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		base = name
	} else {
		base = name[i+1:]
	}
	if base == "." || base == ".." || base == "" {
		return -1, "", unix.EINVAL // not an entry of a directory
	}
	if i < 0 {
		return r.fd, base, nil
	}
	fd, err := r.open(name[:i], unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, "", err
	}
	return fd, base, nil
}

// release closes dir, a directory parent opened, unless it is the root.
func (r *Root) release(dir int) {
	if dir != r.fd {
		unix.Close(dir)
	}
}

// at runs op on the directory of name and its last component.
func (r *Root) at(opName, name string, op func(dir int, base string) error) error {
	dir, base, err := r.parent(name)
	if err == nil {
		err = op(dir, base)
		r.release(dir)
	}
	if err != nil {
		return &os.PathError{Op: opName, Path: r.join(name), Err: err}
	}
	return nil
}

// Mkdir makes directory name.
func (r *Root) Mkdir(name string, perm os.FileMode) error {
	return r.at("mkdir", name, func(dir int, base string) error { return unix.Mkdirat(dir, base, uint32(perm.Perm())) })
}

// MkdirAll makes directory name and the directories above it that are
// missing.
func (r *Root) MkdirAll(name string, perm os.FileMode) error {
	name = clean(name)
	if name == "." {
		return nil
	}
	err := r.Mkdir(name, perm)
	if err == nil || errors.Is(err, unix.EEXIST) && r.isDir(name) {
		return nil
	}
	if !errors.Is(err, unix.ENOENT) {
		return err
	}
	if err := r.MkdirAll(path.Dir(name), perm); err != nil {
		return err
	}
	if err := r.Mkdir(name, perm); err != nil && !(errors.Is(err, unix.EEXIST) && r.isDir(name)) {
		return err
	}
	return nil
}

func (r *Root) isDir(name string) bool {
	var st unix.Stat_t
	return r.Lstat(name, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR
}

// Unlink removes file name (a symbolic link itself, not what it points
// to).
func (r *Root) Unlink(name string) error {
	return r.at("unlink", name, func(dir int, base string) error { return unix.Unlinkat(dir, base, 0) })
}

// Rmdir removes the empty directory name. The root itself cannot be
// removed through it.
func (r *Root) Rmdir(name string) error {
	return r.at("rmdir", name, func(dir int, base string) error { return unix.Unlinkat(dir, base, unix.AT_REMOVEDIR) })
}

// Rename renames oldname to newname, both beneath the root, with
// renameat2's flags (0 for rename's behaviour).
func (r *Root) Rename(oldname, newname string, flags uint) error {
	return r.at("rename", oldname, func(from int, oldBase string) error {
		to, newBase, err := r.parent(newname)
		if err != nil {
			return err
		}
		defer r.release(to)
		if flags == 0 {
			return unix.Renameat(from, oldBase, to, newBase)
		}
		return unix.Renameat2(from, oldBase, to, newBase, flags)
	})
}

// Lstat is fstatat of name, not following a symbolic link at its end.
func (r *Root) Lstat(name string, st *unix.Stat_t) error {
	if clean(name) == "." {
		return unix.Fstat(r.fd, st)
	}
	return r.at("lstat", name, func(dir int, base string) error {
		return unix.Fstatat(dir, base, st, unix.AT_SYMLINK_NOFOLLOW)
	})
}

// onFile opens name beneath the root with flags and runs op on it.
func (r *Root) onFile(opName, name string, flags int, op func(fd int) error) error {
	fd, err := r.open(clean(name), flags|unix.O_CLOEXEC, 0)
	if err == nil {
		err = op(fd)
		unix.Close(fd)
	}
	if err != nil {
		return &os.PathError{Op: opName, Path: r.join(name), Err: err}
	}
	return nil
}

// Exists reports whether name can be found beneath the root (access's
// F_OK): nil when it can.
func (r *Root) Exists(name string) error {
	return r.onFile("access", name, unix.O_PATH, func(int) error { return nil })
}

// Statfs is statfs of the file system that holds name.
func (r *Root) Statfs(name string, st *unix.Statfs_t) error {
	return r.onFile("statfs", name, unix.O_PATH, func(fd int) error { return unix.Fstatfs(fd, st) })
}

// Chmod sets name's mode.
func (r *Root) Chmod(name string, mode os.FileMode) error {
	return r.onFile("chmod", name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, func(fd int) error {
		return unix.Fchmod(fd, uint32(mode.Perm()))
	})
}

// Touch sets name's access and modification times to now.
func (r *Root) Touch(name string) error {
	return r.onFile("utime", name, unix.O_RDONLY|unix.O_NONBLOCK|unix.O_NOCTTY, func(fd int) error {
		return unix.UtimesNanoAt(fd, "", nil, unix.AT_EMPTY_PATH)
	})
}

// Truncate sets file name's size.
func (r *Root) Truncate(name string, size int64) error {
	return r.onFile("truncate", name, unix.O_WRONLY|unix.O_NONBLOCK|unix.O_NOCTTY, func(fd int) error {
		return unix.Ftruncate(fd, size)
	})
}

// RemoveAll removes name and what it holds, each directory opened from
// its parent's descriptor without following a link: nothing outside name
// is removed, whatever is swapped in meanwhile. A missing name is not an
// error.
func (r *Root) RemoveAll(name string) error {
	err := r.at("remove", name, func(dir int, base string) error { return removeAt(dir, base) })
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// Empty removes what directory name holds, leaving it.
func (r *Root) Empty(name string) error {
	fd, err := r.open(clean(name), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: r.join(name), Err: err}
	}
	defer unix.Close(fd)
	if err := emptyAt(fd); err != nil {
		return &os.PathError{Op: "empty", Path: r.join(name), Err: err}
	}
	return nil
}

// removeAt removes entry base of directory dir, with what it holds.
func removeAt(dir int, base string) error {
	err := unix.Unlinkat(dir, base, 0)
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	fd, err := unix.Openat(dir, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return err
	}
	err = emptyAt(fd)
	unix.Close(fd)
	if err != nil {
		return err
	}
	if err := unix.Unlinkat(dir, base, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return err
	}
	return nil
}

// emptyAt removes what the open directory fd holds, reading it again
// until it reads empty (entries removed while a directory is read can
// make the read skip others).
func emptyAt(fd int) error {
	for {
		names, err := namesAt(fd)
		if err != nil || len(names) == 0 {
			return err
		}
		for _, n := range names {
			if err := removeAt(fd, n); err != nil && err != unix.ENOENT {
				return fmt.Errorf("%s: %w", n, err)
			}
		}
	}
}

// namesAt reads the names the open directory fd holds, from its start.
func namesAt(fd int) ([]string, error) {
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(d), "")
	defer f.Close()
	names, err := f.Readdirnames(-1)
	if err == io.EOF {
		err = nil
	}
	return names, err
}
