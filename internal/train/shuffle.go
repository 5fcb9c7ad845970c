package train

import (
	"math/bits"
	"math/rand/v2"
)

// Shuffle is a random permutation of [0, n) that is read at any position
// without being stored: a keyed bijection of [0, m), m the next power of
// two, walked until it lands below n (cycle walking). Each epoch has its
// own, from the run's seed and the epoch's number, so every rank computes
// the same order on its own and takes its shard of it.
type Shuffle struct {
	n, mask uint64
	shift   uint
	mul     [3]uint64
	add     [3]uint64
}

// NewShuffle makes the permutation of [0, n) of the given seed and epoch.
func NewShuffle(n int, seed uint64, epoch int) *Shuffle {
	k := uint(bits.Len64(max(uint64(n), 2) - 1))
	s := &Shuffle{n: uint64(n), mask: 1<<k - 1, shift: max(k/2, 1)}
	r := rand.New(rand.NewPCG(seed, uint64(epoch)+0x5eed))
	for i := range s.mul {
		s.mul[i] = r.Uint64() | 1
		s.add[i] = r.Uint64()
	}
	return s
}

// At is the value at position i (0 <= i < n).
func (s *Shuffle) At(i int) int {
	x := uint64(i)
	for {
		x = s.mix(x)
		if x < s.n {
			return int(x)
		}
	}
}

// mix is a bijection of [0, m): multiplication by an odd number, addition
// and a xorshift are each one modulo a power of two.
func (s *Shuffle) mix(x uint64) uint64 {
	for i := range s.mul {
		x = (x*s.mul[i] + s.add[i]) & s.mask
		x ^= x >> s.shift
	}
	return x
}

// Sample returns the sample at slot j of rank r's share of an epoch: the
// ranks' shares are consecutive stretches of the epoch's order.
func (p Plan) Sample(s *Shuffle, r, j int) int { return s.At(r*p.Shard + j) }
