package workload

import (
	"encoding/binary"
	"hash/fnv"
	"math/rand/v2"
)

// chunk is the granularity at which written data carries a unique stamp.
// Deduplicating storage works on chunks of 4 KiB or more, so every such
// chunk fsbench writes differs from every other.
const chunk = 4096

// stampLen is the size of the stamp at the start of every chunk: the file's
// identity and the chunk's offset in the file.
const stampLen = 16

// baseSize is the size of the shared random pattern that blocks are cut
// from. It is larger than the compression windows of common codecs, so that
// a compressor finds no repeats within a block or between nearby blocks.
const baseSize = 8 << 20

// Pattern produces the content of every block fsbench writes and checks: a
// slice of a random pattern at an offset chosen by (file, block), with a
// stamp at the start of every 4 KiB chunk. Content is a pure function of the
// seed, the file and the offset, so a reader can recompute what a writer
// wrote. A Pattern is read-only after NewPattern and shared by all workers.
type Pattern struct {
	seed uint64
	base []byte // baseSize + room for the longest block
}

// NewPattern builds the random base for blocks of at most maxBlock bytes.
func NewPattern(seed uint64, maxBlock int) *Pattern {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	base := make([]byte, baseSize+maxBlock+stampLen)
	for i := 0; i+8 <= len(base); i += 8 {
		binary.LittleEndian.PutUint64(base[i:], r.Uint64())
	}
	return &Pattern{seed: seed, base: base}
}

// FileID derives the identity of a file from its name and the run's seed.
func (p *Pattern) FileID(name string) uint64 {
	h := fnv.New64a()
	var s [8]byte
	binary.LittleEndian.PutUint64(s[:], p.seed)
	h.Write(s[:])
	h.Write([]byte(name))
	return h.Sum64()
}

// Fill writes into buf the content of the block of file id that starts at
// byte offset off. len(buf) must not exceed the maxBlock given to NewPattern.
func (p *Pattern) Fill(buf []byte, id uint64, off int64) {
	start := mix(id^uint64(off)*0xbf58476d1ce4e5b9) % baseSize
	start &^= 63
	copy(buf, p.base[start:start+uint64(len(buf))])
	for c := 0; c < len(buf); c += chunk {
		stamp(buf[c:], id, off+int64(c))
	}
}

func stamp(b []byte, id uint64, off int64) {
	if len(b) >= stampLen {
		binary.LittleEndian.PutUint64(b, id)
		binary.LittleEndian.PutUint64(b[8:], uint64(off))
		return
	}
	var s [stampLen]byte
	binary.LittleEndian.PutUint64(s[:], id)
	binary.LittleEndian.PutUint64(s[8:], uint64(off))
	copy(b, s[:])
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
