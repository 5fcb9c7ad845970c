package object

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"
	"github.com/willscott/go-nfs-client/nfs/util"
)

func nfsDriver() Driver {
	return Driver{
		Name:        "nfs",
		Description: "an NFSv3 server, spoken to directly (no kernel mount)",
		URLForms:    []string{"nfs://HOST/EXPORT[/PATH]", "HOST:/EXPORT[/PATH]"},
		Open:        openNFS,
	}
}

// The client library logs through the standard logger; fsbench's output
// streams are its own, so the library is silenced, at initialisation, before
// any of its goroutines can read its logger.
func init() { util.DefaultLogger = quietLogger{} }

type quietLogger struct{}

func (quietLogger) SetDebug(bool)         {}
func (quietLogger) Errorf(string, ...any) {}
func (quietLogger) Debugf(string, ...any) {}
func (quietLogger) Infof(string, ...any)  {}

// parseNFSURL splits nfs://HOST/EXPORT/PATH or HOST:/EXPORT/PATH into the
// host and the absolute path on the server.
func parseNFSURL(raw string) (host, p string, err error) {
	shown := RedactURL(raw)
	if strings.HasPrefix(raw, "nfs://") {
		u, perr := url.Parse(raw)
		if perr != nil || u.Hostname() == "" || u.User != nil {
			return "", "", configErr("invalid nfs URL %q: want nfs://HOST/EXPORT[/PATH] or HOST:/EXPORT[/PATH]", shown)
		}
		if u.Port() != "" {
			return "", "", configErr("invalid nfs URL %q: no port: the server's ports are found through its portmapper", shown)
		}
		host, p = u.Hostname(), u.Path
	} else if h, rest, ok := strings.Cut(raw, ":/"); ok && h != "" && !strings.Contains(h, "/") {
		host, p = h, "/"+rest
	} else {
		return "", "", configErr("invalid nfs URL %q: want nfs://HOST/EXPORT[/PATH] or HOST:/EXPORT[/PATH]", shown)
	}
	p = path.Clean("/" + p)
	if p == "/" {
		return "", "", configErr("invalid nfs URL %q: no export path", shown)
	}
	return host, p, nil
}

// nfsStore is a directory on an NFSv3 server. Every call runs the client
// library in a goroutine so that a context can end the wait; the library
// itself bounds its calls (5 s per reply, a few retries).
type nfsStore struct {
	host    string
	export  string // what was mounted
	base    string // directory within the export, "" or ending in "/"
	display string
	mount   *nfs.Mount
	target  *nfs.Target
	uid     uint32
	gid     uint32
}

var _ FileSystem = (*nfsStore)(nil)

func openNFS(ctx context.Context, rawURL string, cfg Config) (Storage, error) {
	host, full, err := parseNFSURL(rawURL)
	if err != nil {
		return nil, err
	}

	// The library dials without a timeout: check first, within bounds, that
	// the portmapper answers at all.
	dctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
	conn, err := (&net.Dialer{}).DialContext(dctx, "tcp", net.JoinHostPort(host, "111"))
	cancel()
	if err != nil {
		return nil, fmt.Errorf("nfs %s: portmapper unreachable: %w", host, err)
	}
	conn.Close()

	s := &nfsStore{host: host, uid: uint32(os.Getuid()), gid: uint32(os.Getgid())}
	err = runCtx(ctx, cfg.Timeout*3, func() error {
		m, err := nfs.DialMount(host, 0)
		if err != nil {
			return fmt.Errorf("nfs %s: mount service (is an NFSv3 server running there?): %w", host, err)
		}
		hostname, _ := os.Hostname()
		auth := rpc.NewAuthUnix(hostname, s.uid, s.gid).Auth()
		// Find the export: the longest leading part of the path the server
		// lets us mount. What follows is a directory inside it.
		var lastErr error
		for p := full; p != "/"; p = path.Dir(p) {
			t, err := m.Mount(p, auth)
			if err == nil {
				s.mount, s.target, s.export = m, t, p
				s.base = strings.TrimPrefix(strings.TrimPrefix(full, p), "/")
				if s.base != "" {
					s.base += "/"
				}
				return nil
			}
			lastErr = err
		}
		m.Close()
		return fmt.Errorf("nfs %s: no export holds %s (%v)", host, full, lastErr)
	})
	if err != nil {
		return nil, err
	}
	s.display = "nfs://" + host + s.export
	if !strings.HasSuffix(s.display, "/") {
		s.display += "/"
	}
	return s, nil
}

// runCtx runs fn, returning early with the context's error when ctx ends
// or after timeout (if > 0). fn keeps running in the background then, but
// the client library bounds every call it makes.
func runCtx(ctx context.Context, timeout time.Duration, fn func() error) error {
	if err := ctx.Err(); err != nil {
		return &Error{Op: "nfs", Err: err}
	}
	done := make(chan error, 1)
	go func() { done <- fn() }()
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return &Error{Op: "nfs", Err: ctx.Err()}
	case <-tc:
		return fmt.Errorf("no answer within %s", timeout)
	}
}

func (s *nfsStore) String() string { return s.display + s.base }

