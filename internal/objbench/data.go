package objbench

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"io"
	"math/rand/v2"
)

// Object content. Every byte is a pure function of the object's identity and
// its position, so a download is checked without keeping a copy of what
// was uploaded, any range can be produced on its own, and a big object is
// streamed rather than held in memory.
//
// Position p of object id holds seed[(start(id)+p) mod len(seed)], except
// that every 4 KiB chunk begins with a 16-byte stamp (id, chunk offset):
// no two chunks of a run are alike, so deduplication cannot flatter the
// result, and the random seed makes compression useless.
const (
	chunkSize = 4096
	stampLen  = 16
	seedSize  = 4 << 20
)

// source produces and checks object content for one run. It is read-only
// after newSource and shared by all workers.
type source struct {
	runSeed uint64
	seed    []byte
}

func newSource(runSeed uint64) *source {
	r := rand.New(rand.NewPCG(runSeed, runSeed^0x9e3779b97f4a7c15))
	seed := make([]byte, seedSize)
	for i := 0; i+8 <= len(seed); i += 8 {
		binary.LittleEndian.PutUint64(seed[i:], r.Uint64())
	}
	return &source{runSeed: runSeed, seed: seed}
}

// id derives an object's identity from its key.
func (s *source) id(key string) uint64 {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], s.runSeed)
	h.Write(b[:])
	h.Write([]byte(key))
	return h.Sum64()
}

func (s *source) start(id uint64) int {
	x := id
	x ^= x >> 31
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 29
	return int(x % uint64(len(s.seed)))
}

// segments walks the content of object id over [pos, pos+n) in pieces:
// each is either (part of) a chunk's stamp or a run of seed bytes. It is
// an iterator rather than a callback so that the stamp lives on the
// caller's stack: producing and checking data allocates nothing.
type segments struct {
	s       *source
	id      uint64
	start   int
	pos     int64 // position of the next piece in the object
	end     int64
	scratch [stampLen]byte
}

func (s *source) segments(id uint64, pos int64, n int) segments {
	return segments{s: s, id: id, start: s.start(id), pos: pos, end: pos + int64(n)}
}

// next returns the next piece, or nil at the end. A stamp piece points
// into g.scratch and is valid until the next call.
func (g *segments) next() []byte {
	if g.pos >= g.end {
		return nil
	}
	inChunk := int(g.pos % chunkSize)
	left := g.end - g.pos
	if inChunk < stampLen {
		binary.LittleEndian.PutUint64(g.scratch[:], g.id)
		binary.LittleEndian.PutUint64(g.scratch[8:], uint64(g.pos-int64(inChunk)))
		piece := g.scratch[inChunk:int(min(stampLen, int64(inChunk)+left))]
		g.pos += int64(len(piece))
		return piece
	}
	// Seed bytes up to the next chunk's stamp, the end, or the seed's
	// wrap-around.
	l := min(int64(chunkSize-inChunk), left)
	so := int((int64(g.start) + g.pos) % int64(len(g.s.seed)))
	l = min(l, int64(len(g.s.seed)-so))
	g.pos += l
	return g.s.seed[so : so+int(l)]
}

// fill writes the content of object id at [pos, pos+len(buf)) into buf.
func (s *source) fill(buf []byte, id uint64, pos int64) {
	g := s.segments(id, pos, len(buf))
	off := 0
	for piece := g.next(); piece != nil; piece = g.next() {
		off += copy(buf[off:], piece)
	}
}

// check compares buf with the content of object id at pos. It returns the
// index of the first differing byte, or -1.
func (s *source) check(buf []byte, id uint64, pos int64) int {
	g := s.segments(id, pos, len(buf))
	off := 0
	for want := g.next(); want != nil; want = g.next() {
		got := buf[off : off+len(want)]
		if !bytes.Equal(got, want) {
			for i := range want {
				if got[i] != want[i] {
					return off + i
				}
			}
		}
		off += len(want)
	}
	return -1
}

// reader streams size bytes of object id: an io.ReadSeeker that never
// holds more than the caller's buffer.
type reader struct {
	s    *source
	id   uint64
	size int64
	off  int64
}

func (s *source) reader(id uint64, size int64) *reader { return &reader{s: s, id: id, size: size} }

func (r *reader) Read(p []byte) (int, error) {
	if r.off >= r.size {
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), r.size-r.off))
	r.s.fill(p[:n], r.id, r.off)
	r.off += int64(n)
	return n, nil
}

func (r *reader) Seek(offset int64, whence int) (int64, error) {
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
