package nfs

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"

	nfs3 "github.com/willscott/go-nfs-client/nfs"
)

// A reply is decoded as it comes off the connection, through a buffered
// reader: one read system call brings a small reply whole, record mark
// included, and the data of a READ goes from the socket straight into the
// caller's buffer, with no copy of the record in between. The procedures
// on the hot path (LOOKUP, GETATTR, CREATE, WRITE, READ, COMMIT,
// READDIRPLUS) decode their results by hand; the others go through the
// library's reflection codec, which reads from the same stream.

// recordReader reads one RPC record (RFC 1831 record marking) of one or
// more fragments, as an io.Reader that ends at the record's end.
type recordReader struct {
	br    *bufio.Reader
	left  int  // bytes left in the current fragment
	last  bool // the current fragment is the record's last
	total int  // bytes of the record so far
}

// start begins the next record.
func (rr *recordReader) start() error {
	rr.left, rr.last, rr.total = 0, false, 0
	return rr.nextFragment()
}

func (rr *recordReader) nextFragment() error {
	var mark [4]byte
	if _, err := io.ReadFull(rr.br, mark[:]); err != nil {
		return err
	}
	m := binary.BigEndian.Uint32(mark[:])
	rr.left, rr.last = int(m&^(1<<31)), m&(1<<31) != 0
	rr.total += rr.left
	if rr.total > maxRecord {
		return fmt.Errorf("rpc reply of more than %d bytes", maxRecord)
	}
	return nil
}

// Read reads the record's bytes; io.EOF at its end.
func (rr *recordReader) Read(p []byte) (int, error) {
	for rr.left == 0 {
		if rr.last {
			return 0, io.EOF
		}
		if err := rr.nextFragment(); err != nil {
			return 0, noEOF(err)
		}
	}
	n, err := rr.br.Read(p[:min(len(p), rr.left)])
	rr.left -= n
	return n, noEOF(err)
}

// noEOF: the connection ending inside a record is an error of its own.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// finish skips what is left of the record.
func (rr *recordReader) finish() error {
	for {
		if rr.left > 0 {
			n, err := rr.br.Discard(rr.left)
			rr.left -= n
			if err != nil {
				return noEOF(err)
			}
		}
		if rr.last {
			return nil
		}
		if err := rr.nextFragment(); err != nil {
			return noEOF(err)
		}
	}
}

// xdrDec decodes XDR values from a record. The first error sticks: later
// reads return zeros, and err tells.
type xdrDec struct {
	rr  *recordReader
	err error
}

// Read makes the decoder an io.Reader, for the reflection codec.
func (d *xdrDec) Read(p []byte) (int, error) { return d.rr.Read(p) }

// fixed returns the next n (at most 8) bytes, from the buffer when they
// are there.
func (d *xdrDec) fixed(n int, tmp *[8]byte) []byte {
	if d.err != nil {
		return tmp[:n]
	}
	if d.rr.left >= n {
		if b, err := d.rr.br.Peek(n); err == nil {
			copy(tmp[:], b)
			_, _ = d.rr.br.Discard(n)
			d.rr.left -= n
			return tmp[:n]
		}
	}
	if _, err := io.ReadFull(d.rr, tmp[:n]); err != nil {
		d.err = noEOF(err)
		clear(tmp[:])
	}
	return tmp[:n]
}

func (d *xdrDec) u32() uint32 {
	var tmp [8]byte
	return binary.BigEndian.Uint32(d.fixed(4, &tmp))
}

func (d *xdrDec) u64() uint64 {
	var tmp [8]byte
	return binary.BigEndian.Uint64(d.fixed(8, &tmp))
}

func (d *xdrDec) bool() bool { return d.u32() != 0 }

// readFull reads len(p) bytes of data and the padding to 4 bytes.
func (d *xdrDec) readFull(p []byte) {
	if d.err != nil {
		return
	}
	if _, err := io.ReadFull(d.rr, p); err != nil {
		d.err = noEOF(err)
		return
	}
	d.skip((4 - len(p)%4) % 4)
}

func (d *xdrDec) skip(n int) {
	for d.err == nil && n > 0 {
		var tmp [8]byte
		k := min(n, 8)
		d.fixed(k, &tmp)
		n -= k
	}
}

// maxOpaque bounds the handles and names a reply may carry (NFSv3 handles
// are at most 64 bytes, names at most 255 on the servers we know).
const maxOpaque = 4096

// opaque reads a variable-length opaque (a handle, a name).
func (d *xdrDec) opaque() []byte {
	n := d.u32()
	if d.err != nil {
		return nil
	}
	if n > maxOpaque {
		d.err = fmt.Errorf("xdr: opaque of %d bytes", n)
		return nil
	}
	b := make([]byte, n)
	d.readFull(b)
	return b
}

func (d *xdrDec) time() nfs3.NFS3Time { return nfs3.NFS3Time{Seconds: d.u32(), Nseconds: d.u32()} }

// fattr reads a fattr3.
func (d *xdrDec) fattr(a *nfs3.Fattr) {
	a.Type, a.FileMode, a.Nlink, a.UID, a.GID = d.u32(), d.u32(), d.u32(), d.u32(), d.u32()
	a.Filesize, a.Used = d.u64(), d.u64()
	a.SpecData = [2]uint32{d.u32(), d.u32()}
	a.FSID, a.Fileid = d.u64(), d.u64()
	a.Atime, a.Mtime, a.Ctime = d.time(), d.time(), d.time()
}

// postOpAttr reads a post_op_attr.
func (d *xdrDec) postOpAttr(a *nfs3.PostOpAttr) {
	if a.IsSet = d.bool(); a.IsSet {
		d.fattr(&a.Attr)
	}
}

// postOpFH reads a post_op_fh3.
func (d *xdrDec) postOpFH(h *nfs3.PostOpFH3) {
	if h.IsSet = d.bool(); h.IsSet {
		h.FH = d.opaque()
	}
}

// skipWcc skips a wcc_data: pre_op_attr (size, mtime, ctime) and
// post_op_attr.
func (d *xdrDec) skipWcc() {
	if d.bool() {
		d.skip(8 + 8 + 8)
	}
	var a nfs3.PostOpAttr
	d.postOpAttr(&a)
}
