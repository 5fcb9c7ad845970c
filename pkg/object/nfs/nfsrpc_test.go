package nfs

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	nfs3 "github.com/willscott/go-nfs-client/nfs"
)

// A call to a server that never answers returns as soon as its context is
// cancelled (not after the call's own bound), and its connection is not
// used again.
func TestRPCCancelInterruptsCall(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	conns := make(chan net.Conn, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			conns <- c // read nothing, answer nothing
		}
	}()
	p := &rpcPool{addr: l.Addr().String(), dialWait: 5 * time.Second, callWait: time.Hour, maxIdle: 4}
	defer p.Close()
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	start := time.Now()
	err = p.call(ctx, rpcCall{prog: progNFS, vers: 3, proc: 0, args: struct{}{}}, func(*xdrDec) error { return nil })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("call: %v, want context.Canceled", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Fatalf("call returned after %v: not interrupted", d)
	}
	if len(p.idle) != 0 {
		t.Errorf("the interrupted connection went back to the pool")
	}
	server := <-conns
	server.SetReadDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.Copy(io.Discard, server); err != nil {
		t.Errorf("the interrupted connection is still open: %v", err)
	}
}

// fakeReply is a successful reply to xid carrying results, split into
// fragments of at most frag bytes.
func fakeReply(xid uint32, results []byte, frag int) []byte {
	var body []byte
	for _, v := range []uint32{xid, 1, 0, 0, 0, 0} { // reply, accepted, AUTH_NULL verifier, SUCCESS
		body = binary.BigEndian.AppendUint32(body, v)
	}
	body = append(body, results...)
	var out []byte
	for len(body) > 0 {
		n := min(frag, len(body))
		mark := uint32(n)
		if n == len(body) {
			mark |= 1 << 31
		}
		out = binary.BigEndian.AppendUint32(out, mark)
		out = append(out, body[:n]...)
		body = body[n:]
	}
	return out
}

// A reply split into fragments decodes whole, a late reply to another
// call is skipped, what the decoder leaves of a record is skipped, and
// the connection serves the next call.
func TestRPCFragmentedReplies(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	results := []byte{0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o', 0, 0, 0, 0, 0, 0, 42, 9, 9, 9, 9}
	go func() {
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		for {
			var mark [4]byte
			if _, err := io.ReadFull(c, mark[:]); err != nil {
				return
			}
			req := make([]byte, binary.BigEndian.Uint32(mark[:])&^(1<<31))
			if _, err := io.ReadFull(c, req); err != nil {
				return
			}
			xid := binary.BigEndian.Uint32(req)
			c.Write(append(fakeReply(xid-1, results, 7), fakeReply(xid, results, 3)...))
		}
	}()
	p := &rpcPool{addr: l.Addr().String(), dialWait: 5 * time.Second, callWait: 10 * time.Second, maxIdle: 1}
	defer p.Close()
	for i := range 3 {
		var name []byte
		var n uint32
		err := p.call(context.Background(), rpcCall{prog: progNFS, vers: 3, args: struct{}{}}, func(d *xdrDec) error {
			name, n = d.opaque(), d.u32()
			return d.err // the last 4 bytes are left unread
		})
		if err != nil || string(name) != "hello" || n != 42 {
			t.Fatalf("call %d: %q %d %v, want \"hello\" 42", i, name, n, err)
		}
		if len(p.idle) != 1 {
			t.Fatalf("call %d: the connection did not go back to the pool", i)
		}
	}
}

// decodeRecord decodes body as the results of a reply with decode.
func decodeRecord(body []byte, decode func(d *xdrDec) error) error {
	rec := binary.BigEndian.AppendUint32(nil, uint32(len(body))|1<<31)
	rr := recordReader{br: bufio.NewReader(bytes.NewReader(append(rec, body...)))}
	if err := rr.start(); err != nil {
		return err
	}
	d := &xdrDec{rr: &rr}
	err := decode(d)
	if ferr := rr.finish(); err == nil {
		err = ferr
	}
	return err
}

// A server's reply is input from the network: no bytes may make a
// decoder panic or loop, whatever they say.
func FuzzNFSReplyDecode(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0})
	f.Add(bytes.Repeat([]byte{0, 0, 0, 1}, 40))
	f.Add(bytes.Repeat([]byte{0xff}, 64))
	f.Fuzz(func(t *testing.T, body []byte) {
		c := &nfsClient{}
		var a nfs3.Fattr
		decoders := []func(d *xdrDec) error{
			statusThen(func(d *xdrDec) error { d.fattr(&a); return nil }),
			statusThen(new(createRes).decode),
			statusThen(func(d *xdrDec) error { d.skipWcc(); d.u32(); d.u64(); return nil }),
			parseReplyHeader,
			func(d *xdrDec) error { return c.decodeDirPage(d, &readdirArgs{}, func(*nfs3.EntryPlus) {}, new(bool)) },
		}
		for _, dec := range decoders {
			_ = decodeRecord(body, dec)
		}
	})
}
