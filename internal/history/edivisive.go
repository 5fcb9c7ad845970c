package history

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"sort"
)

// E-Divisive with means: the hierarchical, non-parametric change-point
// search of Matteson and James ("A Nonparametric Approach for Multiple
// Change Point Analysis of Multivariate Data", JASA 2014), with the
// statistic and bisection of MongoDB's implementation used in its CI
// ("Change Point Detection in Software Performance Testing", Daly et al.,
// ICPE 2020; the signal-processing-algorithms package, e_divisive):
//
//   - For a window of values Z split at tau into X = Z[:tau] and
//     Y = Z[tau:], with n = |X|, m = |Y| and distances |a-b| (alpha = 1),
//     E = 2/(nm) sum|X-Y| - 1/n^2 sum|X-X'| - 1/m^2 sum|Y-Y'| and the
//     statistic Q(tau) = nm/(n+m) E. The candidate of a window is the tau
//     that maximises Q, with both sides at least MinSegment long.
//   - Each step takes the best candidate over the windows between the
//     change points found so far, and keeps it when a permutation test
//     says it is significant: the values of every window are shuffled
//     within it, Permutations times, and p = (1 + #(max Q of the shuffled
//     windows >= the candidate's Q)) / (1 + Permutations), as the paper
//     has it (MongoDB's package counts without the 1 in the numerator).
//     The search stops at the first candidate with p > PValue.
//
// Q is computed for every tau of a window in O(n log n): the sums of
// distances from a value to those on either side come from two Fenwick
// trees over the values' ranks, not from a distance matrix, so that a
// series of 10,000 runs costs no more than a few megabytes.

// ChangeOptions tune the change-point search.
type ChangeOptions struct {
	// PValue is the significance level of a change point; 0: 0.01.
	PValue float64
	// Permutations of the significance test; 0: 199.
	Permutations int
	// MinSegment is the fewest runs between two change points; 0: 5.
	MinSegment int
	// Seed seeds the permutations, so that a history's change points are
	// the same at every look; 0: 1.
	Seed uint64
}

