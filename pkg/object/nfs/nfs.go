// Package nfs is the "nfs" driver of pkg/object: an NFSv3 server used as an
// object store, spoken to directly (no kernel mount) through its own
// ONC RPC and XDR code (nfsrpc.go, nfsxdr.go), with contexts, deadlines and
// interruption of a call in flight.
//
// It mounts nothing: it speaks NFSv3 from user space.
package nfs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	nfs3 "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"

	"github.com/fsbench/fsbench/pkg/object"
	"github.com/fsbench/fsbench/pkg/object/internal/driver"
)

func init() {
	object.Register(object.Driver{
		Name:        "nfs",
		Description: "an NFSv3 server, spoken to directly (no kernel mount); the directory must exist",
		URLForms: []string{
			"nfs://HOST/EXPORT[/PATH]",
			"nfs://HOST:PORT/EXPORT[/PATH][?mountport=PORT]  (NFS at PORT; MOUNT at mountport, else at PORT or where the portmapper says)",
			"HOST:/EXPORT[/PATH]",
		},
		Open: openNFS,
	})
}

// nfsURL is a parsed NFS URL.
type nfsURL struct {
	host      string
	port      int    // of NFS; 0: ask the portmapper
	mountPort int    // of MOUNT; 0: try port, then ask the portmapper
	path      string // absolute path on the server
}

// parseNFSURL splits nfs://HOST[:PORT]/EXPORT/PATH[?mountport=PORT] or
// HOST:/EXPORT/PATH.
func parseNFSURL(raw string) (nfsURL, error) {
	shown := object.RedactURL(raw)
	var u nfsURL
	var err error
	if strings.HasPrefix(raw, "nfs://") {
		u, err = parseNFSForm(raw, shown)
		if err != nil {
			return nfsURL{}, err
		}
	} else if h, rest, ok := strings.Cut(raw, ":/"); ok && h != "" && !strings.ContainsAny(h, "/:") {
		u.host, u.path = h, "/"+rest
	} else {
		return nfsURL{}, object.ConfigErrorf("invalid nfs URL %q: want nfs://HOST[:PORT]/EXPORT[/PATH] or HOST:/EXPORT[/PATH]", shown)
	}
	u.path = path.Clean("/" + u.path)
	if u.path == "/" {
		return nfsURL{}, object.ConfigErrorf("invalid nfs URL %q: no export path", shown)
	}
	return u, nil
}

// parseNFSForm parses the nfs:// form.
func parseNFSForm(raw, shown string) (nfsURL, error) {
	pu, err := url.Parse(raw)
	if err != nil || pu.Hostname() == "" || pu.User != nil || pu.Fragment != "" {
		return nfsURL{}, object.ConfigErrorf("invalid nfs URL %q: want nfs://HOST[:PORT]/EXPORT[/PATH]", shown)
	}
	u := nfsURL{host: pu.Hostname(), path: pu.Path}
	if u.port, err = parsePort(pu.Port()); err != nil {
		return nfsURL{}, object.ConfigErrorf("invalid nfs URL %q: %v", shown, err)
	}
	q := pu.Query()
	for k := range q {
		if k != "mountport" {
			return nfsURL{}, object.ConfigErrorf("invalid nfs URL %q: unknown option %q (known: mountport)", shown, k)
		}
	}
	if u.mountPort, err = parsePort(q.Get("mountport")); err != nil {
		return nfsURL{}, object.ConfigErrorf("invalid nfs URL %q: mountport: %v", shown, err)
	}
	return u, nil
}

// parsePort parses a port number; "" is 0.
func parsePort(s string) (int, error) {
	if s == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return n, nil
}

// nfsStore is a directory on an NFSv3 server. Every call runs in the
// caller's goroutine; cancelling its context interrupts the call in
// flight (see rpcPool), so nothing of a call goes on after it returns.
type nfsStore struct {
	host    string
	export  string // what was mounted
	display string // nfs://host[:port]/export/base/
	auth    rpc.Auth
	mount   *rpcPool
	c       *nfsClient
	root    []byte // handle of the base directory
	dirs    dirCache
	rsize   int
	wsize   int
	timeout time.Duration
}

var _ object.FileSystem = (*nfsStore)(nil)

