package io500

import (
	"math"
	"testing"
)

// The example output in IO500's README (Appendix B, github.com/IO500/io500
// at 02091cf): twelve phase figures and the scores IO500 printed for them,
//
//	[SCORE INVALID] Bandwidth 0.172092 GB/s : IOPS 292.625029 kiops : TOTAL 7.096374
//
// The README prints each phase to six decimals, which leaves ior-hard-write
// (0.001313) four significant digits: the bandwidth score computed from the
// printed figures agrees to 1e-4 of its value, the metadata score (from
// figures with seven or more digits) to its six printed decimals.
func TestScoreOfIO500sExample(t *testing.T) {
	phases := []PhaseScore{
		{"ior-easy-write", Bandwidth, 0.186620},
		{"mdtest-easy-write", Metadata, 103.300821},
		{"ior-hard-write", Bandwidth, 0.001313},
		{"mdtest-hard-write", Metadata, 58.939081},
		{"find", Metadata, 1486.435084},
		{"ior-easy-read", Bandwidth, 1.575557},
		{"mdtest-easy-stat", Metadata, 839.392805},
		{"ior-hard-read", Bandwidth, 2.272671},
		{"mdtest-hard-stat", Metadata, 1212.558124},
		{"mdtest-easy-delete", Metadata, 160.765642},
		{"mdtest-hard-read", Metadata, 275.011939},
		{"mdtest-hard-delete", Metadata, 132.015851},
	}
	s := Score(phases)
	near := func(got, want, rel float64) bool { return math.Abs(got-want) <= rel*want }
	if !near(s.Bandwidth, 0.172092, 1e-4) || math.Abs(s.Metadata-292.625029) > 1e-6 || !near(s.Total, 7.096374, 1e-4) {
		t.Fatalf("scores %+v, IO500 printed bandwidth 0.172092, metadata 292.625029, total 7.096374", s)
	}
	// A phase without a figure (0) is left out of its group's mean, as
	// IO500 does; a group without any scores 0, and so does the total.
	phases[0].Value = 0
	if got := Score(phases); !near(got.Bandwidth, math.Cbrt(0.001313*1.575557*2.272671), 1e-12) || got.Metadata != s.Metadata {
		t.Fatalf("without ior-easy-write: %+v", got)
	}
	if got := Score(phases[1:2]); got.Bandwidth != 0 || got.Total != 0 || !near(got.Metadata, 103.300821, 1e-12) {
		t.Fatalf("metadata only: %+v", got)
	}
}
