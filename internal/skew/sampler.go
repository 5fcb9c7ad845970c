package skew

import (
	"math"
	"math/rand/v2"
)

// Sampler draws items from [0, n) by a Spec and counts how many of its
// draws fell in the hottest 1% and 10% of the items. Items rank by how
// likely they are: zipf's and pareto's hottest item is item 0, normal's
// the middle one, zoned's those of the densest zone. One Sampler serves one
// worker: it neither locks nor allocates after Reset.
type Sampler struct {
	spec     Spec
	n        int
	k1, k10  int // ranks below these are the hottest 1% and 10%
	want     [2]float64
	zipf     zipfConst
	pow      float64 // pareto's exponent
	mid, dev float64 // normal's centre and deviation, in items
	zones    []zoneRange
	order    []int     // zoned: the zones, hottest first
	harmonic []float64 // zipf: sum_{i<=k} i^-S for k up to exactTerms
	counts   Counts    // draws of earlier n
	draws    int64
	top      [2]int64
}

// zoneRange is a zone laid over n items.
type zoneRange struct {
	upTo   float64 // cumulative share of the picks, 0..1, up to this zone's end
	lo, hi int     // its items
	rank   int     // the rank of its first item
}

// Counts are the draws of one or more samplers.
type Counts struct {
	Draws  int64
	Top1   int64 // draws of one of the hottest 1% of the items
	Top10  int64 // ... 10%
	Want1  float64
	Want10 float64 // the distribution's own shares, weighted by draws (sums of draws x share)
	Items  int64   // the largest n drawn from
}

// Add adds o's draws to c.
func (c *Counts) Add(o Counts) {
	c.Draws += o.Draws
	c.Top1 += o.Top1
	c.Top10 += o.Top10
	c.Want1 += o.Want1
	c.Want10 += o.Want10
	c.Items = max(c.Items, o.Items)
}

// Share is the measured share of the draws in the hottest 1% (top 1) or
// 10% (top 10) of the items, 0..1; and the distribution's own share.
func (c Counts) Share(top int) (measured, want float64) {
	if c.Draws == 0 {
		return 0, 0
	}
	if top == 1 {
		return float64(c.Top1) / float64(c.Draws), c.Want1 / float64(c.Draws)
	}
	return float64(c.Top10) / float64(c.Draws), c.Want10 / float64(c.Draws)
}

// NewSampler is a Sampler of spec over n items.
func NewSampler(spec Spec, n int) *Sampler {
	s := &Sampler{spec: spec}
	switch spec.Kind {
	case Zoned:
		s.order = hottest(spec.Zones)
	case Zipf:
		s.harmonic = make([]float64, exactTerms+1)
		for i := 1; i <= exactTerms; i++ {
			s.harmonic[i] = s.harmonic[i-1] + math.Pow(float64(i), -spec.Param)
		}
	}
	s.Reset(n)
	return s
}

// Reset makes s draw from n items (n >= 1) from now on; the draws so far
// are kept for Take. Resetting to the same n costs nothing.
func (s *Sampler) Reset(n int) {
	n = max(n, 1)
	if n == s.n {
		return
	}
	s.fold()
	s.n = n
	s.k1, s.k10 = (n+99)/100, (n+9)/10
	switch s.spec.Kind {
	case Zipf:
		s.zipf = newZipf(s.spec.Param, n)
	case Pareto:
		h := s.spec.Param
		s.pow = math.Log(h) / math.Log(1-h)
	case Normal:
		s.mid, s.dev = float64(n)/2, s.spec.Param/100*float64(n)
	case Zoned:
		s.zones = layZones(s.zones[:0], s.spec.Zones, s.order, n)
	}
	s.want = [2]float64{s.expected(s.k1), s.expected(s.k10)}
}

// fold moves the counters of the current n into s.counts.
func (s *Sampler) fold() {
	if s.draws > 0 {
		s.counts.Add(Counts{Draws: s.draws, Top1: s.top[0], Top10: s.top[1],
			Want1: float64(s.draws) * s.want[0], Want10: float64(s.draws) * s.want[1], Items: int64(s.n)})
	}
	s.draws, s.top = 0, [2]int64{}
}

// Take returns the draws since the last Take and starts counting anew.
func (s *Sampler) Take() Counts {
	s.fold()
	c := s.counts
	s.counts = Counts{}
	return c
}

// Pick draws one item.
func (s *Sampler) Pick(r *rand.Rand) int {
	item, rank := s.draw(r)
	s.draws++
	if rank < s.k10 {
		s.top[1]++
		if rank < s.k1 {
			s.top[0]++
		}
	}
	return item
}

// draw is one item and its rank.
func (s *Sampler) draw(r *rand.Rand) (item, rank int) {
	n := s.n
	switch s.spec.Kind {
	case Zipf:
		k := s.zipf.next(r)
		return k, k
	case Pareto:
		k := min(int(float64(n)*math.Pow(r.Float64(), s.pow)), n-1)
		return k, k
	case Normal:
		return s.normal(r)
	case Zoned:
		return s.zoned(r)
	}
	k := r.IntN(n)
	return k, k
}

// normal draws around the middle, again when a draw falls off the ends
// (uniformly after 64 of those, which a deviation of at most 100% makes
// all but impossible). The rank is twice the distance from the middle.
func (s *Sampler) normal(r *rand.Rand) (item, rank int) {
	for range 64 {
		x := s.mid + s.dev*r.NormFloat64()
		if x >= 0 && x < float64(s.n) {
			return int(x), int(2 * math.Abs(x-s.mid))
		}
	}
	k := r.IntN(s.n)
	return k, int(2 * math.Abs(float64(k)+0.5-s.mid))
}