func openNFS(ctx context.Context, rawURL string, cfg object.Config) (object.Storage, error) {
	u, err := parseNFSURL(rawURL)
	if err != nil {
		return nil, err
	}
	timeout := cfg.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	hostname, _ := os.Hostname()
	s := &nfsStore{host: u.host, timeout: timeout, auth: rpc.NewAuthUnix(hostname, uint32(os.Getuid()), uint32(os.Getgid())).Auth()}
	s.dirs.init()
	if err := s.connect(ctx, u, max(cfg.Threads, 4)); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// pool makes a connection pool to host:port with the store's bounds.
func (s *nfsStore) pool(port, idle int) *rpcPool {
	return &rpcPool{addr: net.JoinHostPort(s.host, strconv.Itoa(port)), dialWait: s.timeout,
		callWait: max(3*s.timeout, 30*time.Second), maxIdle: idle}
}

// connect finds the services, mounts the export and checks the directory.
func (s *nfsStore) connect(ctx context.Context, u nfsURL, threads int) error {
	nfsPort, mountPort := u.port, u.mountPort
	if mountPort == 0 {
		mountPort = u.port // some servers answer MOUNT on the NFS port
	}
	if nfsPort == 0 || mountPort == 0 {
		np, mp, err := s.portmap(ctx)
		if err != nil {
			return err
		}
		nfsPort, mountPort = cmp.Or(nfsPort, np), cmp.Or(mountPort, mp)
	}
	s.mount = s.pool(mountPort, 1)
	fh, err := s.mountLongest(ctx, u)
	var rerr *rpcReplyError
	if errors.As(err, &rerr) && u.port != 0 && u.mountPort == 0 {
		// No MOUNT service on the NFS port: the portmapper knows where.
		s.mount.Close()
		if _, mountPort, err = s.portmap(ctx); err != nil {
			return err
		}
		s.mount = s.pool(mountPort, 1)
		fh, err = s.mountLongest(ctx, u)
	}
	if err != nil {
		return err
	}
	s.c = &nfsClient{pool: s.pool(nfsPort, threads), auth: s.auth}
	if err := s.sizes(ctx, fh); err != nil {
		return err
	}
	return s.findBase(ctx, u, fh)
}

// portmap asks the server's portmapper for the NFS and MOUNT ports.
func (s *nfsStore) portmap(ctx context.Context) (nfsPort, mountPort int, err error) {
	pm := s.pool(111, 1)
	pm.callWait = s.timeout
	defer pm.Close()
	if nfsPort, err = getport(ctx, pm, progNFS, 3); err == nil {
		mountPort, err = getport(ctx, pm, progMount, 3)
	}
	if err != nil {
		return 0, 0, fmt.Errorf("nfs %s: portmapper (is an NFSv3 server running there?): %w", s.host, err)
	}
	return nfsPort, mountPort, nil
}

// mountLongest mounts the longest leading part of the path that the
// server exports; the rest is a directory inside it.
func (s *nfsStore) mountLongest(ctx context.Context, u nfsURL) ([]byte, error) {
	var lastErr error
	for p := u.path; p != "/"; p = path.Dir(p) {
		fh, err := mount(ctx, s.mount, s.auth, p)
		if err == nil {
			s.export = p
			return fh, nil
		}
		var st nfsStatus
		if !errors.As(err, &st) {
			return nil, fmt.Errorf("nfs %s: mount service: %w", s.host, err)
		}
		lastErr = err
	}
	return nil, fmt.Errorf("nfs %s: no export holds %s (%v)", s.host, u.path, lastErr)
}

// sizes reads the server's transfer sizes: its preferred ones, within its
// maximum, and at most nfsMaxIO.
func (s *nfsStore) sizes(ctx context.Context, root []byte) error {
	fi, err := s.c.fsinfo(ctx, root)
	if err != nil {
		return fmt.Errorf("nfs %s: FSINFO of %s: %w", s.host, s.export, err)
	}
	pick := func(pref, most uint32) int {
		n := uint32(nfsMaxIO)
		if most > 0 {
			n = min(n, most)
		}
		if pref > 0 {
			n = min(n, pref)
		}
		return int(max(n, 4096))
	}
	s.rsize, s.wsize = pick(fi.RTPref, fi.RTMax), pick(fi.WTPref, fi.WTMax)
	return nil
}

// findBase looks up the directory below the export. It is never created:
// a run creates only what it removes.
func (s *nfsStore) findBase(ctx context.Context, u nfsURL, fh []byte) error {
	s.display = "nfs://" + s.host
	if u.port != 0 {
		s.display = "nfs://" + net.JoinHostPort(s.host, strconv.Itoa(u.port))
	}
	s.display += strings.TrimSuffix(u.path, "/") + "/"
	for _, name := range strings.Split(strings.TrimPrefix(strings.TrimPrefix(u.path, s.export), "/"), "/") {
		if name == "" {
			continue
		}
		next, attr, err := s.c.lookup(ctx, fh, name)
		if err == nil && attr.Type != nfs3.NF3Dir {
			err = nfsStatus(nfs3.NFS3ErrNotDir)
		}
		if err != nil {
			return driver.WrapKind(object.ErrNoBucket, err, "nfs %s: directory %s: %v (fsbench creates no directory it would leave behind: create it first)", s.host, u.path, err)
		}
		fh = next
	}
	s.root = fh
	return nil
}

func (s *nfsStore) String() string { return s.display }

func (s *nfsStore) Close() error {
	if s.c != nil {
		s.c.pool.Close()
	}
	if s.mount != nil {
		if s.export != "" {
			ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
			_ = unmount(ctx, s.mount, s.auth, s.export)
			cancel()
		}
		s.mount.Close()
	}
	return nil
}

// nfsMaxIO caps the payload of one READ or WRITE call at 1 MiB, the most
// the Linux client sends (its rsize and wsize limit), whatever larger size
// the server offers (nfs-ganesha offers 64 MiB). It bounds the memory a
// connection's reply buffer and a transfer's buffer take.
const nfsMaxIO = 1 << 20

// splitKey checks a key and splits it into its directory (relative to the
// base, "" for the base) and its last name; dir is set for keys ending in
// "/". The key "" names the base itself (name "").
func splitKey(op, key string) (dir, name string, isDir bool, err error) {
	if err := driver.CheckKey(op, key); err != nil {
		return "", "", false, err
	}
	var parts []string
	for _, part := range strings.Split(key, "/") {
		if part != "" {
			parts = append(parts, part)
		}
	}
	if len(parts) == 0 {
		return "", "", true, nil
	}
	return strings.Join(parts[:len(parts)-1], "/"), parts[len(parts)-1], strings.HasSuffix(key, "/"), nil
}

// nfsErr wraps an error of an operation on key; a cancelled context shows
// as such.
func nfsErr(ctx context.Context, op, key string, err error) error {
	if err == nil {
		return nil
	}
	if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
		err = fmt.Errorf("%w (%v)", cerr, err)
	}
	return driver.OpErr(op, key, err)
}

