package jobfile

import (
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

func ptr[T any](v T) *T { return &v }

// Overrides reach every phase of a file, except the limits of the phases
// that do each file once; with a tree, the tree takes the file size and
// count.
func TestOverridesApply(t *testing.T) {
	const file = `tree: {depth: 1, width: 2, files: 3, file_size: 1M}
phases:
  - {name: make, op: create}
  - {name: rd, op: read, duration: 5s}
`
	j, err := Parse([]byte(file), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ov := Overrides{XferSize: ptr(int64(4096)), FileSize: ptr(2 * units.MiB), Files: ptr(7), Duration: ptr(time.Second),
		Rate: ptr(50.0), Select: ptr(workload.Random), Width: ptr(4), TreeDir: ptr("keep")}
	ov.Apply(j)
	tr := j.Tree
	if tr.FileSize != 2*units.MiB || tr.Files != 7 || tr.Width != 4 || tr.Depth != 1 || tr.Dir != "keep" || tr.Format != "restart" {
		t.Errorf("tree = %+v", tr)
	}
	mk, rd := j.Phases[0], j.Phases[1]
	if mk.XferSize != 4096 || mk.Duration != 0 || mk.Rate != 0 || mk.Select != workload.Sequential {
		t.Errorf("create phase took limits: %+v", mk)
	}
	if rd.XferSize != 4096 || rd.Duration != time.Second || rd.Rate != 50 || rd.Select != workload.Random || rd.FileSize != 0 || rd.Files != 1 {
		t.Errorf("read phase = %+v", rd)
	}
	if err := j.Validate(); err != nil {
		t.Errorf("Validate after Apply: %v", err)
	}

	// A job built without a file takes every override: Validate says
	// what does not fit.
	adhoc := &Job{Phases: []PhaseSpec{{Name: "create", Op: OpCreate, Files: 1, ReadPct: -1}}}
	(&Overrides{Duration: ptr(time.Second), FileSize: ptr(int64(10)), Files: ptr(3)}).Apply(adhoc)
	if p := adhoc.Phases[0]; p.Duration != time.Second || p.FileSize != 10 || p.Files != 3 {
		t.Errorf("ad-hoc phase = %+v", p)
	}
	if err := adhoc.Validate(); err == nil {
		t.Error("a create phase with a duration validated")
	}
}
