package nfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"

	nfs3 "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"
	"github.com/willscott/go-nfs-client/nfs/xdr"

	"github.com/fsbench/fsbench/pkg/object"
)

// The NFSv3 (RFC 1813), MOUNT v3 and portmapper procedures the driver
// uses, on the library's XDR types. Every procedure is one round trip and
// returns what its reply carries (handles, post-operation attributes), so
// that callers need no LOOKUP or GETATTR to learn it again.

const (
	progNFS    = 100003
	progMount  = 100005
	progPmap   = 100000
	nfsReadDir = 17 // READDIRPLUS

	stableUnstable = 0
	stableFileSync = 2

	createGuarded = 1
)

// nfsStatus is a status other than NFS3_OK (or MNT3_OK: the codes agree).
type nfsStatus uint32

var nfsStatusNames = map[nfsStatus]string{
	nfs3.NFS3ErrPerm: "operation not permitted", nfs3.NFS3ErrNoEnt: "no such file or directory",
	nfs3.NFS3ErrIO: "I/O error", nfs3.NFS3ErrAcces: "permission denied", nfs3.NFS3ErrExist: "file exists",
	nfs3.NFS3ErrNotDir: "not a directory", nfs3.NFS3ErrIsDir: "is a directory", nfs3.NFS3ErrInval: "invalid argument",
	nfs3.NFS3ErrNoSpc: "no space left on the server", nfs3.NFS3ErrROFS: "read-only file system",
	nfs3.NFS3ErrNameTooLong: "name too long", nfs3.NFS3ErrNotEmpty: "directory not empty",
	nfs3.NFS3ErrDQuot: "quota exceeded", nfs3.NFS3ErrStale: "stale file handle",
	nfs3.NFS3ErrBadHandle: "bad file handle", nfs3.NFS3ErrNotSupp: "operation not supported",
	nfs3.NFS3ErrServerFault: "server fault",
}

func (s nfsStatus) Error() string {
	if n, ok := nfsStatusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("NFS error %d", uint32(s))
}

// Is lets errors.Is match the status against this package's sentinels.
func (s nfsStatus) Is(target error) bool {
	switch s {
	case nfs3.NFS3ErrNoEnt, nfs3.NFS3ErrNotDir:
		return target == object.ErrNotExist
	case nfs3.NFS3ErrExist:
		return target == fs.ErrExist
	case nfs3.NFS3ErrAcces, nfs3.NFS3ErrPerm:
		return target == object.ErrAccess || target == fs.ErrPermission
	case nfs3.NFS3ErrNotSupp:
		return target == object.ErrNotSupported
	}
	return false
}

// stale tells whether err says a handle no longer names anything.
func stale(err error) bool {
	var s nfsStatus
	return errors.As(err, &s) && (s == nfs3.NFS3ErrStale || s == nfs3.NFS3ErrBadHandle)
}

// nfsClient speaks NFSv3 to one server.
type nfsClient struct {
	pool *rpcPool
	auth rpc.Auth
	// calls counts the calls made, by procedure number, so that tests
	// can see how many round trips an operation costs.
	calls [nfsProcs]atomic.Int64
}

// nfsProcs is the number of NFSv3 procedures (NULL to COMMIT).
const nfsProcs = 22

// call runs an NFS procedure; decode reads the results after an NFS3_OK.
func (c *nfsClient) call(ctx context.Context, proc uint32, args any, decode func(d *xdrDec) error) error {
	return c.do(ctx, rpcCall{prog: progNFS, vers: 3, proc: proc, auth: c.auth, args: args}, statusThen(decode))
}

// do counts and makes a call.
func (c *nfsClient) do(ctx context.Context, call rpcCall, decode func(d *xdrDec) error) error {
	if call.proc < nfsProcs {
		c.calls[call.proc].Add(1)
	}
	return c.pool.call(ctx, call, decode)
}

func statusThen(decode func(d *xdrDec) error) func(d *xdrDec) error {
	return func(d *xdrDec) error {
		st := d.u32()
		if d.err != nil {
			return d.err
		}
		if st != 0 {
			return nfsStatus(st)
		}
		if decode == nil {
			return nil
		}
		if err := decode(d); err != nil {
			return err
		}
		return d.err
	}
}

// read decodes the results into v with the reflection codec.
func read(v any) func(d *xdrDec) error {
	return func(d *xdrDec) error { return xdr.Read(d, v) }
}

// attrOf returns the attributes of a reply, or an error when the server
// left them out (servers may; the ones we know send them).
func attrOf(a nfs3.PostOpAttr) (*nfs3.Fattr, error) {
	if !a.IsSet {
		return nil, fmt.Errorf("the server sent no attributes")
	}
	return &a.Attr, nil
}

