package object

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/willscott/go-nfs-client/nfs/rpc"
	"github.com/willscott/go-nfs-client/nfs/xdr"
)

// ONC RPC over TCP (RFC 5531, record marking of RFC 1831), built on the
// client library's message types and XDR codec. The library's own
// transport cannot be interrupted: a call ends only by its reply or its
// 5-second timeout, after which it sends the request again. Here a call runs
// in its caller's goroutine on a connection of its own, and cancelling the
// context sets a past deadline on that connection, so the call returns at
// once and the connection is dropped; the next call dials a new one.

// rpcPool hands out connections to one RPC server, one per call in flight.
type rpcPool struct {
	addr     string // host:port
	dialWait time.Duration
	callWait time.Duration // bound on one call: request sent, reply read
	maxIdle  int

	mu     sync.Mutex
	idle   []*rpcConn
	closed bool
}

// rpcConn is one connection. Its calls are sequential.
type rpcConn struct {
	nc  net.Conn
	buf []byte // the last reply, reused

	mu          sync.Mutex
	interrupted bool
}

var rpcXID atomic.Uint32

func init() { rpcXID.Store(rand.Uint32()) }

// errInterrupted marks a connection broken by cancellation.
var errInterrupted = errors.New("rpc call interrupted")

// rpcCall is what one call sends: the program, procedure and credentials,
// the XDR-encodable arguments, and optionally a payload (WRITE data) that
// is sent from the caller's buffer as an XDR opaque after the arguments.
type rpcCall struct {
	prog, vers, proc uint32
	auth             rpc.Auth
	args             any
	payload          []byte
	hasPayload       bool
}

// call sends c on a pooled connection and returns the reply's results.
// The reader is valid until the next call on the pool by this goroutine
// returns the connection's buffer to use: decode it before calling again.
func (p *rpcPool) call(ctx context.Context, c rpcCall, decode func(r *bytes.Reader) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cn, err := p.get(ctx)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, cn.interrupt)
	res, err := cn.roundTrip(c, p.callWait)
	if err == nil {
		err = decode(res)
	}
	if !stop() {
		// Cancelled: the connection may be mid-reply. Drop it.
		cn.nc.Close()
		return ctx.Err()
	}
	if err != nil && !isReplyErr(err) {
		cn.nc.Close() // an I/O or framing error: the stream is lost
		return err
	}
	p.put(cn)
	return err
}

func (p *rpcPool) get(ctx context.Context) (*rpcConn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, errors.New("connection closed")
	}
	if n := len(p.idle); n > 0 {
		cn := p.idle[n-1]
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		return cn, nil
	}
	p.mu.Unlock()
	nc, err := dialRPC(ctx, p.addr, p.dialWait)
	if err != nil {
		return nil, err
	}
	return &rpcConn{nc: nc}, nil
}

func (p *rpcPool) put(cn *rpcConn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || len(p.idle) >= p.maxIdle {
		cn.nc.Close()
		return
	}
	p.idle = append(p.idle, cn)
}

// Close closes the idle connections; connections in use are closed when
// their calls end.
func (p *rpcPool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	for _, cn := range p.idle {
		cn.nc.Close()
	}
	p.idle = nil
}

// dialRPC connects to addr. As root it binds a reserved source port (below
// 1024), which servers such as the Linux one require by default.
func dialRPC(ctx context.Context, addr string, wait time.Duration) (net.Conn, error) {
	dctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if os.Geteuid() == 0 {
		for range 16 {
			d := net.Dialer{LocalAddr: &net.TCPAddr{Port: 600 + rand.IntN(424)}, Control: reuseAddr}
			nc, err := d.DialContext(dctx, "tcp", addr)
			if err == nil || !(errors.Is(err, syscall.EADDRINUSE) || errors.Is(err, syscall.EADDRNOTAVAIL)) {
				return nc, err
			}
		}
	}
	return (&net.Dialer{}).DialContext(dctx, "tcp", addr)
}

func reuseAddr(_, _ string, c syscall.RawConn) error {
	var serr error
	err := c.Control(func(fd uintptr) {
		serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	})
	return errors.Join(err, serr)
}

// interrupt makes the connection's current and later I/O fail at once.
func (cn *rpcConn) interrupt() {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	cn.interrupted = true
	_ = cn.nc.SetDeadline(time.Unix(1, 0))
}

// setDeadline bounds the next call, unless the connection was interrupted.
func (cn *rpcConn) setDeadline(wait time.Duration) error {
	cn.mu.Lock()
	defer cn.mu.Unlock()
	if cn.interrupted {
		return errInterrupted
	}
	return cn.nc.SetDeadline(time.Now().Add(wait))
}

