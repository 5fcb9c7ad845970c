package report

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// Units lists every constant of type Unit declared in the package, so that
// the checks that walk Units (cluster's merge of every unit) see a new one.
func TestUnitsListsEveryUnit(t *testing.T) {
	pkgs, err := parser.ParseDir(token.NewFileSet(), ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, f := range pkgs["report"].Files {
		for _, d := range f.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.CONST {
				continue
			}
			for _, s := range g.Specs {
				v := s.(*ast.ValueSpec)
				if id, ok := v.Type.(*ast.Ident); ok && id.Name == "Unit" {
					for _, n := range v.Names {
						declared = append(declared, n.Name)
					}
				}
			}
		}
	}
	if len(declared) < 10 {
		t.Fatalf("found only %v", declared)
	}
	listed := map[Unit]bool{}
	for _, u := range Units {
		if listed[u] {
			t.Errorf("Units lists %q twice", u)
		}
		listed[u] = true
	}
	if len(declared) != len(Units) {
		t.Errorf("%d units declared (%v), %d in Units: add the new one to Units in unit.go", len(declared), declared, len(Units))
	}
	if !slices.Contains(Units, UnitNotSupported) || !listed[UnitMiBPerSec] {
		t.Errorf("Units %v", Units)
	}
}

// A unit is kept in JSON as the plain string it always was.
func TestUnitJSONIsAString(t *testing.T) {
	b, err := json.Marshal(Measure{Value: 1.5, Unit: UnitMsPerFile})
	if err != nil || string(b) != `{"value":1.5,"unit":"ms/file"}` {
		t.Fatalf("%s %v", b, err)
	}
	var m Measure
	if err := json.Unmarshal([]byte(`{"value":2,"unit":"objects/s"}`), &m); err != nil || m.Unit != UnitObjectsPerSec {
		t.Fatalf("%+v %v", m, err)
	}
}

// Rate computes a figure per second of time in each rate unit, and says
// which units are not rates.
func TestUnitRate(t *testing.T) {
	for u, want := range map[Unit]float64{
		UnitMiBPerSec: 2, UnitGiBPerSec: 2.0 / 1024, UnitOpsPerSec: 5, UnitRequestsPerSec: 5,
		UnitFilesPerSec: 3, UnitObjectsPerSec: 3, UnitSamplesPerSec: 3, UnitKIOPS: 0.003,
	} {
		if got, ok := u.Rate(4<<20, 6, 10, 2); !ok || got != want {
			t.Errorf("%s: %v %v, want %v", u, got, ok, want)
		}
	}
	for _, u := range []Unit{UnitMsPerOp, UnitSeconds, UnitNotSupported, UnitAUPercent} {
		if _, ok := u.Rate(1, 1, 1, 1); ok {
			t.Errorf("%s is a rate", u)
		}
	}
	if got, _ := UnitMiBPerSec.Rate(1, 1, 1, 0); got != 0 {
		t.Errorf("a rate over no time: %v", got)
	}
}

// The thread count is the typed field, or in a result of an older
// version the parameter threads as JSON gives it back.
func TestThreadCount(t *testing.T) {
	for in, want := range map[string]int{
		`{"threads":3,"parameters":{"threads":8}}`:       3,
		`{"parameters":{"block_size":1024,"threads":4}}`: 4,
		`{"parameters":{}}`:                              1,
		`{"parameters":{"threads":0}}`:                   1,
	} {
		var r Result
		if err := json.Unmarshal([]byte(in), &r); err != nil {
			t.Fatal(err)
		}
		if got := r.ThreadCount(); got != want {
			t.Errorf("%s: %d threads, want %d", in, got, want)
		}
	}
	r := Result{Threads: 5}
	b, _ := json.Marshal(&r)
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || back.ThreadCount() != 5 {
		t.Errorf("%s read back as %d threads (%v)", b, back.ThreadCount(), err)
	}
}