func (s *nfsStore) Close() error {
	if s.target != nil {
		s.target.Close()
	}
	if s.mount != nil {
		_ = s.mount.Unmount()
		s.mount.Close()
	}
	return nil
}

// path maps a key to a path relative to the export's root.
func (s *nfsStore) path(op, key string) (string, error) {
	if strings.HasPrefix(key, "/") || strings.Contains(key, "\x00") {
		return "", opErr(op, key, errors.New("invalid key"))
	}
	for _, part := range strings.Split(key, "/") {
		if part == ".." || part == "." {
			return "", opErr(op, key, errors.New("invalid key: . or .. component"))
		}
	}
	p := strings.TrimSuffix(s.base+key, "/")
	if p == "" {
		p = "."
	}
	return p, nil
}

// nfsErr maps the library's errors to this package's.
func nfsErr(op, key string, err error) error {
	if err == nil {
		return nil
	}
	var ne *nfs.Error
	if errors.As(err, &ne) {
		switch ne.ErrorNum {
		case nfs.NFS3ErrNotDir:
			err = wrapKind(ErrNotExist, err, "%s", ne.ErrorString)
		case nfs.NFS3ErrAcces:
			err = wrapKind(ErrAccess, err, "%s", ne.ErrorString)
		case nfs.NFS3ErrNotSupp:
			err = wrapKind(ErrNotSupported, err, "%s", ne.ErrorString)
		}
	}
	return opErr(op, key, err)
}

func (s *nfsStore) Create(ctx context.Context) error {
	if s.base == "" {
		return nil
	}
	return runCtx(ctx, 0, func() error { return s.mkdirAll("create", strings.TrimSuffix(s.base, "/")) })
}

// mkdirAll makes dir and its parents (paths relative to the export).
func (s *nfsStore) mkdirAll(op, dir string) error {
	if dir == "" || dir == "." {
		return nil
	}
	if fi, _, err := s.target.Lookup(dir); err == nil {
		if !fi.IsDir() {
			return opErr(op, dir, syscall.ENOTDIR)
		}
		return nil
	}
	if err := s.mkdirAll(op, path.Dir(dir)); err != nil {
		return err
	}
	if _, err := s.target.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return nfsErr(op, dir, err)
	}
	return nil
}

func (s *nfsStore) Put(ctx context.Context, key string, data io.ReadSeeker) error {
	p, err := s.path("put", key)
	if err != nil {
		return err
	}
	return runCtx(ctx, 0, func() error {
		if strings.HasSuffix(key, "/") {
			return s.mkdirAll("put", p)
		}
		if err := s.mkdirAll("put", path.Dir(p)); err != nil {
			return err
		}
		if _, err := data.Seek(0, io.SeekStart); err != nil {
			return opErr("put", key, err)
		}
		// A temporary file renamed into place, as on local disks.
		tmp := path.Join(path.Dir(p), "."+path.Base(p)+".tmp"+randomSuffix())
		f, err := s.target.OpenFile(tmp, 0o644)
		if err != nil {
			return nfsErr("put", key, err)
		}
		err = copyData(ctx, &chunkWriter{w: f}, data)
		if err == nil {
			err = f.Close() // COMMIT
		}
		if err == nil {
			err = s.target.Rename(tmp, p)
		}
		if err != nil {
			_ = s.target.Remove(tmp)
			return nfsErr("put", key, err)
		}
		return nil
	})
}