type callHeader struct {
	XID     uint32
	MsgType uint32 // 0: call
	rpc.Header
}

// roundTrip sends one call and reads its reply.
func (cn *rpcConn) roundTrip(c rpcCall, wait time.Duration) (*bytes.Reader, error) {
	if err := cn.setDeadline(wait); err != nil {
		return nil, err
	}
	xid := rpcXID.Add(1)
	var b bytes.Buffer
	b.Write([]byte{0, 0, 0, 0}) // record mark, set below
	hdr := callHeader{XID: xid, Header: rpc.Header{Rpcvers: 2, Prog: c.prog, Vers: c.vers, Proc: c.proc, Cred: c.auth, Verf: rpc.AuthNull}}
	if err := xdr.Write(&b, hdr); err != nil {
		return nil, err
	}
	if err := xdr.Write(&b, c.args); err != nil {
		return nil, err
	}
	bufs := net.Buffers{b.Bytes()}
	size := b.Len() - 4
	if c.hasPayload {
		n := len(c.payload)
		bufs[0] = binary.BigEndian.AppendUint32(bufs[0], uint32(n))
		pad := (4 - n%4) % 4
		bufs = append(bufs, c.payload, make([]byte, pad))
		size += 4 + n + pad
	}
	binary.BigEndian.PutUint32(bufs[0], uint32(size)|1<<31)
	if _, err := bufs.WriteTo(cn.nc); err != nil {
		return nil, err
	}
	for {
		if err := cn.readRecord(); err != nil {
			return nil, err
		}
		r := bytes.NewReader(cn.buf)
		got, _ := xdr.ReadUint32(r)
		if got == xid {
			return r, parseReplyHeader(r)
		}
		// A late reply to a call given up on: skip it.
	}
}

// maxRecord bounds a reply: a READ of the largest payload we ask for, or
// a READDIRPLUS of the largest count, with room for headers.
const maxRecord = 4 << 20

// readRecord reads one record, of one or more fragments, into cn.buf.
func (cn *rpcConn) readRecord() error {
	cn.buf = cn.buf[:0]
	var mark [4]byte
	for {
		if _, err := io.ReadFull(cn.nc, mark[:]); err != nil {
			return err
		}
		m := binary.BigEndian.Uint32(mark[:])
		n := int(m &^ (1 << 31))
		if len(cn.buf)+n > maxRecord {
			return fmt.Errorf("rpc reply of more than %d bytes", maxRecord)
		}
		start := len(cn.buf)
		cn.buf = append(cn.buf, make([]byte, n)...)
		if _, err := io.ReadFull(cn.nc, cn.buf[start:]); err != nil {
			return err
		}
		if m&(1<<31) != 0 {
			return nil
		}
	}
}

// isReplyErr tells whether err came in a whole reply, which leaves the
// connection usable.
func isReplyErr(err error) bool {
	var rerr *rpcReplyError
	var st nfsStatus
	return errors.As(err, &rerr) || errors.As(err, &st)
}

// rpcReplyError is a reply that refused the call; the stream stays usable.
type rpcReplyError struct{ msg string }

func (e *rpcReplyError) Error() string { return "rpc: " + e.msg }

// parseReplyHeader reads a reply's header after the XID, leaving r at the
// results of an accepted, successful call.
func parseReplyHeader(r *bytes.Reader) error {
	var h struct{ MsgType, Stat uint32 }
	if err := xdr.Read(r, &h); err != nil {
		return err
	}
	if h.MsgType != 1 {
		return fmt.Errorf("rpc: message type %d, want a reply", h.MsgType)
	}
	if h.Stat != 0 { // MSG_DENIED
		var d struct{ Stat, A, B uint32 }
		_ = xdr.Read(r, &d)
		if d.Stat == 1 {
			return &rpcReplyError{"authentication refused (auth_stat " + strconv.Itoa(int(d.A)) + ")"}
		}
		return &rpcReplyError{"RPC version mismatch"}
	}
	var verf rpc.Auth
	if err := xdr.Read(r, &verf); err != nil {
		return err
	}
	acc, err := xdr.ReadUint32(r)
	if err != nil {
		return err
	}
	switch acc {
	case 0:
		return nil
	case 1:
		return &rpcReplyError{"program unavailable"}
	case 2:
		return &rpcReplyError{"program version mismatch"}
	case 3:
		return &rpcReplyError{"procedure unavailable"}
	case 4:
		return &rpcReplyError{"garbage arguments"}
	}
	return &rpcReplyError{"system error on the server"}
}