// Create checks that the base directory still exists: the driver never
// creates it (see findBase).
func (s *nfsStore) Create(ctx context.Context) error {
	_, err := s.c.getattr(ctx, s.root)
	if err != nil {
		return nfsErr(ctx, "create", "", driver.WrapKind(object.ErrNoBucket, err, "%s: %v", s.display, err))
	}
	return nil
}

// retryStale runs fn again, once, with the directory handles forgotten,
// when a cached handle turned stale (the directory was removed, perhaps
// by another client, and maybe made again).
func (s *nfsStore) retryStale(fn func() error) error {
	err := fn()
	if stale(err) {
		s.dirs.clear()
		err = fn()
	}
	return err
}

// dirHandle returns the handle of dir (relative to the base), from the
// cache or by LOOKUP of its missing components, making them when mk is
// set (below the base only).
func (s *nfsStore) dirHandle(ctx context.Context, dir string, mk bool) ([]byte, error) {
	if dir == "" {
		return s.root, nil
	}
	if fh := s.dirs.get(dir); fh != nil {
		return fh, nil
	}
	parentDir, name := path.Split(dir)
	parent, err := s.dirHandle(ctx, strings.TrimSuffix(parentDir, "/"), mk)
	if err != nil {
		return nil, err
	}
	fh, attr, err := s.c.lookup(ctx, parent, name)
	if err == nil && attr.Type != nfs3.NF3Dir {
		return nil, nfsStatus(nfs3.NFS3ErrNotDir)
	}
	if mk && errors.Is(err, fs.ErrNotExist) {
		fh, err = s.c.mkdir(ctx, parent, name, 0o755)
		if errors.Is(err, fs.ErrExist) { // made meanwhile by another call
			fh, _, err = s.c.lookup(ctx, parent, name)
		}
	}
	if err != nil {
		return nil, err
	}
	s.dirs.put(dir, fh)
	return fh, nil
}

// handle returns the handle and attributes of key.
func (s *nfsStore) handle(ctx context.Context, dir, name string) ([]byte, *nfs3.Fattr, error) {
	if name == "" {
		a, err := s.c.getattr(ctx, s.root)
		return s.root, a, err
	}
	d, err := s.dirHandle(ctx, dir, false)
	if err != nil {
		return nil, nil, err
	}
	return s.c.lookup(ctx, d, name)
}

func nfsObject(key string, fa *nfs3.Fattr) object.Object {
	o := object.Object{Key: key, Size: int64(fa.Filesize), Mtime: fa.ModTime(), IsDir: fa.IsDir(),
		Mode: os.FileMode(fa.FileMode & 0o7777), UID: int(fa.UID), GID: int(fa.GID)}
	if o.IsDir {
		o.Size = 0
		o.Mode |= os.ModeDir
	}
	return o
}

