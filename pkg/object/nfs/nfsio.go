package nfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"syscall"

	nfs3 "github.com/willscott/go-nfs-client/nfs"

	"github.com/fsbench/fsbench/pkg/object/internal/driver"
)

// Put writes a temporary file and renames it into place, as on local
// disks. An object that fits in one WRITE goes as one FILE_SYNC write;
// a bigger one as UNSTABLE writes and one COMMIT before the rename.
func (s *nfsStore) Put(ctx context.Context, key string, data io.ReadSeeker) error {
	dir, name, isDir, err := splitKey("put", key)
	if err != nil {
		return err
	}
	if name == "" {
		return driver.OpErr("put", key, errors.New("invalid key"))
	}
	if isDir {
		err = s.retryStale(func() error {
			_, err := s.dirHandle(ctx, strings.TrimPrefix(dir+"/"+name, "/"), true)
			return err
		})
		return nfsErr(ctx, "put", key, err)
	}
	n, err := driver.Size(data)
	if err != nil {
		return driver.OpErr("put", key, err)
	}
	err = s.retryStale(func() error {
		d, err := s.dirHandle(ctx, dir, true)
		if err != nil {
			return err
		}
		return s.putFile(ctx, d, name, data, n)
	})
	return nfsErr(ctx, "put", key, err)
}

func (s *nfsStore) putFile(ctx context.Context, dir []byte, name string, data io.ReadSeeker, n int64) error {
	tmp := "." + name + ".tmp" + driver.RandomSuffix()
	fh, err := s.c.create(ctx, dir, tmp, 0o644)
	if err != nil {
		return err
	}
	err = s.writeAll(ctx, fh, data, n)
	if err == nil {
		err = s.c.rename(ctx, dir, tmp, dir, name)
	}
	if err != nil {
		// Not the caller's context: it may be cancelled, and the
		// temporary file must go all the same. The call is bounded.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.timeout)
		_ = s.c.remove(cctx, dir, tmp, false)
		cancel()
	}
	return err
}

// errServerRestarted: the write verifier changed between writes and their
// COMMIT, so unstable data may have been lost.
var errServerRestarted = errors.New("the server restarted during the write (write verifier changed)")

// writeAll writes the n bytes of data to the file fh.
func (s *nfsStore) writeAll(ctx context.Context, fh []byte, data io.ReadSeeker, n int64) error {
	if n == 0 {
		return nil
	}
	if _, err := data.Seek(0, io.SeekStart); err != nil {
		return err
	}
	bp := getIOBuf()
	defer ioBufs.Put(bp)
	buf := (*bp)[:min(int64(s.wsize), n)]
	how := uint32(stableUnstable)
	if n <= int64(s.wsize) {
		how = stableFileSync
	}
	var verf uint64
	needCommit := false
	for off := int64(0); off < n; {
		chunk := buf[:min(int64(len(buf)), n-off)]
		if _, err := io.ReadFull(data, chunk); err != nil {
			return fmt.Errorf("read the data at %d: %w", off, err)
		}
		for len(chunk) > 0 {
			res, err := s.c.write(ctx, fh, uint64(off), chunk, how)
			if err != nil {
				return err
			}
			if res.Count == 0 || int(res.Count) > len(chunk) {
				return fmt.Errorf("WRITE of %d bytes at %d: server wrote %d", len(chunk), off, res.Count)
			}
			if needCommit && res.Verf != verf {
				return errServerRestarted
			}
			needCommit, verf = needCommit || res.Committed != stableFileSync, res.Verf
			chunk, off = chunk[res.Count:], off+int64(res.Count)
		}
	}
	if !needCommit {
		return nil
	}
	cv, err := s.c.commit(ctx, fh)
	if err == nil && cv != verf {
		err = errServerRestarted
	}
	return err
}

// ioBufs holds transfer buffers of nfsMaxIO bytes.
var ioBufs = sync.Pool{New: func() any { b := make([]byte, nfsMaxIO); return &b }}

func getIOBuf() *[]byte { return ioBufs.Get().(*[]byte) }