func (o ChangeOptions) norm() ChangeOptions {
	if o.PValue <= 0 {
		o.PValue = 0.01
	}
	if o.Permutations <= 0 {
		o.Permutations = 199
	}
	if o.MinSegment <= 0 {
		o.MinSegment = 5
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	return o
}

// Point is a change point found by EDivisive: the index of the first
// value after the change, and the p-value of its permutation test.
type Point struct {
	Index int
	P     float64
}

// EDivisive finds the change points of values, in increasing order.
func EDivisive(values []float64, o ChangeOptions) []Point {
	o = o.norm()
	rng := rand.New(rand.NewPCG(o.Seed, 0x9e3779b97f4a7c15))
	var found []Point
	memo := map[[2]int]candidate{}
	for {
		bounds := windows(found, len(values))
		best := candidate{tau: -1}
		for _, w := range bounds {
			c, ok := memo[w]
			if !ok {
				c = bestSplit(values[w[0]:w[1]], o.MinSegment)
				c.tau += w[0]
				memo[w] = c
			}
			if c.ok && (best.tau < 0 || c.q > best.q) {
				best = c
			}
		}
		if best.tau < 0 {
			return found
		}
		p := permutationP(values, bounds, best.q, o, rng)
		if p > o.PValue {
			return found
		}
		found = append(found, Point{Index: best.tau, P: p})
		sort.Slice(found, func(i, j int) bool { return found[i].Index < found[j].Index })
	}
}

// windows are the stretches [from, to) between the change points.
func windows(points []Point, n int) [][2]int {
	var out [][2]int
	from := 0
	for _, p := range points {
		out = append(out, [2]int{from, p.Index})
		from = p.Index
	}
	return append(out, [2]int{from, n})
}

// permutationP is the p-value of statistic q: how often the best split
// of the windows with their values shuffled is at least as strong. A
// value's rank and a window's sum of distances within it do not change
// with the order, so they are computed once. It stops as soon as the
// p-value is sure to exceed o.PValue: only a kept change point's p-value
// is exact.
func permutationP(values []float64, bounds [][2]int, q float64, o ChangeOptions, rng *rand.Rand) float64 {
	type win struct {
		z      []float64
		rank   []int
		within float64
	}
	var t tStats
	ws := make([]win, len(bounds))
	for i, b := range bounds {
		z := values[b[0]:b[1]]
		t.ranks(z)
		ws[i] = win{z: z, rank: append([]int(nil), t.rank...), within: t.within(z)}
	}
	var zb []float64
	var rb []int
	better, stop := 0, int(o.PValue*float64(o.Permutations+1))
	for range o.Permutations {
		top := 0.0
		for _, w := range ws {
			zb, rb = append(zb[:0], w.z...), append(rb[:0], w.rank...)
			rng.Shuffle(len(zb), func(i, j int) { zb[i], zb[j] = zb[j], zb[i]; rb[i], rb[j] = rb[j], rb[i] })
			if c := t.scan(zb, rb, w.within, o.MinSegment); c.ok && c.q > top {
				top = c.q
			}
		}
		if top >= q {
			better++
			if better >= stop {
				return 1
			}
		}
	}
	return float64(better+1) / float64(o.Permutations+1)
}

// candidate is the best split of a window: tau and its statistic.
type candidate struct {
	tau int
	q   float64
	ok  bool // a split with both sides of MinSegment exists
}

func bestSplit(z []float64, minSeg int) candidate {
	var t tStats
	return t.best(z, minSeg)
}

// tStats computes Q(tau) over a window; its buffers are reused.
type tStats struct {
	order          []int
	rank           []int
	lc, ls, rc, rs fenwick
}

// best is the tau of z that maximises Q, the first on ties.
func (t *tStats) best(z []float64, minSeg int) candidate {
	if len(z) < 2*minSeg {
		return candidate{}
	}
	t.ranks(z)
	return t.scan(z, t.rank, t.within(z), minSeg)
}

// within is the sum of |z[i]-z[j]| over the pairs i < j of z, from the
// order of its values (t.ranks(z) first).
func (t *tStats) within(z []float64) float64 {
	s, m := 0.0, len(z)
	for k, i := range t.order {
		s += float64(2*k-m+1) * z[i]
	}
	return s
}

// scan computes Q(tau) for every tau of z, given each value's rank and
// the sum of distances within z, and returns the best.
func (t *tStats) scan(z []float64, rank []int, within float64, minSeg int) candidate {
	m := len(z)
	c := candidate{}
	if m < 2*minSeg {
		return c
	}
	t.lc.reset(m)
	t.ls.reset(m)
	t.rc.reset(m)
	t.rs.reset(m)
	for i, v := range z {
		t.rc.add(rank[i], 1)
		t.rs.add(rank[i], v)
	}
	var between, left float64 // sum |X-Y|, and |X-X'| over pairs once
	for tau := 0; tau < m; tau++ {
		if tau >= minSeg && m-tau >= minSeg {
			if q := statQ(2*left, 2*within, between, tau, m-tau); !c.ok || q > c.q {
				c = candidate{tau: tau, q: q, ok: true}
			}
		}
		v, r := z[tau], rank[tau]
		t.rc.add(r, -1)
		t.rs.add(r, -v)
		dR := absSum(&t.rc, &t.rs, r, v)
		dL := absSum(&t.lc, &t.ls, r, v)
		between += dR - dL
		left += dL
		within -= dR
		t.lc.add(r, 1)
		t.ls.add(r, v)
	}
	return c
}

// ranks orders z: order[k] is the index of the k-th smallest value,
// rank[i] the position of z[i] in that order.
func (t *tStats) ranks(z []float64) {
	t.order = t.order[:0]
	for i := range z {
		t.order = append(t.order, i)
	}
	slices.SortStableFunc(t.order, func(a, b int) int { return cmp.Compare(z[a], z[b]) })
	if cap(t.rank) < len(z) {
		t.rank = make([]int, len(z))
	}
	t.rank = t.rank[:len(z)]
	for k, i := range t.order {
		t.rank[i] = k
	}
}

// statQ is Q from the sums of distances: x within X (ordered pairs), y
// within Y (ordered pairs), xy between them.
func statQ(x, y, xy float64, n, m int) float64 {
	fn, fm := float64(n), float64(m)
	e := 2*xy/(fn*fm) - x/(fn*fn) - y/(fm*fm)
	return fn * fm / (fn + fm) * e
}

// absSum is the sum of |v - w| over the values w in a tree (counts c,
// sums s) of a value of rank r.
func absSum(c, s *fenwick, r int, v float64) float64 {
	nb, sb := c.prefix(r), s.prefix(r)
	nt, st := c.prefix(len(c.t)), s.prefix(len(s.t))
	return (nb*v - sb) + (st - sb) - (nt-nb)*v
}

// fenwick is a binary indexed tree of sums over positions 0..n-1.
type fenwick struct{ t []float64 }

func (f *fenwick) reset(n int) {
	if cap(f.t) < n {
		f.t = make([]float64, n)
	}
	f.t = f.t[:n]
	clear(f.t)
}

func (f *fenwick) add(i int, v float64) {
	for i++; i <= len(f.t); i += i & -i {
		f.t[i-1] += v
	}
}

// prefix is the sum over positions below i.
func (f *fenwick) prefix(i int) float64 {
	s := 0.0
	for ; i > 0; i -= i & -i {
		s += f.t[i-1]
	}
	return s
}