func (s *nfsStore) Head(ctx context.Context, key string) (object.Object, error) {
	dir, name, isDir, err := splitKey("head", key)
	if err != nil {
		return object.Object{}, err
	}
	var a *nfs3.Fattr
	err = s.retryStale(func() (err error) { _, a, err = s.handle(ctx, dir, name); return err })
	if err != nil {
		return object.Object{}, nfsErr(ctx, "head", key, err)
	}
	if isDir != a.IsDir() && key != "" {
		return object.Object{}, driver.OpErr("head", key, object.ErrNotExist)
	}
	return nfsObject(key, a), nil
}

func (s *nfsStore) Delete(ctx context.Context, key string) error {
	dir, name, isDir, err := splitKey("delete", key)
	if err != nil || name == "" {
		return err // the base is not ours to remove
	}
	err = s.retryStale(func() error {
		d, err := s.dirHandle(ctx, dir, false)
		if err != nil {
			return err
		}
		return s.c.remove(ctx, d, name, isDir)
	})
	if isDir && (err == nil || errors.Is(err, object.ErrNotExist)) {
		s.dirs.drop(strings.TrimPrefix(dir+"/"+name, "/"))
	}
	if errors.Is(err, object.ErrNotExist) {
		return nil
	}
	return nfsErr(ctx, "delete", key, err)
}

func (s *nfsStore) List(ctx context.Context, opt object.ListOptions) (*object.ListPage, error) {
	page, err := driver.ListTree(ctx, func(ctx context.Context, dir string) ([]driver.DirEntry, error) {
		var out []driver.DirEntry
		err := s.retryStale(func() error {
			out = out[:0]
			return s.readDir(ctx, strings.TrimSuffix(dir, "/"), &out)
		})
		if errors.Is(err, object.ErrNotExist) {
			return nil, nil
		}
		return out, nfsErr(ctx, "list", dir, err)
	}, opt)
	return page, err
}

// readDir lists dir with READDIRPLUS, keeping the handles of the
// directories it holds for the walk that follows.
func (s *nfsStore) readDir(ctx context.Context, dir string, out *[]driver.DirEntry) error {
	d, err := s.dirHandle(ctx, dir, false)
	if err != nil {
		return err
	}
	return s.c.readdirplus(ctx, d, func(e *nfs3.EntryPlus) {
		if e.FileName == "." || e.FileName == ".." || !e.Attr.IsSet {
			return
		}
		if e.Attr.Attr.IsDir() && e.Handle.IsSet {
			s.dirs.put(strings.TrimPrefix(dir+"/"+e.FileName, "/"), e.Handle.FH)
		}
		*out = append(*out, driver.DirEntry{Name: e.FileName, Obj: nfsObject("", &e.Attr.Attr)})
	})
}

func (s *nfsStore) setattr(ctx context.Context, op, key string, sa nfs3.Sattr3) error {
	dir, name, isDir, err := splitKey(op, key)
	if err != nil {
		return err
	}
	err = s.retryStale(func() error {
		var fh []byte
		var err error
		if isDir && name != "" {
			fh, err = s.dirHandle(ctx, strings.TrimPrefix(dir+"/"+name, "/"), false)
		} else {
			fh, _, err = s.handle(ctx, dir, name)
		}
		if err != nil {
			return err
		}
		return s.c.setattr(ctx, fh, sa)
	})
	return nfsErr(ctx, op, key, err)
}

func (s *nfsStore) Chmod(ctx context.Context, key string, mode os.FileMode) error {
	return s.setattr(ctx, "chmod", key, nfs3.Sattr3{Mode: nfs3.SetMode{SetIt: true, Mode: uint32(mode.Perm())}})
}

func (s *nfsStore) Chown(ctx context.Context, key string, uid, gid int) error {
	if uid < 0 || gid < 0 {
		return driver.OpErr("chown", key, errors.New("uid and gid must be given, got "+strconv.Itoa(uid)+":"+strconv.Itoa(gid)))
	}
	return s.setattr(ctx, "chown", key, nfs3.Sattr3{
		UID: nfs3.SetUID{SetIt: true, UID: uint32(uid)},
		GID: nfs3.SetUID{SetIt: true, UID: uint32(gid)},
	})
}

func (s *nfsStore) Chtimes(ctx context.Context, key string, mtime time.Time) error {
	t := nfs3.NFS3Time{Seconds: uint32(mtime.Unix()), Nseconds: uint32(mtime.Nanosecond())}
	return s.setattr(ctx, "chtimes", key, nfs3.Sattr3{
		Atime: nfs3.SetTime{SetIt: nfs3.SetToClientTime, Time: t},
		Mtime: nfs3.SetTime{SetIt: nfs3.SetToClientTime, Time: t},
	})
}
