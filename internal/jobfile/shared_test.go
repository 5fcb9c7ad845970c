package jobfile

import (
	"strings"
	"testing"
)

func TestSharedPhases(t *testing.T) {
	j, err := Parse([]byte(`
phases:
  - {name: w, op: write, shared: true, xfer_size: 47008, segments: 100, duration: 300s}
  - {name: r, op: read, shared: true, xfer_size: 47008, block_size: 94016}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	w, r := j.Phases[0], j.Phases[1]
	if !w.Shared || w.Block != 47008 || w.Segments != 100 || r.Block != 94016 || r.Segments != 0 {
		t.Errorf("phases %+v %+v", w, r)
	}
	for _, c := range []struct{ src, want string }{
		{`{name: r, op: read, shared: true}`, "t.yaml:2: phase r: a shared read reads what a shared write before it wrote"},
		{`{name: w, op: create, shared: true}`, "applies to op read and op write"},
		{`{name: w, op: randwrite, shared: true}`, "access: random does not apply"},
		{`{name: w, op: write, shared: true, ops: 10}`, "ops do not apply"},
		{`{name: w, op: write, shared: true, xfer_size: 4K, block_size: 6K}`, "block_size 6144 is not a multiple of xfer_size 4096"},
		{`{name: w, op: write, shared: true, segments: 0}`, "segments: 0 is not in 1.."},
	} {
		_, err := Parse([]byte("phases:\n  - "+c.src+"\n"), "t.yaml")
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.src, err, c.want)
		}
	}
	_, err = Parse([]byte("tree: {depth: 1, width: 2, files: 2, file_size: 4K}\nphases:\n  - {name: w, op: write, shared: true}\n"), "t.yaml")
	if err == nil || !strings.Contains(err.Error(), "not on a tree") {
		t.Errorf("shared on a tree: %v", err)
	}
}
