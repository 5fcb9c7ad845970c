package skew

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	good := map[string]string{
		"uniform": "uniform", "random": "uniform", "zipf:1.2": "zipf:1.2", "ZIPF:0.9": "zipf:0.9",
		"pareto:0.2": "pareto:0.2", "normal:10%": "normal:10%", "gauss:5": "normal:5%",
		"zoned:60/10:30/20:8/30:2/40": "zoned:60/10:30/20:8/30:2/40", "zoned:100/100": "zoned:100/100",
	}
	for in, want := range good {
		s, err := Parse(in)
		if err != nil || s.String() != want {
			t.Errorf("Parse(%q) = %v, %v; want %s", in, s, err, want)
		}
	}
	for _, in := range []string{"", "zipf", "zipf:", "zipf:1", "zipf:-2", "zipf:x", "pareto:1", "pareto:0",
		"normal:0", "normal:101%", "zoned", "zoned:", "zoned:60/10:30/20", "zoned:60/10:40", "zoned:50/0:50/100",
		"uniform:3", "lognormal:1", "zipf:NaN", "zipf:Inf"} {
		_, err := Parse(in)
		if !errors.Is(err, ErrSpec) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Parse(%q): %v, want one line wrapping ErrSpec", in, err)
		}
	}
}

// draw takes many picks of spec over n items with a fixed seed.
func draw(spec Spec, n, picks int) (*Sampler, []int) {
	s := NewSampler(spec, n)
	r := rand.New(rand.NewPCG(1, 2))
	hits := make([]int, n)
	for range picks {
		hits[s.Pick(r)]++
	}
	return s, hits
}

// TestZipfTopShare: zipf(1.2) over 100,000 items, the measured share of
// the hottest 1% within 2 points of the distribution's own.
func TestZipfTopShare(t *testing.T) {
	for _, exp := range []float64{1.2, 0.9, 2} {
		s, hits := draw(Spec{Kind: Zipf, Param: exp}, 100_000, 1_000_000)
		c := s.Take()
		got, want := c.Share(1)
		if math.Abs(got-want) > 0.02 {
			t.Errorf("zipf:%g top 1%%: measured %.4f, want %.4f", exp, got, want)
		}
		// The analytic share from the sum itself, beside hsum's tail.
		exact, all := 0.0, 0.0
		for i := 1; i <= 100_000; i++ {
			all += math.Pow(float64(i), -exp)
			if i <= 1000 {
				exact += math.Pow(float64(i), -exp)
			}
		}
		if math.Abs(exact/all-want) > 1e-6 {
			t.Errorf("zipf:%g: analytic %.6f, sum %.6f", exp, want, exact/all)
		}
		// Counted against the items drawn, not the sampler's ranks.
		top := 0
		for _, h := range hits[:1000] {
			top += h
		}
		if float64(top)/1e6 != got {
			t.Errorf("zipf:%g: the first 1000 items had %d of the draws, the sampler counts %.4f", exp, top, got)
		}
		if exp == 1.2 {
			t.Logf("zipf:1.2 over 100,000: top 1%% measured %.4f, analytic %.4f", got, want)
		}
	}
}

func TestZonedShares(t *testing.T) {
	spec, _ := Parse("zoned:60/10:30/20:8/30:2/40")
	_, hits := draw(spec, 1000, 1_000_000)
	bounds := []int{0, 100, 300, 600, 1000}
	for i, want := range []float64{0.60, 0.30, 0.08, 0.02} {
		n := 0
		for _, h := range hits[bounds[i]:bounds[i+1]] {
			n += h
		}
		if got := float64(n) / 1e6; math.Abs(got-want) > 0.005 {
			t.Errorf("zone %d: %.4f of the picks, want %.2f", i, got, want)
		}
	}
	// The densest zone first: its hottest 10% (100 items) take 60%.
	s, _ := draw(spec, 1000, 100_000)
	if got, want := s.Take().Share(10); math.Abs(got-0.6) > 0.01 || math.Abs(want-0.6) > 1e-9 {
		t.Errorf("top 10%%: measured %.4f, want %.4f (0.6)", got, want)
	}
	// A zone denser than the first but later ranks first.
	spec, _ = Parse("zoned:10/50:90/50")
	if s, _ := draw(spec, 1000, 100_000); true {
		if got, want := s.Take().Share(10); math.Abs(got-want) > 0.01 || math.Abs(want-0.18) > 1e-9 {
			t.Errorf("zoned:10/50:90/50 top 10%%: measured %.4f, want %.4f (0.18)", got, want)
		}
	}
}

func TestSharesMatch(t *testing.T) {
	for _, text := range []string{"uniform", "pareto:0.2", "pareto:0.1", "normal:5%", "normal:30", "zipf:1.2"} {
		spec, _ := Parse(text)
		for _, n := range []int{1, 7, 1000, 65536} {
			s, hits := draw(spec, n, 200_000)
			for i, h := range hits {
				if h < 0 || i >= n {
					t.Fatalf("%s: item %d of %d", text, i, n)
				}
			}
			c := s.Take()
			for _, top := range []int{1, 10} {
				got, want := c.Share(top)
				if math.Abs(got-want) > 0.01 {
					t.Errorf("%s over %d: top %d%%: measured %.4f, want %.4f", text, n, top, got, want)
				}
			}
		}
	}
	// pareto:0.2 is 80% of the picks to 20% of the items.
	s := NewSampler(Spec{Kind: Pareto, Param: 0.2}, 1000)
	if got := s.expected(200); math.Abs(got-0.8) > 1e-9 {
		t.Errorf("pareto:0.2: %.4f to 20%%, want 0.8", got)
	}
}

func TestResetKeepsCounts(t *testing.T) {
	s := NewSampler(Spec{Kind: Zipf, Param: 1.2}, 100)
	r := rand.New(rand.NewPCG(3, 4))
	for range 10 {
		s.Pick(r)
	}
	s.Reset(100) // same n: nothing changes
	s.Reset(1000)
	for range 5 {
		if k := s.Pick(r); k < 0 || k >= 1000 {
			t.Fatalf("item %d", k)
		}
	}
	c := s.Take()
	if c.Draws != 15 || c.Items != 1000 {
		t.Errorf("counts %+v, want 15 draws of up to 1000 items", c)
	}
	if c := s.Take(); c.Draws != 0 {
		t.Errorf("a second Take has %d draws", c.Draws)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"zipf:1.2", "zoned:60/10:40/90", "normal:5%", "pareto:0.3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		spec, err := Parse(text)
		if err != nil {
			return
		}
		again, err := Parse(spec.String())
		if err != nil || again.String() != spec.String() {
			t.Fatalf("%q -> %q -> %v", text, spec.String(), err)
		}
		s := NewSampler(spec, 37)
		r := rand.New(rand.NewPCG(1, 1))
		for range 100 {
			if k := s.Pick(r); k < 0 || k >= 37 {
				t.Fatalf("%s: item %d of 37", spec, k)
			}
		}
	})
}

// BenchmarkResetNewSize is what a visit to a file of another size costs a
// zipf sampler of its blocks (the distribution's shares for the new n).
func BenchmarkResetNewSize(b *testing.B) {
	s := NewSampler(Spec{Kind: Zipf, Param: 1.2}, 1)
	for i := 0; b.Loop(); i++ {
		s.Reset(100_000 + i%2)
	}
}

// BenchmarkPick is one zipf draw, counted.
func BenchmarkPick(b *testing.B) {
	s := NewSampler(Spec{Kind: Zipf, Param: 1.2}, 1<<20)
	r := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		s.Pick(r)
	}
}
