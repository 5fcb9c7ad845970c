package report

import (
	"strings"
	"testing"
)

// TestCapacityStoppedEarly: a search or curve stopped before its first
// step ended (Ctrl-C in the closed-loop run) writes no curve, and does
// not fail; one with steps writes them.
func TestCapacityStoppedEarly(t *testing.T) {
	var b strings.Builder
	writeCapacity(&b, &Capacity{Phase: "train", Unit: "samples"})
	if b.Len() != 0 {
		t.Errorf("a curve of no steps: %q", b.String())
	}
	writeCapacity(&b, &Capacity{Phase: "randread", MaxOpsPerSec: 100, Steps: []CapacityStep{{}, {Rate: 50, Percent: 50}}})
	if !strings.Contains(b.String(), "50% ") {
		t.Errorf("a curve of one step: %q", b.String())
	}
}
