// Package pattern makes the content of every byte fsbench writes, to files
// and to objects alike, and checks what it reads back against it.
//
// It does no I/O and imports no package of fsbench's: callers write and read
// the bytes it makes.
package pattern

import (
	"bytes"
	crand "crypto/rand"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"io"
	"math/bits"
	"math/rand/v2"
	"sync"
	"unsafe"
)

// segment is the span of a file whose bytes share one key, and the size of
// the pattern's random base.
const segment = 64 << 10

// Pattern produces the content of every byte fsbench writes and checks.
// A file has one of two kinds of content, told by its identity: big files
// (see StreamMin and Sized) are streams, described there; for the others
// the byte at offset o of file id is base[o mod 64 KiB] XOR one byte of a
// 64-bit key derived from (id, o / 64 KiB): a pure function of the run's
// seed, the file and the offset, so data written with one transfer size
// verifies when read with another, at any offsets, and a reader recomputes
// what a writer wrote.
//
// The base is random, so the data does not compress; every 64 KiB segment
// of every file has its own key, so no two segments, and no two 4 KiB
// chunks, are equal (what deduplicating storage looks for), and a
// compressor finds no repeated byte strings between segments however large
// its window. Making a block is one pass over a base that stays in the
// CPU's cache, about as cheap as copying it. A Pattern is shared by all
// workers; besides making the stream base once, on first use, it is
// read-only after New.
type Pattern struct {
	seed       uint64
	base       []byte // segment bytes
	streamOnce sync.Once
	stream     []byte       // the stream base, see StreamMin
	data       Data         // see NewData
	dup        *[slots]bool // Data.Dedupe: which slots of the stream base are copies
	pool       []byte       // Data.Dedupe: the blocks copies are of
}

// RandomSeed is a new seed from the system's random source, for a run
// that is given none.
func RandomSeed() uint64 {
	var b [8]byte
	_, _ = crand.Read(b[:])
	return binary.LittleEndian.Uint64(b[:])
}

// New builds the random base of a run.
func New(seed uint64) *Pattern {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	words := make([]uint64, segment/8)
	for i := range words {
		words[i] = r.Uint64()
	}
	base := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), segment)
	return &Pattern{seed: seed, base: base}
}

// ID derives the identity of a file or object from its name and the run's
// seed: a keyed identity, which Sized turns into a stream one for big files.
func (p *Pattern) ID(name string) uint64 {
	h := fnv.New64a()
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], p.seed)
	h.Write(s[:])
	h.Write([]byte(name))
	return h.Sum64() &^ streamFlag
}

// Fill writes into buf the content of file id from byte offset off on.
func (p *Pattern) Fill(buf []byte, id uint64, off int64) {
	switch {
	case IsStream(id):
		p.fillStream(buf, id, off)
	case !p.data.Plain():
		p.fillShaped(buf, id, off)
	default:
		p.fillKeyed(buf, id, off)
	}
}

// fillKeyed is Fill for a keyed identity.
func (p *Pattern) fillKeyed(buf []byte, id uint64, off int64) {
	for len(buf) > 0 {
		seg := uint64(off) / segment
		in := int(uint64(off) % segment)
		n := min(segment-in, len(buf))
		xorKey(buf[:n], p.base[in:in+n], mix(id^(seg+1)*0x9e3779b97f4a7c15), in)
		buf = buf[n:]
		off += int64(n)
	}
}

// keyRun is how many bytes of repeated key xorKey hands to one XORBytes
// call: short enough to lay out cheaply for a 4 KiB object, long enough
// that the calls cost nothing beside the pass.
const keyRun = 512

// xorKey sets dst[i] = src[i] XOR byte (pos+i) mod 8 of key (little-endian),
// where pos is src's offset in the base. It lays the key out once, rotated
// to pos, over keyRun bytes and XORs with that run in crypto/subtle's
// XORBytes, which is vectorised; a run is a multiple of 8 bytes long, so
// every run starts at the same phase of the key.
func xorKey(dst, src []byte, key uint64, pos int) {
	var run [keyRun]byte
	k := bits.RotateLeft64(key, -8*(pos%8))
	for i := 0; i < keyRun; i += 8 {
		binary.LittleEndian.PutUint64(run[i:], k)
	}
	for len(dst) > 0 {
		n := subtle.XORBytes(dst, src[:min(len(dst), keyRun)], run[:])
		dst, src = dst[n:], src[n:]
	}
}

// mix is SplitMix64's finaliser: a cheap, well-spread hash of x.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// Check compares buf with the content of id from offset off on, 4 KiB at a
// time against a buffer on the stack (no allocation, no second copy of a
// large block). It returns the index of the first differing byte, or -1.
func (p *Pattern) Check(buf []byte, id uint64, off int64) int {
	var exp [4096]byte
	for done := 0; done < len(buf); {
		n := min(len(exp), len(buf)-done)
		p.Fill(exp[:n], id, off+int64(done))
		if got := buf[done : done+n]; !bytes.Equal(got, exp[:n]) {
			for i := range n {
				if got[i] != exp[i] {
					return done + i
				}
			}
		}
		done += n
	}
	return -1
}

// Reader streams size bytes of id: it holds nothing but its position, so
// a large object is uploaded without being kept in memory.
func (p *Pattern) Reader(id uint64, size int64) *Reader {
	return &Reader{p: p, id: id, size: size}
}

// Reader is an io.ReadSeeker and io.ReaderAt over the content of one id.
type Reader struct {
	p    *Pattern
	id   uint64
	size int64
	off  int64
}

// ReadAt reads the content at off, as io.ReaderAt.
func (r *Reader) ReadAt(b []byte, off int64) (int, error) {
	if off >= r.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), r.size-off))
	r.p.Fill(b[:n], r.id, off)
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// Read reads on from the current position, as io.Reader.
func (r *Reader) Read(b []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(b)), r.size-r.off))
	r.p.Fill(b[:n], r.id, r.off)
	r.off += int64(n)
	return n, nil
}

// Seek sets the position, as io.Seeker.
func (r *Reader) Seek(offset int64, whence int) (int64, error) {
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += r.off
	case io.SeekEnd:
		offset += r.size
	default:
		return 0, errors.New("seek: invalid whence")
	}
	if offset < 0 {
		return 0, errors.New("seek: negative position")
	}
	r.off = offset
	return offset, nil
}
