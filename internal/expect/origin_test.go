package expect

import (
	"errors"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
)

func TestFromStorageParseAndCheck(t *testing.T) {
	e, err := Parse("read-big.from_storage>=95%")
	if err != nil {
		t.Fatal(err)
	}
	if e.Name != "read-big" || e.Stat != FromStorage || e.Value != 95 || e.Dim() != Percent || e.String() != "read-big.from_storage>=95%" {
		t.Fatalf("parsed %+v", e)
	}
	if err := Bench.Check(e); err != nil {
		t.Errorf("check: %v", err)
	}
	for in, want := range map[string]string{
		"read-big.from_storage>=95":      "is a percentage",
		"read-big.from_storage>=95MiB/s": "is a percentage",
		"stat.from_storage>=95%":         "reads no data",
		"read-big>=95%":                  "needs a suffix: read-big.from_storage>=95%",
		"stat.p99<5%":                    "is a latency",
	} {
		e, err := Parse(in)
		if err == nil {
			err = Bench.Check(e)
		}
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error saying %q", in, err, want)
		}
	}
}

func TestFromStorageEval(t *testing.T) {
	pct := func(v float64) *float64 { return &v }
	res := &report.Result{Phases: []report.PhaseResult{
		{Name: "write-big"},
		{Name: "read-big", Origin: &report.Origin{ReadBytes: 100, FromStorage: pct(97.5)}},
		{Name: "read-small", Origin: &report.Origin{ReadBytes: 100, FromStorage: pct(1.2)}},
		{Name: "train", Origin: &report.Origin{ReadBytes: 100, Unknown: "tmpfs on /dev/shm has no block device (source tmpfs)"}},
	}}
	cases := []struct {
		expr   string
		pass   bool
		reason string
	}{
		{"read-big.from_storage>=95%", true, ""},
		{"read-small.from_storage>=95%", false, "1.2 % is not >= 95 %"},
		{"read-small.from_storage<5%", true, ""},
		{"train.from_storage>=95%", false, "train: from storage unknown: tmpfs on /dev/shm has no block device"},
		{"train.from_storage<=100%", false, "from storage unknown"},
		{"write-big.from_storage>=95%", false, "was not measured"},
	}
	for _, tc := range cases {
		e, err := Parse(tc.expr)
		if err != nil {
			t.Fatal(err)
		}
		x := Eval(e, res)
		if x.Pass != tc.pass || !strings.Contains(x.Reason, tc.reason) {
			t.Errorf("%s: pass %v, reason %q; want %v and %q", tc.expr, x.Pass, x.Reason, tc.pass, tc.reason)
		}
	}
}
