package nfs

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
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
	nc   net.Conn
	rr   recordReader // replies, through a buffer
	dec  xdrDec
	wbuf []byte // the last request, reused

	mu          sync.Mutex
	interrupted bool
}

// rpcReadBuffer is the size of a connection's read buffer: room for
// every reply but READ's data, which bypasses it.
const rpcReadBuffer = 64 << 10

func newRPCConn(nc net.Conn) *rpcConn {
	cn := &rpcConn{nc: nc}
	cn.rr.br = bufio.NewReaderSize(nc, rpcReadBuffer)
	cn.dec.rr = &cn.rr
	return cn
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

// call sends c on a pooled connection and decodes the reply's results
// with decode, which reads them off the connection.
func (p *rpcPool) call(ctx context.Context, c rpcCall, decode func(d *xdrDec) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	cn, err := p.get(ctx)
	if err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, cn.interrupt)
	d, err := cn.roundTrip(c, p.callWait)
	if err == nil {
		err = decode(d)
	}
	if err == nil || isReplyErr(err) {
		// Skip what the decoder left, so the next reply starts clean.
		if ferr := cn.rr.finish(); ferr != nil {
			err = ferr
		}
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
	return newRPCConn(nc), nil
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

// roundTrip sends one call and reads its reply up to the results, which
// the returned decoder reads.
func (cn *rpcConn) roundTrip(c rpcCall, wait time.Duration) (*xdrDec, error) {
	if err := cn.setDeadline(wait); err != nil {
		return nil, err
	}
	xid := rpcXID.Add(1)
	req, err := cn.encode(xid, c)
	if err != nil {
		return nil, err
	}
	bufs := net.Buffers{req}
	if c.hasPayload {
		bufs = append(bufs, c.payload, xdrPad[:(4-len(c.payload)%4)%4])
	}
	if _, err := bufs.WriteTo(cn.nc); err != nil {
		return nil, err
	}
	d := &cn.dec
	for {
		if err := cn.rr.start(); err != nil {
			return nil, err
		}
		d.err = nil
		if got := d.u32(); d.err != nil {
			return nil, d.err
		} else if got == xid {
			return d, parseReplyHeader(d)
		}
		// A late reply to a call given up on: skip it.
		if err := cn.rr.finish(); err != nil {
			return nil, err
		}
	}
}

var xdrPad [4]byte

// encode makes the request of c in the connection's buffer: record mark,
// call header, arguments, and the length of the payload that follows.
func (cn *rpcConn) encode(xid uint32, c rpcCall) ([]byte, error) {
	b := append(cn.wbuf[:0], 0, 0, 0, 0) // record mark, set below
	for _, v := range []uint32{xid, 0, 2, c.prog, c.vers, c.proc, c.auth.Flavor, uint32(len(c.auth.Body))} {
		b = binary.BigEndian.AppendUint32(b, v)
	}
	b = append(b, c.auth.Body...)
	b = append(b, xdrPad[:(4-len(c.auth.Body)%4)%4]...)
	b = binary.BigEndian.AppendUint64(b, 0) // verifier: AUTH_NULL
	w := appendWriter{&b}
	if err := xdr.Write(w, c.args); err != nil {
		return nil, err
	}
	size := len(b) - 4
	if c.hasPayload {
		n := len(c.payload)
		b = binary.BigEndian.AppendUint32(b, uint32(n))
		size += 4 + n + (4-n%4)%4
	}
	binary.BigEndian.PutUint32(b, uint32(size)|1<<31)
	cn.wbuf = b
	return b, nil
}

// appendWriter appends what is written to a slice.
type appendWriter struct{ b *[]byte }

func (w appendWriter) Write(p []byte) (int, error) {
	*w.b = append(*w.b, p...)
	return len(p), nil
}

// maxRecord bounds a reply: a READ of the largest payload we ask for, or
// a READDIRPLUS of the largest count, with room for headers.
const maxRecord = 4 << 20

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

// parseReplyHeader reads a reply's header after the XID, leaving d at the
// results of an accepted, successful call.
func parseReplyHeader(d *xdrDec) error {
	msgType, stat := d.u32(), d.u32()
	if d.err != nil {
		return d.err
	}
	if msgType != 1 {
		return fmt.Errorf("rpc: message type %d, want a reply", msgType)
	}
	if stat != 0 { // MSG_DENIED
		if d.u32() == 1 {
			return &rpcReplyError{"authentication refused (auth_stat " + strconv.Itoa(int(d.u32())) + ")"}
		}
		return &rpcReplyError{"RPC version mismatch"}
	}
	d.u32() // verifier flavor
	if n := d.u32(); n > 400 {
		return fmt.Errorf("rpc: verifier of %d bytes", n)
	} else {
		d.skip(int(n+3) &^ 3)
	}
	acc := d.u32()
	if d.err != nil {
		return d.err
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
