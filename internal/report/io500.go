package report

import (
	"fmt"
	"io"
)

// IO500 holds the scores of an IO500-style run (fsbench io500), computed
// from its phases as IO500 computes them. It is not an official IO500
// result: Note says so in the result itself.
type IO500 struct {
	Bandwidth float64 `json:"bandwidth_gib_per_sec"` // geometric mean of the ior phases, GiB/s
	Metadata  float64 `json:"metadata_kiops"`        // geometric mean of the mdtest and find phases, kIOPS
	Score     float64 `json:"score"`                 // sqrt(bandwidth x metadata)
	Stonewall float64 `json:"stonewall_seconds"`
	Quick     bool    `json:"quick,omitempty"`
	Note      string  `json:"note"`
}

// writeIO500 writes the score line under the phases, as IO500's own
// [SCORE] line reads.
func writeIO500(w io.Writer, s *IO500) {
	if s == nil {
		return
	}
	fmt.Fprintf(w, "[SCORE] Bandwidth %f GiB/s : IOPS %f kiops : TOTAL %f\n", s.Bandwidth, s.Metadata, s.Score)
	fmt.Fprintf(w, "%s\n", s.Note)
}