func (c *nfsClient) lookup(ctx context.Context, dir []byte, name string) ([]byte, *nfs3.Fattr, error) {
	var fh []byte
	var attr nfs3.PostOpAttr
	err := c.call(ctx, nfs3.NFSProc3Lookup, nfs3.Diropargs3{FH: dir, Filename: name}, func(d *xdrDec) error {
		fh = d.opaque()
		d.postOpAttr(&attr) // the directory's attributes follow: left unread
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	a, err := attrOf(attr)
	if err != nil {
		return nil, nil, err
	}
	return fh, a, nil
}

func (c *nfsClient) getattr(ctx context.Context, fh []byte) (*nfs3.Fattr, error) {
	var a nfs3.Fattr
	return &a, c.call(ctx, nfs3.NFSProc3GetAttr, struct{ FH []byte }{fh}, func(d *xdrDec) error { d.fattr(&a); return nil })
}

type sattrGuard struct {
	Check bool          `xdr:"union"`
	Ctime nfs3.NFS3Time `xdr:"unioncase=1"`
}

func (c *nfsClient) setattr(ctx context.Context, fh []byte, sa nfs3.Sattr3) error {
	args := struct {
		FH    []byte
		Attr  nfs3.Sattr3
		Guard sattrGuard
	}{fh, sa, sattrGuard{}}
	return c.call(ctx, nfs3.NFSProc3SetAttr, args, nil)
}

// createRes is the reply of CREATE and MKDIR (its directory's wcc_data
// is left unread).
type createRes struct {
	FH   nfs3.PostOpFH3
	Attr nfs3.PostOpAttr
}

func (res *createRes) decode(d *xdrDec) error {
	d.postOpFH(&res.FH)
	d.postOpAttr(&res.Attr)
	return nil
}

// handle returns the new object's handle, looking it up when the reply
// left it out.
func (c *nfsClient) handle(ctx context.Context, res *createRes, dir []byte, name string) ([]byte, error) {
	if res.FH.IsSet {
		return res.FH.FH, nil
	}
	fh, _, err := c.lookup(ctx, dir, name)
	return fh, err
}

// create makes a new file, failing if name exists.
func (c *nfsClient) create(ctx context.Context, dir []byte, name string, mode uint32) ([]byte, error) {
	args := struct {
		Where nfs3.Diropargs3
		How   uint32
		Attr  nfs3.Sattr3
	}{nfs3.Diropargs3{FH: dir, Filename: name}, createGuarded, nfs3.Sattr3{Mode: nfs3.SetMode{SetIt: true, Mode: mode}}}
	var res createRes
	if err := c.call(ctx, nfs3.NFSProc3Create, args, res.decode); err != nil {
		return nil, err
	}
	return c.handle(ctx, &res, dir, name)
}

func (c *nfsClient) mkdir(ctx context.Context, dir []byte, name string, mode uint32) ([]byte, error) {
	args := struct {
		Where nfs3.Diropargs3
		Attr  nfs3.Sattr3
	}{nfs3.Diropargs3{FH: dir, Filename: name}, nfs3.Sattr3{Mode: nfs3.SetMode{SetIt: true, Mode: mode}}}
	var res createRes
	if err := c.call(ctx, nfs3.NFSProc3Mkdir, args, res.decode); err != nil {
		return nil, err
	}
	return c.handle(ctx, &res, dir, name)
}

func (c *nfsClient) remove(ctx context.Context, dir []byte, name string, isDir bool) error {
	proc := uint32(nfs3.NFSProc3Remove)
	if isDir {
		proc = nfs3.NFSProc3RmDir
	}
	return c.call(ctx, proc, nfs3.Diropargs3{FH: dir, Filename: name}, nil)
}

func (c *nfsClient) rename(ctx context.Context, fromDir []byte, from string, toDir []byte, to string) error {
	args := struct{ From, To nfs3.Diropargs3 }{nfs3.Diropargs3{FH: fromDir, Filename: from}, nfs3.Diropargs3{FH: toDir, Filename: to}}
	return c.call(ctx, nfs3.NFSProc3Rename, args, nil)
}

// read reads into p from off; it returns the bytes read and whether the
// server says the file ends there.
func (c *nfsClient) read(ctx context.Context, fh []byte, off uint64, p []byte) (n int, eof bool, err error) {
	args := struct {
		FH     []byte
		Offset uint64
		Count  uint32
	}{fh, off, uint32(len(p))}
	err = c.call(ctx, nfs3.NFSProc3Read, args, func(d *xdrDec) error {
		var attr nfs3.PostOpAttr
		d.postOpAttr(&attr)
		count, isEOF, size := d.u32(), d.bool(), d.u32()
		if d.err != nil {
			return d.err
		}
		if int(size) > len(p) || size != count {
			return fmt.Errorf("READ reply of %d bytes for %d asked", size, len(p))
		}
		eof = isEOF
		d.readFull(p[:size]) // straight from the socket
		n = int(size)
		return d.err
	})
	return n, eof, err
}

// writeRes is the reply of WRITE (after its wcc_data).
type writeRes struct {
	Count     uint32
	Committed uint32
	Verf      uint64
}

// write writes p at off; the data goes from p to the socket uncopied.
func (c *nfsClient) write(ctx context.Context, fh []byte, off uint64, p []byte, stable uint32) (writeRes, error) {
	args := struct {
		FH     []byte
		Offset uint64
		Count  uint32
		Stable uint32
	}{fh, off, uint32(len(p)), stable}
	var res writeRes
	call := rpcCall{prog: progNFS, vers: 3, proc: nfs3.NFSProc3Write, auth: c.auth, args: args, payload: p, hasPayload: true}
	err := c.do(ctx, call, statusThen(func(d *xdrDec) error {
		d.skipWcc()
		res = writeRes{Count: d.u32(), Committed: d.u32(), Verf: d.u64()}
		return nil
	}))
	return res, err
}

// commit makes every unstable write of the file durable; it returns the
// server's write verifier, which changes when the server restarts.
func (c *nfsClient) commit(ctx context.Context, fh []byte) (uint64, error) {
	args := struct {
		FH     []byte
		Offset uint64
		Count  uint32
	}{fh, 0, 0}
	var verf uint64
	err := c.call(ctx, nfs3.NFSProc3Commit, args, func(d *xdrDec) error {
		d.skipWcc()
		verf = d.u64()
		return nil
	})
	return verf, err
}

// Sizes of a READDIRPLUS call: how much of the directory's names and
// cookies (dircount) and how much of the whole reply (maxcount) to send,
// so that a directory of a few thousand entries comes in one round trip.
const (
	readdirDirCount = 256 << 10
	readdirMaxCount = 1 << 20
)

// readdirArgs are the arguments of READDIRPLUS.
type readdirArgs struct {
	FH         []byte
	Cookie     uint64
	CookieVerf uint64
	DirCount   uint32
	MaxCount   uint32
}

// readdirplus lists a directory with each entry's attributes and handle.
func (c *nfsClient) readdirplus(ctx context.Context, dir []byte, each func(e *nfs3.EntryPlus)) error {
	a := readdirArgs{FH: dir, DirCount: readdirDirCount, MaxCount: readdirMaxCount}
	for eof := false; !eof; {
		err := c.call(ctx, nfsReadDir, a, func(d *xdrDec) error { return c.decodeDirPage(d, &a, each, &eof) })
		if err != nil {
			return err
		}
	}
	return nil
}

// decodeDirPage decodes one READDIRPLUS reply: each entry goes to each,
// and a's cookies move on to the next page.
func (c *nfsClient) decodeDirPage(d *xdrDec, a *readdirArgs, each func(e *nfs3.EntryPlus), eof *bool) error {
	var dirAttr nfs3.PostOpAttr
	d.postOpAttr(&dirAttr)
	a.CookieVerf = d.u64()
	var e nfs3.EntryPlus
	entries := 0
	for d.bool() && d.err == nil {
		e.FileId = d.u64()
		e.FileName = string(d.opaque())
		e.Cookie = d.u64()
		d.postOpAttr(&e.Attr)
		d.postOpFH(&e.Handle)
		if d.err != nil {
			return d.err
		}
		a.Cookie = e.Cookie
		entries++
		each(&e)
	}
	*eof = d.bool()
	if d.err == nil && !*eof && entries == 0 {
		return errors.New("READDIRPLUS reply with no entries and no end of the directory")
	}
	return d.err
}

func (c *nfsClient) fsinfo(ctx context.Context, root []byte) (*nfs3.FSInfo, error) {
	var fi nfs3.FSInfo
	return &fi, c.call(ctx, nfs3.NFSProc3FSInfo, struct{ FH []byte }{root}, read(&fi))
}

// mount asks the MOUNT service for the handle of an exported path.
func mount(ctx context.Context, p *rpcPool, auth rpc.Auth, dirpath string) ([]byte, error) {
	var fh []byte
	err := p.call(ctx, rpcCall{prog: progMount, vers: 3, proc: nfs3.MountProc3MNT, auth: auth, args: dirpath},
		statusThen(func(d *xdrDec) error {
			fh = d.opaque()
			return d.err
		}))
	return fh, err
}

func unmount(ctx context.Context, p *rpcPool, auth rpc.Auth, dirpath string) error {
	return p.call(ctx, rpcCall{prog: progMount, vers: 3, proc: nfs3.MountProc3UMNT, auth: auth, args: dirpath},
		func(*xdrDec) error { return nil })
}

// getport asks the portmapper at host:111 for the TCP port of a program.
func getport(ctx context.Context, p *rpcPool, prog, vers uint32) (int, error) {
	var port uint32
	err := p.call(ctx, rpcCall{prog: progPmap, vers: 2, proc: rpc.PmapProcGetPort, auth: rpc.AuthNull,
		args: rpc.Mapping{Prog: prog, Vers: vers, Prot: rpc.IPProtoTCP}}, read(&port))
	if err == nil && port == 0 {
		err = fmt.Errorf("program %d version %d is not registered", prog, vers)
	}
	return int(port), err
}
