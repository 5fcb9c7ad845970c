package replay

import (
	"context"
	"path"

	"golang.org/x/sys/unix"
)

// do performs one operation and returns the bytes it moved.
func (p *player) do(op *Op, buf []byte) (int64, error) {
	path := p.full[op.path]
	switch op.act {
	case actStat:
		var st unix.Stat_t
		return 0, p.root.Lstat(path, &st)
	case actAccess:
		return 0, p.root.Exists(path)
	case actStatfs:
		var st unix.Statfs_t
		return 0, p.root.Statfs(path, &st)
	case actCreate, actOpen, actOpenDir:
		return 0, p.open(op, path)
	case actRead, actWrite:
		return p.readWrite(op, buf)
	case actListDir:
		return 0, p.listDir(path, buf)
	}
	return 0, p.meta(op, path)
}

// meta performs the operations that move no data.
func (p *player) meta(op *Op, path string) error {
	switch op.act {
	case actFlush, actFsync, actReadDir, actClose:
		return p.onHandle(op)
	case actMkdir:
		return p.root.Mkdir(path, 0o755)
	case actRmdir:
		return p.root.Rmdir(path)
	case actUnlink:
		return p.root.Unlink(path)
	case actRename: // renameat2's flags: RENAME_NOREPLACE, ...
		return p.root.Rename(path, p.full[p.t.extra(op).to], uint(op.flags))
	case actChmod:
		return p.root.Chmod(path, 0o644)
	case actUtime:
		return p.root.Touch(path)
	case actTruncate:
		if fd, err := p.fd(op); err == nil { // ftruncate: the file may have no name left
			return unix.Ftruncate(fd, op.Size)
		}
		return p.root.Truncate(path, op.Size)
	}
	return nil
}

// open opens a file or a directory, keeping the handle when the
// recording used it later.
func (p *player) open(op *Op, path string) error {
	flags := int(op.flags)
	if op.act == actOpenDir {
		flags = unix.O_RDONLY | unix.O_DIRECTORY
	}
	fd, err := p.root.Open(path, flags, 0o644)
	if err != nil {
		return err
	}
	if op.handle < 0 {
		return unix.Close(fd)
	}
	if old := p.fds[op.handle].Swap(int32(fd)); old >= 0 {
		unix.Close(int(old))
	}
	return nil
}

// fd is the operation's open handle, EBADF when it has none.
func (p *player) fd(op *Op) (int, error) {
	if op.handle < 0 {
		return -1, unix.EBADF
	}
	fd := p.fds[op.handle].Load()
	if fd < 0 {
		return -1, unix.EBADF
	}
	return int(fd), nil
}

// onHandle performs flush (the close of a duplicate, which is what a
// file system sees of a close while the file stays open), fsync, a
// directory read and close.
func (p *player) onHandle(op *Op) error {
	fd, err := p.fd(op)
	if err != nil {
		return err
	}
	switch op.act {
	case actFlush:
		d, err := unix.Dup(fd)
		if err != nil {
			return err
		}
		return unix.Close(d)
	case actFsync:
		return unix.Fsync(fd)
	case actReadDir:
		var b [32 << 10]byte
		_, err := unix.Getdents(fd, b[:])
		return err
	}
	if !p.fds[op.handle].CompareAndSwap(int32(fd), -1) {
		return unix.EBADF
	}
	return unix.Close(fd)
}

// readWrite reads or writes op.Size bytes at op.Off, in pieces of the
// buffer's size; a read ends at the end of the file.
func (p *player) readWrite(op *Op, buf []byte) (int64, error) {
	fd, err := p.fd(op)
	if err != nil {
		return 0, err
	}
	var done int64
	for done < op.Size {
		n := min(int64(len(buf)), op.Size-done)
		b, off := buf[:n], op.Off+done
		var k int
		if op.act == actWrite {
			p.pat.Fill(b, uint64(op.handle), off)
			k, err = unix.Pwrite(fd, b, off)
		} else {
			k, err = unix.Pread(fd, b, off)
		}
		done += int64(max(k, 0))
		if err != nil || k == 0 || op.act == actRead && int64(k) < n {
			break
		}
	}
	return done, err
}

// listDir reads every entry of a directory.
func (p *player) listDir(path string, buf []byte) error {
	fd, err := p.root.Open(path, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		return err
	}
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil || n == 0 {
			unix.Close(fd)
			return err
		}
	}
}

// make makes an entry the recording used without creating it: a
// directory, or a file of its size, with its parents.
// A write of its data stops, with context.Canceled, once stop is closed.
func (p *player) make(e Entry, buf []byte, stop <-chan struct{}) error {
	if err := p.root.MkdirAll(path.Dir(e.Path), 0o755); err != nil {
		return err
	}
	if e.Dir {
		return p.root.Mkdir(e.Path, 0o755)
	}
	fd, err := p.root.Open(e.Path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	id := p.pat.ID(e.Path) // files of their own content: no two alike
	for off := int64(0); off < e.Size; {
		select {
		case <-stop:
			unix.Close(fd)
			return context.Canceled
		default:
		}
		b := buf[:min(int64(len(buf)), e.Size-off)]
		p.pat.Fill(b, id, off)
		n, err := unix.Pwrite(fd, b, off)
		if err != nil {
			unix.Close(fd)
			return err
		}
		off += int64(n)
	}
	return unix.Close(fd)
}