func (s *nfsStore) Get(ctx context.Context, key string, off, limit int64) (io.ReadCloser, error) {
	dir, name, _, err := splitKey("get", key)
	if err != nil {
		return nil, err
	}
	var fh []byte
	var a *nfs3.Fattr
	err = s.retryStale(func() (err error) { fh, a, err = s.handle(ctx, dir, name); return err })
	if err != nil {
		return nil, nfsErr(ctx, "get", key, err)
	}
	if a.IsDir() {
		return nil, driver.OpErr("get", key, syscall.EISDIR)
	}
	r := &nfsReader{s: s, ctx: ctx, fh: fh, key: key, off: off, end: -1, size: int64(a.Filesize)}
	if limit >= 0 {
		r.end = off + limit
	}
	return r, nil
}

// nfsReader reads a file with READ calls of the server's size. The size
// known from the LOOKUP sizes the last call so that it brings the end of
// the file and the EOF flag together: a small object is one READ. Reads
// smaller than a call go through a buffer.
type nfsReader struct {
	s    *nfsStore
	ctx  context.Context
	fh   []byte
	key  string
	off  int64 // of the next byte to fetch
	end  int64 // -1: to the end of the file
	size int64 // from the LOOKUP, a hint
	eof  bool

	bp      *[]byte
	pending []byte // fetched, not yet returned
	closed  bool
}

func (r *nfsReader) Read(p []byte) (int, error) {
	if r.closed {
		return 0, driver.OpErr("get", r.key, errors.New("read after close"))
	}
	if len(r.pending) > 0 {
		n := copy(p, r.pending)
		r.pending = r.pending[n:]
		return n, nil
	}
	if r.eof || (r.end >= 0 && r.off >= r.end) {
		r.release()
		return 0, io.EOF
	}
	if len(p) == 0 {
		return 0, nil
	}
	chunk := r.chunk()
	if len(p) >= chunk {
		return r.fetch(p[:chunk])
	}
	if r.bp == nil {
		r.bp = getIOBuf()
	}
	n, err := r.fetch((*r.bp)[:chunk])
	if err != nil {
		return 0, err
	}
	r.pending = (*r.bp)[:n]
	m := copy(p, r.pending)
	r.pending = r.pending[m:]
	return m, nil
}

// chunk is the size of the next READ.
func (r *nfsReader) chunk() int {
	c := int64(r.s.rsize)
	if left := r.size - r.off; left > 0 {
		c = min(c, left)
	}
	if r.end >= 0 {
		c = min(c, r.end-r.off)
	}
	return int(c)
}

func (r *nfsReader) fetch(p []byte) (int, error) {
	n, eof, err := r.s.c.read(r.ctx, r.fh, uint64(r.off), p)
	if err != nil {
		return 0, nfsErr(r.ctx, "get", r.key, err)
	}
	r.off += int64(n)
	r.eof = eof || n == 0
	if n == 0 {
		r.release()
		return 0, io.EOF
	}
	return n, nil
}

func (r *nfsReader) release() {
	if r.bp != nil {
		ioBufs.Put(r.bp)
		r.bp, r.pending = nil, nil
	}
}

func (r *nfsReader) Close() error {
	r.closed = true
	r.release()
	return nil
}

// dirCache keeps the handles of directories by their path below the base,
// so that an operation on a key costs no LOOKUP of its directories.
type dirCache struct {
	mu sync.Mutex
	m  map[string][]byte
}

// maxCachedDirs bounds the cache; past it, it starts again empty.
const maxCachedDirs = 1 << 14

func (c *dirCache) init() { c.m = make(map[string][]byte) }

func (c *dirCache) get(dir string) []byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[dir]
}

func (c *dirCache) put(dir string, fh []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) >= maxCachedDirs {
		clear(c.m)
	}
	c.m[dir] = fh
}

// drop forgets dir and everything below it.
func (c *dirCache) drop(dir string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for d := range c.m {
		if d == dir || strings.HasPrefix(d, dir+"/") {
			delete(c.m, d)
		}
	}
}

func (c *dirCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	clear(c.m)
}
