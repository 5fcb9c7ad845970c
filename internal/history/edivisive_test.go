package history

import (
	"math"
	"math/rand/v2"
	"testing"
)

// directQ is Q(tau) from its definition, over every pair.
func directQ(z []float64, tau int) float64 {
	var x, y, xy float64
	for i := range z {
		for j := range z {
			d := math.Abs(z[i] - z[j])
			switch {
			case i < tau && j < tau:
				x += d
			case i >= tau && j >= tau:
				y += d
			case i < tau:
				xy += d
			}
		}
	}
	return statQ(x, y, xy, tau, len(z)-tau)
}

// The statistic from the Fenwick trees is the statistic of the
// definition, ties included, and its best split the definition's.
func TestBestSplitMatchesDefinition(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for trial := range 20 {
		z := make([]float64, 5+rng.IntN(40))
		for i := range z {
			z[i] = math.Round(rng.NormFloat64()*3) + float64(i/10) // ties, and drift
		}
		minSeg := 1 + trial%4
		c := bestSplit(z, minSeg)
		want := candidate{}
		for tau := minSeg; tau <= len(z)-minSeg; tau++ {
			if q := directQ(z, tau); !want.ok || q > want.q+1e-9 {
				want = candidate{tau: tau, q: q, ok: true}
			}
		}
		if c.ok != want.ok || c.tau != want.tau || math.Abs(c.q-want.q) > 1e-6*math.Max(1, math.Abs(want.q)) {
			t.Errorf("trial %d (n %d, min %d): got tau %d q %g, want tau %d q %g", trial, len(z), minSeg, c.tau, c.q, want.tau, want.q)
		}
	}
}

// noise is n values of mean 100 and standard deviation sd.
func noise(rng *rand.Rand, n int, sd float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = 100 + rng.NormFloat64()*sd
	}
	return v
}

// A step of 10% (three standard deviations) from run 20 of 40 is found at
// run 20 plus or minus 2, in every one of 20 series; two steps are both
// found.
func TestEDivisiveFindsPlantedStep(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for s := range 20 {
		v := noise(rng, 40, 3.3)
		for i := 20; i < 40; i++ {
			v[i] -= 10
		}
		p := EDivisive(v, ChangeOptions{})
		if len(p) != 1 || p[0].Index < 18 || p[0].Index > 22 {
			t.Errorf("series %d: change points %v, want one at 20±2", s, p)
		}
	}
	v := noise(rng, 60, 2)
	for i := 20; i < 60; i++ {
		v[i] += 10
	}
	for i := 40; i < 60; i++ {
		v[i] -= 20
	}
	if p := EDivisive(v, ChangeOptions{}); len(p) != 2 || p[0].Index != 20 || p[1].Index != 40 {
		t.Errorf("two steps: %v", p)
	}
}

// Series without a change rarely show one: at the 1% level, at most 2 of
// 50 stationary series of 40 runs (1 expected by chance, 0.5 on average);
// and the same series always gives the same answer.
func TestEDivisiveStationary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	found := 0
	for range 50 {
		v := noise(rng, 40, 5)
		p := EDivisive(v, ChangeOptions{})
		found += len(p)
		if q := EDivisive(v, ChangeOptions{}); len(q) != len(p) {
			t.Fatalf("the same series gave %v, then %v", p, q)
		}
	}
	if found > 2 {
		t.Errorf("%d change points in 50 stationary series", found)
	}
}

// No segment is shorter than MinSegment, and a series shorter than two
// segments has no change point.
func TestEDivisiveMinSegment(t *testing.T) {
	v := []float64{50, 50, 50, 100, 100, 100, 100, 100, 100, 100, 100, 100}
	if p := EDivisive(v, ChangeOptions{MinSegment: 4}); len(p) != 0 {
		t.Errorf("a step 3 runs in with segments of 4: %v", p)
	}
	if p := EDivisive(v[:7], ChangeOptions{MinSegment: 4}); len(p) != 0 {
		t.Errorf("7 runs, segments of 4: %v", p)
	}
	v = append(v, 200, 200, 200, 200, 200)
	if p := EDivisive(v, ChangeOptions{MinSegment: 3}); len(p) != 2 {
		t.Errorf("steps at 3 and 12 with segments of 3: %v", p)
	}
}

// A change's shift is the Hodges-Lehmann estimate in percent of the
// runs before, its interval around it.
func TestAnalyseShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	v := noise(rng, 40, 1)
	for i := 25; i < 40; i++ {
		v[i] *= 0.9
	}
	a := Analyse(series(v...)[0], "read", ChangeOptions{})
	if len(a.Changes) != 1 {
		t.Fatalf("changes %v", a.Changes)
	}
	c := a.Changes[0]
	if c.Run != 26 || c.Before != 25 || c.After != 15 || c.ShiftLow > -10 || c.ShiftHigh < -10 || c.Shift < -11 || c.Shift > -9 {
		t.Errorf("change %+v", c)
	}
	if d := c.describe("read", a.Unit); d == "" {
		t.Error("no description")
	}
}
