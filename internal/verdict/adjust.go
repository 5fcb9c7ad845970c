package verdict

import (
	"math"
	"sort"
)

// AdjustBH adjusts the p-values of a family of tests, those of every
// figure a comparison judges, by the Benjamini-Hochberg procedure: a test
// is significant at Alpha after the adjustment when its adjusted p-value
// is below Alpha, and then among the changes called, at most a share
// Alpha are expected to be noise (the false discovery rate); when no
// figure changed at all, the chance of calling any change is at most
// Alpha (the family-wise error), however many figures were tested.
// NaN p-values are not tested and stay NaN; the family is the others.
func AdjustBH(ps []float64) []float64 {
	out := make([]float64, len(ps))
	var idx []int
	for i, p := range ps {
		out[i] = math.NaN()
		if !math.IsNaN(p) {
			idx = append(idx, i)
		}
	}
	m := len(idx)
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	// From the largest p down: q(k) = min over j >= k of p(j) * m / j.
	q := 1.0
	for k := m; k >= 1; k-- {
		i := idx[k-1]
		q = min(q, ps[i]*float64(m)/float64(k))
		out[i] = q
	}
	return out
}
