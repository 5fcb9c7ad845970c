// Package file is the "file" driver of pkg/object: a local or mounted
// directory used as an object store, each object a file.
//
// It touches nothing outside the directory it is given.
package file

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/driver"
)

func init() {
	object.Register(object.Driver{
		Name:        "file",
		Description: "a local or mounted directory",
		URLForms:    []string{"/PATH", "file:///PATH"},
		Open: func(ctx context.Context, rawURL string, cfg object.Config) (object.Storage, error) {
			return Open(rawURL)
		},
	})
}

// Open opens a directory as a store: a path or a file:// URL. The
// directory need not exist yet: List says it is missing (ErrNoBucket), as
// a store says of a bucket, and Create makes it.
func Open(rawURL string) (object.Storage, error) {
	p := rawURL
	if strings.HasPrefix(rawURL, "file://") {
		u, err := url.Parse(rawURL)
		if err != nil || (u.Host != "" && u.Host != "localhost") {
			return nil, object.ConfigErrorf("invalid file URL %q: want file:///PATH", object.RedactURL(rawURL))
		}
		p = u.Path
	} else if strings.Contains(rawURL, "://") {
		return nil, object.ConfigErrorf("%q is a URL, not a directory: give --storage for object stores (e.g. --storage s3)", object.RedactURL(rawURL))
	}
	if p == "" {
		return nil, object.ConfigErrorf("file: empty path")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Errorf("file %s: %w", p, err)
	}
	if st, err := os.Stat(abs); err == nil && !st.IsDir() {
		return nil, fmt.Errorf("file %s: not a directory", abs)
	}
	return &fileStore{root: abs}, nil
}

// fileStore keeps each object in a file under root; keys with slashes make
// subdirectories.
type fileStore struct {
	root string
}

var (
	_ object.FileSystem = (*fileStore)(nil)
)

func (s *fileStore) String() string { return "file://" + s.root + "/" }
func (s *fileStore) Close() error   { return nil }

// path maps a key to a file path, refusing keys that would leave root.
func (s *fileStore) path(op, key string) (string, error) {
	if err := driver.CheckKey(op, key); err != nil {
		return "", err
	}
	return filepath.Join(s.root, filepath.FromSlash(key)), nil
}

func (s *fileStore) Create(ctx context.Context) error {
	if err := os.MkdirAll(s.root, 0o755); err != nil {
		return driver.OpErr("create", s.root, err)
	}
	return nil
}

func (s *fileStore) Put(ctx context.Context, key string, data io.ReadSeeker) error {
	if err := driver.CtxErr(ctx, "put", key); err != nil {
		return err
	}
	p, err := s.path("put", key)
	if err != nil {
		return err
	}
	if strings.HasSuffix(key, "/") || key == "" {
		return driver.OpErr("put", key, os.MkdirAll(p, 0o755))
	}
	if _, err := data.Seek(0, io.SeekStart); err != nil {
		return driver.OpErr("put", key, err)
	}
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return driver.OpErr("put", key, err)
	}
	// Write a temporary file and rename it: readers see the old or the new
	// object, never half of one.
	tmp := filepath.Join(dir, "."+filepath.Base(p)+".tmp"+driver.RandomSuffix())
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return driver.OpErr("put", key, err)
	}
	err = copyData(ctx, f, data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, p)
	}
	if err != nil {
		os.Remove(tmp)
		return driver.OpErr("put", key, err)
	}
	return nil
}

func (s *fileStore) Get(ctx context.Context, key string, off, limit int64) (io.ReadCloser, error) {
	if err := driver.CtxErr(ctx, "get", key); err != nil {
		return nil, err
	}
	p, err := s.path("get", key)
	if err != nil {
		return nil, err
	}
	f, err := openObject(p)
	if err != nil {
		return nil, driver.OpErr("get", key, err)
	}
	if off > 0 {
		_, err = f.Seek(off, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, driver.OpErr("get", key, err)
	}
	if limit < 0 {
		return f, nil
	}
	return &limitedFile{Reader: io.LimitReader(f, limit), f: f}, nil
}

// errNotRegular is the error of a Get of an entry that is not a regular
// file: a symbolic link (never followed), a FIFO, a device or a socket.
var errNotRegular = errors.New("not a regular file")

// openObject opens the file of an object for reading: a regular file,
// never through a symbolic link at its end, never waiting on a FIFO or a
// device (opened non-blocking, then examined), and with O_NOATIME where
// the kernel allows it (EPERM: not the file's owner), so that reading data
// that is not fsbench's own leaves its access time alone.
func openObject(p string) (*os.File, error) {
	flags := os.O_RDONLY | syscall.O_CLOEXEC | syscall.O_NOFOLLOW | syscall.O_NONBLOCK
	fd, err := syscall.Open(p, flags|noAtime, 0)
	if err == syscall.EPERM && noAtime != 0 {
		fd, err = syscall.Open(p, flags, 0)
	}
	if err == syscall.ELOOP {
		err = fmt.Errorf("a symbolic link: %w", errNotRegular)
	}
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	var st syscall.Stat_t
	err = syscall.Fstat(fd, &st)
	switch mode := uint32(st.Mode) & syscall.S_IFMT; {
	case err != nil:
	case mode == syscall.S_IFDIR:
		err = syscall.EISDIR
	case mode != syscall.S_IFREG:
		err = errNotRegular
	default:
		err = syscall.SetNonblock(fd, false)
	}
	if err != nil {
		syscall.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: p, Err: err}
	}
	return os.NewFile(uintptr(fd), p), nil
}

