package io500

import "math"

// Groups of phases in the score.
const (
	Bandwidth = "bw" // GiB/s
	Metadata  = "md" // kIOPS
)

// PhaseScore is one scored phase's figure: GiB/s for a bandwidth phase,
// thousands of operations a second for a metadata one.
type PhaseScore struct {
	Name  string
	Group string
	Value float64
}

// Scores are the suite's scores as IO500 computes them.
type Scores struct {
	Bandwidth float64 // GiB/s: geometric mean of the bandwidth phases
	Metadata  float64 // kIOPS: geometric mean of the metadata phases
	Total     float64 // sqrt(Bandwidth x Metadata)
}

// Score computes IO500's scores from phase figures, as calc_score in
// IO500's src/main.c (github.com/IO500/io500) does: per group, the
// geometric mean of the phases whose figure is positive (a group with
// none scores 0), and the total is the square root of the product of the
// two groups' scores.
func Score(phases []PhaseScore) Scores {
	group := func(g string) float64 {
		var logSum float64
		n := 0
		for _, p := range phases {
			if p.Group == g && p.Value > 0 {
				logSum += math.Log(p.Value)
				n++
			}
		}
		if n == 0 {
			return 0
		}
		return math.Exp(logSum / float64(n))
	}
	s := Scores{Bandwidth: group(Bandwidth), Metadata: group(Metadata)}
	s.Total = math.Sqrt(s.Bandwidth * s.Metadata)
	return s
}
