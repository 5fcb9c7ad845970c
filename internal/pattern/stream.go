package pattern

import (
	"encoding/binary"
	"math/rand/v2"
	"unsafe"
)

// StreamMin is the size from which a file is written as a stream: its
// content is the run's 4 MiB stream base, entered at a point chosen by the
// file's identity, with a 16-byte stamp of (file, block) at the start of
// every 4 KiB block. Within any 4 MiB of such a file no byte string
// repeats (the base does not), and no two 4 KiB blocks of the run are
// equal (their stamps differ). What makes it cheap: a writer keeps a copy
// of the base and writes straight from it, changing only the stamps, 16
// bytes in 4096, as fio changes a few bytes of its one buffer; see Stream.
//
// Files smaller than StreamMin keep the keyed content described at
// Pattern: entering one base at random points would make small files
// overlap, which a compressor spanning several of them would find.
const StreamMin = streamBase

const (
	streamBase = 4 << 20
	block      = 4 << 10
	stampLen   = 16
	streamFlag = 1 << 63 // set in the identity of a file written as a stream
)

// Sized is the identity under which a file or object id of size bytes is
// written and checked: a stream identity from StreamMin up.
func Sized(id uint64, size int64) uint64 {
	if size >= StreamMin {
		return id | streamFlag
	}
	return id &^ streamFlag
}

// IsStream reports whether id is a stream identity (see Sized).
func IsStream(id uint64) bool { return id&streamFlag != 0 }

// streamStart is where the file id enters the base: a 4 KiB boundary.
func streamStart(id uint64) uint64 {
	return mix(id^0x5851f42d4c957f2d) % (streamBase / block) * block
}

// base4M is the run's stream base, made on first use (4 MiB of random
// words; runs that write no big file never make it).
func (p *Pattern) base4M() []byte {
	p.streamOnce.Do(func() {
		r := rand.New(rand.NewPCG(p.seed^0x2545f4914f6cdd1d, p.seed))
		words := make([]uint64, streamBase/8)
		for i := range words {
			words[i] = r.Uint64()
		}
		p.stream = unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(words))), streamBase)
		p.shapeStream(p.stream)
	})
	return p.stream
}

// fillStream is Fill for a stream identity: the base from the file's
// entry point on, then the stamps.
func (p *Pattern) fillStream(buf []byte, id uint64, off int64) {
	base := p.base4M()
	pos := (streamStart(id) + uint64(off)) % streamBase
	for done := 0; done < len(buf); pos = 0 {
		done += copy(buf[done:], base[pos:])
	}
	p.stamp(buf, id, off)
}

// stamp writes, into buf holding the content of id from off on, the parts
// of the 16-byte block stamps that fall in it; copies (Data.Dedupe) have
// none.
func (p *Pattern) stamp(buf []byte, id uint64, off int64) {
	end := off + int64(len(buf))
	for b := off / block; b*block < end; b++ {
		at := b * block
		if at+stampLen <= off || p.isDup(id, at) {
			continue // off is past this block's stamp, or the block is a copy
		}
		var s [stampLen]byte
		k := mix(id ^ uint64(b+1)*0x9e3779b97f4a7c15)
		binary.LittleEndian.PutUint64(s[:], k)
		binary.LittleEndian.PutUint64(s[8:], mix(k^0xd6e8feb86659fd93))
		lo, hi := max(at, off), min(at+stampLen, end)
		copy(buf[lo-off:hi-off], s[lo-at:hi-at])
	}
}

// Stream hands a writer the content of stream files without making it: it
// keeps its own copy of the base (and of its first maxBlock bytes again
// after it, so that no block wraps) and returns a slice of that copy with the
// block's stamps written in. One Stream serves one writer at a time.
type Stream struct {
	p        *Pattern
	buf      []byte
	maxBlock int
}

// NewStream makes a Stream for blocks of at most maxBlock bytes in buf,
// which must hold StreamLen(maxBlock) bytes (the caller chooses its alignment, e.g.
// for O_DIRECT: every block a Stream returns starts at a 4 KiB boundary of
// buf).
func (p *Pattern) NewStream(buf []byte, maxBlock int) *Stream {
	base := p.base4M()
	buf = buf[:StreamLen(maxBlock)]
	copy(buf, base)
	for done := streamBase; done < len(buf); {
		done += copy(buf[done:], base)
	}
	return &Stream{p: p, buf: buf, maxBlock: maxBlock}
}

// StreamLen is the buffer size a Stream for blocks of at most maxBlock
// bytes needs.
func StreamLen(maxBlock int) int { return streamBase + maxBlock }

// Block returns the content of n bytes of id from off on, as a slice of
// the stream's buffer that is valid until the next call. Any offset is
// served: a block starts in the buffer where off falls within 4 KiB, so it
// is as aligned as off is, up to 4 KiB (what O_DIRECT needs), and an
// unaligned transfer such as IOR's 47,008 bytes is not made anew either.
// ok is false when id is not a stream identity or n is larger than the
// stream's maxBlock: make the block with Fill then.
func (s *Stream) Block(id uint64, off int64, n int) (b []byte, ok bool) {
	if s == nil || !IsStream(id) || off < 0 || n > s.maxBlock || n < 0 {
		return nil, false
	}
	pos := (streamStart(id) + uint64(off)) % streamBase
	b = s.buf[pos : pos+uint64(n)]
	s.p.stamp(b, id, off)
	return b, true
}