type limitedFile struct {
	io.Reader
	f *os.File
}

func (l *limitedFile) Close() error { return l.f.Close() }

func (s *fileStore) Head(ctx context.Context, key string) (object.Object, error) {
	if err := driver.CtxErr(ctx, "head", key); err != nil {
		return object.Object{}, err
	}
	p, err := s.path("head", key)
	if err != nil {
		return object.Object{}, err
	}
	st, err := os.Lstat(p)
	if err != nil {
		return object.Object{}, driver.OpErr("head", key, err)
	}
	if strings.HasSuffix(key, "/") != st.IsDir() && key != "" {
		return object.Object{}, driver.OpErr("head", key, object.ErrNotExist)
	}
	return fileObject(key, st), nil
}

func fileObject(key string, st fs.FileInfo) object.Object {
	o := object.Object{Key: key, Size: st.Size(), Mtime: st.ModTime(), IsDir: st.IsDir(), Mode: st.Mode()}
	if o.IsDir {
		o.Size = 0
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok {
		o.UID, o.GID = int(sys.Uid), int(sys.Gid)
	}
	return o
}

func (s *fileStore) Delete(ctx context.Context, key string) error {
	if err := driver.CtxErr(ctx, "delete", key); err != nil {
		return err
	}
	p, err := s.path("delete", key)
	if err != nil {
		return err
	}
	if strings.HasSuffix(key, "/") || key == "" {
		err = syscall.Rmdir(p)
		if err != nil {
			err = &fs.PathError{Op: "rmdir", Path: p, Err: err}
		}
	} else {
		err = syscall.Unlink(p)
		if err != nil {
			err = &fs.PathError{Op: "unlink", Path: p, Err: err}
		}
	}
	if err != nil && errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return driver.OpErr("delete", key, err)
}

func (s *fileStore) List(ctx context.Context, opt object.ListOptions) (*object.ListPage, error) {
	page, err := driver.ListTree(ctx, func(ctx context.Context, dir string) ([]driver.DirEntry, error) {
		p := filepath.Join(s.root, filepath.FromSlash(dir))
		f, err := os.Open(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				return nil, nil
			}
			return nil, driver.OpErr("list", dir, err)
		}
		defer f.Close()
		names, err := f.Readdirnames(-1)
		if err != nil {
			return nil, driver.OpErr("list", dir, err)
		}
		ents := make([]driver.DirEntry, 0, len(names))
		for _, n := range names {
			st, err := os.Lstat(filepath.Join(p, n))
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // removed meanwhile
				}
				return nil, driver.OpErr("list", dir+n, err)
			}
			ents = append(ents, driver.DirEntry{Name: n, Obj: fileObject("", st)})
		}
		return ents, nil
	}, opt)
	if err == nil && len(page.Objects) == 0 && len(page.Prefixes) == 0 {
		// Nothing listed: a missing root is the store's missing bucket,
		// which Create makes. (Only an empty page pays for the look.)
		if _, serr := os.Stat(s.root); errors.Is(serr, fs.ErrNotExist) {
			return nil, driver.OpErr("list", "", driver.WrapKind(object.ErrNoBucket, serr, "directory %s does not exist", s.root))
		}
	}
	return page, err
}

func (s *fileStore) Chmod(ctx context.Context, key string, mode os.FileMode) error {
	p, err := s.path("chmod", key)
	if err != nil {
		return err
	}
	return driver.OpErr("chmod", key, os.Chmod(p, mode))
}

func (s *fileStore) Chown(ctx context.Context, key string, uid, gid int) error {
	p, err := s.path("chown", key)
	if err != nil {
		return err
	}
	return driver.OpErr("chown", key, os.Lchown(p, uid, gid))
}

func (s *fileStore) Chtimes(ctx context.Context, key string, mtime time.Time) error {
	p, err := s.path("chtimes", key)
	if err != nil {
		return err
	}
	return driver.OpErr("chtimes", key, os.Chtimes(p, mtime, mtime))
}

// copyBufs are the buffers of copyData, shared by all stores.
var copyBufs = sync.Pool{New: func() any { b := make([]byte, 256<<10); return &b }}

// copyData copies src to dst without allocating: straight from a reader
// that holds its data (bytes.Reader, strings.Reader), otherwise through a
// pooled buffer, checking ctx between chunks.
func copyData(ctx context.Context, dst io.Writer, src io.Reader) error {
	if wt, ok := src.(io.WriterTo); ok {
		_, err := wt.WriteTo(dst)
		return err
	}
	bp := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(bp)
	buf := *bp
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		n, rerr := io.ReadFull(src, buf)
		if n > 0 {
			if _, err := dst.Write(buf[:n]); err != nil {
				return err
			}
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			return nil
		}
		if rerr != nil {
			return rerr
		}
	}
}
