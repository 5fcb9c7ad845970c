package report

import (
	"reflect"
	"strings"
	"testing"
)

func TestMergeAccess(t *testing.T) {
	a := Access{Distribution: "zipf:1.2", Of: "blocks", Items: 100, Picks: 300, Top1Pct: 50, Top10Pct: 80, Want1Pct: 51, Want10Pct: 81}
	b := Access{Distribution: "zipf:1.2", Of: "blocks", Items: 200, Picks: 100, Top1Pct: 70, Top10Pct: 90, Want1Pct: 55, Want10Pct: 85}
	f := Access{Distribution: "zipf:1.2", Of: "files", Items: 4, Picks: 4, Top1Pct: 25}
	got := MergeAccess([]PhaseResult{{Access: []Access{a, f}}, {Access: []Access{b}}, {}})
	want := []Access{{Distribution: "zipf:1.2", Of: "blocks", Items: 200, Picks: 400, Top1Pct: 55, Top10Pct: 82.5, Want1Pct: 52, Want10Pct: 82}, f}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("\n got %+v\nwant %+v", got, want)
	}
	if MergeAccess([]PhaseResult{{}, {}}) != nil {
		t.Error("phases without picks merge into some")
	}
	var out strings.Builder
	writeAccess(&out, &Result{Phases: []PhaseResult{{Title: "randread", Access: want[:1]}}})
	if s := out.String(); s != "Access of randread: zipf:1.2 over 200 blocks, 55.0% of 400 picks to the hottest 1% (52.0% expected), 82.5% to the hottest 10% (82.0%)\n" {
		t.Errorf("line %q", s)
	}
}
