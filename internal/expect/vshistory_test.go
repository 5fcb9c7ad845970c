package expect

import (
	"strings"
	"testing"
)

// NAME.vs_history is written bare or ==pass; any other form is refused,
// and EvalAll leaves it to the command, which holds the history.
func TestParseVsHistory(t *testing.T) {
	for _, s := range []string{"read-big.vs_history", "read-big.vs_history==pass", "seq.read.vs_history"} {
		e, err := Parse(s)
		if err != nil || e.Stat != VsHistory || e.Dim() != Bool || e.Name != strings.TrimSuffix(strings.TrimSuffix(s, "==pass"), ".vs_history") {
			t.Errorf("%q: %+v (%v)", s, e, err)
		}
	}
	for _, s := range []string{"read-big.vs_history<5", ".vs_history", "read-big.vs_history==fail"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("%q parsed", s)
		}
	}
	e, _ := Parse("read-big.vs_history")
	if x := EvalAll([]Expr{e}, nil); len(x) != 0 {
		t.Errorf("EvalAll judged it: %+v", x)
	}
}