// zoned picks a zone by its share of the picks, then an item of it.
func (s *Sampler) zoned(r *rand.Rand) (item, rank int) {
	u := r.Float64()
	z := &s.zones[len(s.zones)-1]
	for i := range s.zones {
		if u < s.zones[i].upTo {
			z = &s.zones[i]
			break
		}
	}
	k := z.lo + r.IntN(z.hi-z.lo)
	return k, z.rank + k - z.lo
}

// layZones lays zones over n items in order; every zone with picks gets
// at least one item. Ranks follow the zones' density, densest first.
func layZones(out []zoneRange, zones []Zone, order []int, n int) []zoneRange {
	var access, size float64
	for _, z := range zones {
		lo := min(int(math.Round(size/100*float64(n))), n-1)
		size += z.Size
		access += z.Access
		hi := max(min(int(math.Round(size/100*float64(n))), n), lo+1)
		out = append(out, zoneRange{upTo: access / 100, lo: lo, hi: hi})
	}
	out[len(out)-1].upTo = 1
	rank := 0
	for _, i := range order {
		out[i].rank = rank
		rank += out[i].hi - out[i].lo
	}
	return out
}

// expected is the distribution's share of the picks that go to its k
// hottest items.
func (s *Sampler) expected(k int) float64 {
	n := s.n
	switch s.spec.Kind {
	case Zipf:
		return s.hsum(k) / s.hsum(n)
	case Pareto:
		return math.Pow(float64(k)/float64(n), 1/s.pow)
	case Normal:
		// rank < k: within k/2 of the middle, of the draws within n/2.
		c := s.dev * math.Sqrt2
		return math.Erf(float64(k)/2/c) / math.Erf(float64(n)/2/c)
	case Zoned:
		return zonedShare(s.zones, s.spec.Zones, k)
	}
	return float64(k) / float64(n)
}

// zonedShare is the share of the picks to the k items of lowest rank.
func zonedShare(ranges []zoneRange, zones []Zone, k int) float64 {
	share := 0.0
	for i, z := range ranges {
		m := z.hi - z.lo
		in := min(max(k-z.rank, 0), m)
		share += zones[i].Access / 100 * float64(in) / float64(m)
	}
	return share
}

// exactTerms is how many terms of a zipf's harmonic numbers are summed.
const exactTerms = 1 << 10

// hsum is the generalised harmonic number sum_{i=1..m} i^-S: exact up to
// exactTerms terms (summed once, in NewSampler), the rest as the integral
// over their midpoints (off by less than 1e-7 of the sum), so that a Reset
// to a new n (a file of another size) costs next to nothing.
func (s *Sampler) hsum(m int) float64 {
	sum := s.harmonic[min(m, exactTerms)]
	if m > exactTerms {
		e := s.spec.Param
		a, b := float64(exactTerms)+0.5, float64(m)+0.5
		sum += (math.Pow(b, 1-e) - math.Pow(a, 1-e)) / (1 - e)
	}
	return sum
}

// zipfConst are the constants of rejection-inversion sampling of a Zipf
// distribution over ranks 1..n with exponent s > 0 (W. Hörmann and G.
// Derflinger, "Rejection-inversion to generate variates from monotone
// discrete distributions", 1996; as Apache Commons RNG's
// RejectionInversionZipfSampler). Go's rand.Zipf takes only s > 1, and
// fio's users write zipf:0.9 too.
type zipfConst struct {
	s, n, hx1, hxn, cut float64
}

func newZipf(s float64, n int) zipfConst {
	z := zipfConst{s: s, n: float64(n)}
	z.hx1 = z.hIntegral(1.5) - 1
	z.hxn = z.hIntegral(float64(n) + 0.5)
	z.cut = 2 - z.hIntegralInverse(z.hIntegral(2.5)-z.h(2))
	return z
}

// next is a rank from 0 (the hottest) to n-1.
func (z *zipfConst) next(r *rand.Rand) int {
	for {
		u := z.hxn + r.Float64()*(z.hx1-z.hxn)
		x := z.hIntegralInverse(u)
		k := math.Min(math.Max(math.Floor(x+0.5), 1), z.n)
		if k-x <= z.cut || u >= z.hIntegral(k+0.5)-z.h(k) {
			return int(k) - 1
		}
	}
}

func (z *zipfConst) h(x float64) float64 { return math.Exp(-z.s * math.Log(x)) }

func (z *zipfConst) hIntegral(x float64) float64 {
	lx := math.Log(x)
	return expm1x((1-z.s)*lx) * lx
}

func (z *zipfConst) hIntegralInverse(x float64) float64 {
	t := max(x*(1-z.s), -1)
	return math.Exp(log1px(t) * x)
}

// log1px is log(1+x)/x, and expm1x (exp(x)-1)/x, both near 0 too.
func log1px(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Log1p(x) / x
	}
	return 1 - x*(0.5-x*(1.0/3-0.25*x))
}

func expm1x(x float64) float64 {
	if math.Abs(x) > 1e-8 {
		return math.Expm1(x) / x
	}
	return 1 + x*0.5*(1+x/3*(1+0.25*x))
}
