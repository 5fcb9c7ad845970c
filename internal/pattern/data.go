package pattern

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Data is what the content is like to storage that compresses or
// deduplicates: the zero Data (or ratios of 1) is fsbench's usual content,
// which neither compresses nor repeats a 4 KiB block.
//
// Compress is the ratio a compressor reaches: every 4 KiB block of the
// content (at 4 KiB boundaries of the file or object) keeps 4096/Compress
// bytes of the random content and has the rest made of
// zeros, which zstd and LZ4 store in a few bytes (fio's
// buffer_compress_percentage, vdbench's compratio).
//
// Dedupe is the ratio of all 4 KiB blocks to the distinct ones: of each
// run of 1,024 consecutive blocks of a file, 1024/Dedupe stay unique (as
// usual, no two alike) and the others are copies of one of a few blocks
// shared by the whole run (fio's dedupe_percentage, vdbench's dedupratio).
// Which are copies is fixed by the block's place in the stream base, so
// content stays a pure function of the seed, the file and the offset, and
// verifies as it does without it.
type Data struct {
	Compress float64
	Dedupe   float64
}

// MaxRatio is the largest ratio of either kind: a block keeps at least
// its 16-byte stamp random, and at least one block in 1,024 is unique.
const MaxRatio = 256

// dupPool is how many distinct blocks the copies of Dedupe are of.
const dupPool = 8

// slots is how many 4 KiB blocks the stream base holds.
const slots = streamBase / block

// Plain reports whether d is the usual content.
func (d Data) Plain() bool { return d.Compress <= 1 && d.Dedupe <= 1 }

// Check says what is wrong with d.
func (d Data) Check() error {
	for _, r := range []struct {
		name string
		v    float64
	}{{"compress ratio", d.Compress}, {"dedupe ratio", d.Dedupe}} {
		if math.IsNaN(r.v) || r.v != 0 && (r.v < 1 || r.v > MaxRatio) {
			return fmt.Errorf("%s %v: want 1 to %d", r.name, r.v, MaxRatio)
		}
	}
	return nil
}

// ParseRatio reads a ratio (2, 2.5, 2:1) or a percentage of the data
// saved (50%, fio's buffer_compress_percentage and dedupe_percentage: 50%
// is a ratio of 2).
func ParseRatio(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if p, ok := strings.CutSuffix(t, "%"); ok {
		v, err := strconv.ParseFloat(p, 64)
		if err != nil || !(v >= 0 && v < 100) {
			return 0, fmt.Errorf("%q: want a percentage from 0 to below 100", s)
		}
		return RatioOfPercent(v), nil
	}
	t = strings.TrimSuffix(t, ":1")
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || !(v >= 1 && v <= MaxRatio) {
		return 0, fmt.Errorf("%q: want a ratio from 1 to %d (2 or 2:1 halves the data) or a percentage saved (50%%)", s, MaxRatio)
	}
	return v, nil
}

// RatioOfPercent is the ratio of data of which pct percent compresses or
// repeats away: 100/(100-pct), rounded to 4 digits, at most MaxRatio.
func RatioOfPercent(pct float64) float64 {
	r := 100 / (100 - pct)
	return min(math.Round(r*1e4)/1e4, MaxRatio)
}

// keep is how many bytes of each 4 KiB block stay random.
func (d Data) keep() int {
	if d.Compress <= 1 {
		return block
	}
	return max(int(math.Round(block/d.Compress)), stampLen)
}

// NewData is New for content like d (which must pass Check).
func NewData(seed uint64, d Data) *Pattern {
	p := New(seed)
	if d.Plain() {
		return p
	}
	p.data = d
	if d.Dedupe > 1 {
		p.dup = new([slots]bool)
		unique := max(int(slots/d.Dedupe), 1)
		for s := range p.dup {
			// unique of the slots, spread evenly: any run of n
			// consecutive slots has n*unique/slots of them, give or take one.
			p.dup[s] = (s+1)*unique/slots == s*unique/slots
		}
		r := rand.New(rand.NewPCG(seed^0x6a09e667f3bcc909, seed))
		p.pool = make([]byte, dupPool*block)
		for i := range p.pool {
			p.pool[i] = byte(r.Uint32())
		}
		squeeze(p.pool, d.keep())
	}
	return p
}

// squeeze zeroes each 4 KiB block of b from byte keep on.
func squeeze(b []byte, keep int) {
	for at := 0; at < len(b); at += block {
		clear(b[at+keep : at+block])
	}
}

// Data is what p's content is like.
func (p *Pattern) Data() Data { return p.data }

// slot is the place in the stream base of the block of id at off.
func slot(id uint64, off int64) int {
	return int((streamStart(id)/block + uint64(off)/block) % slots)
}

// isDup reports whether the block of id at off is a copy (Data.Dedupe).
func (p *Pattern) isDup(id uint64, off int64) bool {
	return p.dup != nil && p.dup[slot(id, off)]
}

// dupBlock is the content of a copy at the slot s.
func (p *Pattern) dupBlock(s int) []byte {
	k := s % dupPool
	return p.pool[k*block : (k+1)*block]
}

// shapeStream makes the stream base like p's Data: squeezed, and the
// copies' slots holding their shared blocks.
func (p *Pattern) shapeStream(base []byte) {
	if p.data.Plain() {
		return
	}
	squeeze(base, p.data.keep())
	if p.dup == nil {
		return
	}
	for s, dup := range p.dup {
		if dup {
			copy(base[s*block:(s+1)*block], p.dupBlock(s))
		}
	}
}

// fillShaped is Fill of a keyed identity with ratios, block by block: a
// copy's bytes from its shared block; the others keyed up to keep and
// zero after it (zeros, not the key repeated over the squeezed base,
// which zstd stores in fewer bytes; and clearing costs less than the
// pass it saves).
func (p *Pattern) fillShaped(buf []byte, id uint64, off int64) {
	keep := p.data.keep()
	for len(buf) > 0 {
		in := int(uint64(off) % block)
		n := min(block-in, len(buf))
		if s := slot(id, off); p.dup != nil && p.dup[s] {
			copy(buf[:n], p.dupBlock(s)[in:])
		} else {
			r := min(max(keep-in, 0), n)
			p.fillKeyed(buf[:r], id, off)
			clear(buf[r:n])
		}
		buf = buf[n:]
		off += int64(n)
	}
}