func (s *nfsStore) Get(ctx context.Context, key string, off, limit int64) (io.ReadCloser, error) {
	p, err := s.path("get", key)
	if err != nil {
		return nil, err
	}
	var f *nfs.File
	err = runCtx(ctx, 0, func() error {
		fi, _, err := s.target.Lookup(p)
		if err != nil {
			return nfsErr("get", key, err)
		}
		if fi.IsDir() {
			return opErr("get", key, syscall.EISDIR)
		}
		f, err = s.target.Open(p)
		if err != nil {
			return nfsErr("get", key, err)
		}
		if off > 0 {
			_, err = f.Seek(off, io.SeekStart)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	var r io.Reader = &nfsReader{ctx: ctx, f: f, key: key}
	if limit >= 0 {
		r = io.LimitReader(r, limit)
	}
	return io.NopCloser(r), nil
}

// nfsReader reads a file, honouring the context and tidying errors.
type nfsReader struct {
	ctx context.Context
	f   *nfs.File
	key string
	eof bool
}

func (r *nfsReader) Read(p []byte) (int, error) {
	if r.eof {
		return 0, io.EOF
	}
	if err := r.ctx.Err(); err != nil {
		return 0, opErr("get", r.key, err)
	}
	if len(p) == 0 {
		return 0, nil
	}
	n, err := r.f.Read(p[:min(len(p), nfsMaxIO)])
	if err == io.EOF {
		// The library reports EOF with the last bytes and does not advance
		// its offset then; remember it instead.
		r.eof = true
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	if err != nil {
		return n, nfsErr("get", r.key, err)
	}
	return n, nil
}

// nfsMaxIO caps the payload of one READ or WRITE call at 1 MiB, the most
// the Linux client sends (its rsize and wsize limit), whatever larger size
// the server offers (nfs-ganesha offers 64 MiB). The client library holds
// two or three copies of every payload, so this also bounds its memory.
const nfsMaxIO = 1 << 20

// chunkWriter hands w at most nfsMaxIO bytes per call.
type chunkWriter struct{ w io.Writer }

func (c *chunkWriter) Write(p []byte) (int, error) {
	done := 0
	for done < len(p) {
		n, err := c.w.Write(p[done:min(len(p), done+nfsMaxIO)])
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

func nfsObject(key string, fa *nfs.Fattr) Object {
	o := Object{Key: key, Size: int64(fa.Filesize), Mtime: fa.ModTime(), IsDir: fa.IsDir(),
		Mode: os.FileMode(fa.FileMode & 0o7777), UID: int(fa.UID), GID: int(fa.GID)}
	if o.IsDir {
		o.Size = 0
		o.Mode |= os.ModeDir
	}
	return o
}

func (s *nfsStore) Head(ctx context.Context, key string) (Object, error) {
	p, err := s.path("head", key)
	if err != nil {
		return Object{}, err
	}
	var o Object
	err = runCtx(ctx, 0, func() error {
		fi, _, err := s.target.Lookup(p)
		if err != nil {
			return nfsErr("head", key, err)
		}
		fa, ok := fi.(*nfs.Fattr)
		if !ok {
			return opErr("head", key, fmt.Errorf("unexpected attributes %T", fi))
		}
		if strings.HasSuffix(key, "/") != fa.IsDir() && key != "" {
			return opErr("head", key, ErrNotExist)
		}
		o = nfsObject(key, fa)
		return nil
	})
	return o, err
}

func (s *nfsStore) Delete(ctx context.Context, key string) error {
	p, err := s.path("delete", key)
	if err != nil {
		return err
	}
	return runCtx(ctx, 0, func() error {
		var err error
		if strings.HasSuffix(key, "/") || key == "" {
			err = s.target.RmDir(p)
		} else {
			err = s.target.Remove(p)
		}
		if err != nil && (errors.Is(err, fs.ErrNotExist) || isNFSErr(err, nfs.NFS3ErrNotDir)) {
			return nil
		}
		return nfsErr("delete", key, err)
	})
}

func isNFSErr(err error, num uint32) bool {
	var ne *nfs.Error
	return errors.As(err, &ne) && ne.ErrorNum == num
}

func (s *nfsStore) List(ctx context.Context, opt ListOptions) (*ListPage, error) {
	var page *ListPage
	err := runCtx(ctx, 0, func() error {
		var err error
		page, err = listTree(ctx, func(ctx context.Context, dir string) ([]dirEntry, error) {
			p := strings.TrimSuffix(s.base+dir, "/")
			if p == "" {
				p = "."
			}
			ents, err := s.target.ReadDirPlus(p)
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) || isNFSErr(err, nfs.NFS3ErrNotDir) {
					return nil, nil
				}
				return nil, nfsErr("list", dir, err)
			}
			out := make([]dirEntry, 0, len(ents))
			for _, e := range ents {
				if !e.Attr.IsSet {
					continue
				}
				out = append(out, dirEntry{name: e.FileName, obj: nfsObject("", &e.Attr.Attr)})
			}
			return out, nil
		}, opt)
		return err
	})
	return page, err
}

func (s *nfsStore) setattr(ctx context.Context, op, key string, sa nfs.Sattr3) error {
	p, err := s.path(op, key)
	if err != nil {
		return err
	}
	return runCtx(ctx, 0, func() error {
		_, fh, err := s.target.Lookup(p)
		if err != nil {
			return nfsErr(op, key, err)
		}
		_, err = s.target.SetAttr(fh, sa)
		return nfsErr(op, key, err)
	})
}

func (s *nfsStore) Chmod(ctx context.Context, key string, mode os.FileMode) error {
	return s.setattr(ctx, "chmod", key, nfs.Sattr3{Mode: nfs.SetMode{SetIt: true, Mode: uint32(mode.Perm())}})
}

func (s *nfsStore) Chown(ctx context.Context, key string, uid, gid int) error {
	if uid < 0 || gid < 0 {
		return opErr("chown", key, errors.New("uid and gid must be given, got "+strconv.Itoa(uid)+":"+strconv.Itoa(gid)))
	}
	return s.setattr(ctx, "chown", key, nfs.Sattr3{
		UID: nfs.SetUID{SetIt: true, UID: uint32(uid)},
		GID: nfs.SetUID{SetIt: true, UID: uint32(gid)},
	})
}

func (s *nfsStore) Chtimes(ctx context.Context, key string, mtime time.Time) error {
	t := nfs.NFS3Time{Seconds: uint32(mtime.Unix()), Nseconds: uint32(mtime.Nanosecond())}
	return s.setattr(ctx, "chtimes", key, nfs.Sattr3{
		Atime: nfs.SetTime{SetIt: nfs.SetToClientTime, Time: t},
		Mtime: nfs.SetTime{SetIt: nfs.SetToClientTime, Time: t},
	})
}
