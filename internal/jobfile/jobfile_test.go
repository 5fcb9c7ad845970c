package jobfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

const full = `# every key
name: all-keys
description: a workload using every key
threads: 8
direct: yes
fsync: false
verify: true
compress_ratio: 50%
dedupe_ratio: 3
tree:
  dir: trees/t1
  depth: 2
  width: 3
  files: 4
  file_size: 20M
  format: yes
defaults:
  xfer_size: 4K
  duration: 60
  interval: 2s
phases:
  - name: rw70
    op: rw
    read_pct: 70
    access: random
    select: rand
    warmup: 5s
    distribution: zoned:80/20:20/80
  - name: randread
    op: randread
    ops: 1_000
    duration: 0
    rate: 250.5
  - {name: stat, op: stat, xfer_size: 1M}
`

func TestParseFull(t *testing.T) {
	j, err := Parse([]byte(full), "all.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if j.Name != "all-keys" || j.Threads != 8 || !j.Direct || j.Fsync || !j.Verify || len(j.Phases) != 3 {
		t.Fatalf("job = %+v", j)
	}
	if j.Data.Compress != 2 || j.Data.Dedupe != 3 {
		t.Errorf("data %+v", j.Data)
	}
	tr := j.Tree
	if tr == nil || tr.Dir != "trees/t1" || tr.Shape != (workload.Shape{Depth: 2, Width: 3, Files: 4, FileSize: 20 * units.MiB}) || tr.Format != "yes" || tr.Line != 11 {
		t.Fatalf("tree = %+v", tr)
	}
	p := j.Phases[0]
	if p.Op != OpRW || p.ReadPct != 70 || p.Access != workload.Random || p.Select != workload.Random || p.XferSize != 4096 ||
		p.Duration != time.Minute || p.Warmup != 5*time.Second || p.Interval != 2*time.Second || p.Line != 22 || p.Kind() != workload.Mixed ||
		p.Distribution.String() != "zoned:80/20:20/80" {
		t.Errorf("phase 0 = %+v", p)
	}
	p = j.Phases[1]
	if p.Op != OpRead || p.Access != workload.Random || p.Ops != 1000 || p.Duration != 0 || p.Rate != 250.5 || p.ReadPct != -1 {
		t.Errorf("phase 1 = %+v", p)
	}
	if p := j.Phases[2]; p.XferSize != units.MiB || p.Duration != time.Minute || p.Line != 34 {
		t.Errorf("phase 2 = %+v", p)
	}
}

func TestParseDefaults(t *testing.T) {
	j, err := Parse([]byte("phases:\n  - {name: w, op: write}\n  - {name: m, op: rw}\n"), "d.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := j.Phases[0]
	if p.XferSize != DefaultXferSize || p.FileSize != DefaultFileSize || p.Files != 1 || !p.OnePass() || j.Threads != 0 {
		t.Errorf("defaults = %+v", p)
	}
	if j.Phases[1].ReadPct != DefaultReadPct {
		t.Errorf("rw read_pct = %d", j.Phases[1].ReadPct)
	}
	// JSON is YAML.
	if _, err := Parse([]byte(`{"phases": [{"name": "r", "op": "read", "file_size": "4K"}]}`), "j.json"); err != nil {
		t.Error(err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, c := range []struct {
		name, in, want string
	}{
		{"empty", "", "e.yaml: empty workload file"},
		// YAML syntax errors carry the line of the construct the parser
		// was in (yaml.v3 reports its context mark).
		{"syntax", "phases:\n  - name: a\n   op: read\n", "e.yaml:1: did not find expected '-' indicator"},
		{"unclosed", "name: x\nphases: [{name: a, op: read}\n", "e.yaml:1: did not find expected ',' or ']'"},
		{"tab", "phases:\n\t- name: a\n", "e.yaml:2: "},
		{"not a mapping", "- a\n- b\n", "e.yaml:1: workload must be a mapping"},
		{"unknown key", "name: x\nthreds: 4\nphases: []\n", `e.yaml:2: workload: unknown key "threds"`},
		{"no phases", "name: x\n", "e.yaml:1: no phases"},
		{"phases not a list", "phases:\n  a: b\n", "e.yaml:2: phases must be a list"},
		{"empty phases", "phases: []\n", "e.yaml: no phases"},
		{"bad threads", "threads: lots\nphases: [{name: a, op: read}]\n", `e.yaml:1: threads: want a whole number, got "lots"`},
		{"threads range", "threads: 0\nphases: [{name: a, op: read}]\n", "e.yaml:1: threads: 0 is not in 1..4096"},
		{"bad bool", "direct: maybe\nphases: [{name: a, op: read}]\n", `e.yaml:1: direct: want true or false`},
		{"unknown op", "phases:\n  - name: a\n    op: frobnicate\n", `e.yaml:3: phases[0].op: unknown operation "frobnicate"`},
		{"missing op", "phases:\n  - name: a\n", "e.yaml:2: phases[0]: op is required"},
		{"phase key", "phases:\n  - name: a\n    op: read\n    blocksize: 4k\n", `e.yaml:4: phases[0]: unknown key "blocksize"`},
		{"duplicate key", "phases:\n  - name: a\n    op: read\n    op: write\n", "e.yaml:4: phases[0]: op given twice"},
		{"bad size", "phases:\n  - name: a\n    op: read\n    xfer_size: 4Q\n", "e.yaml:4: phases[0].xfer_size: "},
		{"bad duration", "phases:\n  - name: a\n    op: read\n    duration: soon\n", "e.yaml:4: phases[0].duration: "},
		{"bad access", "phases:\n  - name: a\n    op: read\n    access: diagonal\n", `e.yaml:4: phases[0].access: want seq or random, got "diagonal"`},
		{"bad distribution", "phases:\n  - name: a\n    op: randread\n    distribution: zipf:1\n", `e.yaml:4: phases[0].distribution: bad distribution "zipf:1": the exponent`},
		{"distribution of sequential picks", "phases:\n  - name: a\n    op: read\n    distribution: zipf:1.2\n", "e.yaml:2: phase a: distribution zipf:1.2 draws random picks: it needs access: random or select: random"},
		{"bad ratio", "compress_ratio: 0.5\nphases: [{name: a, op: read}]\n", `e.yaml:1: compress_ratio: "0.5": want a ratio from 1 to 256`},
		{"read_pct range", "phases:\n  - name: a\n    op: rw\n    read_pct: 170\n", "e.yaml:4: phases[0].read_pct: 170 is not in 0..100"},
		{"read_pct on read", "phases:\n  - name: a\n    op: read\n    read_pct: 70\n", "e.yaml:2: phase a: read_pct applies to op rw"},
		{"rate", "phases:\n  - name: a\n    op: read\n    rate: -3\n", "e.yaml:4: phases[0].rate: "},
		{"bad name", "phases:\n  - name: Big Read\n    op: read\n", `e.yaml:2: phase name "Big Read"`},
		{"no name", "phases:\n  - op: read\n", `e.yaml:2: phase name ""`},
		{"duplicate name", "phases:\n  - {name: a, op: read}\n  - {name: a, op: write}\n", `e.yaml:3: phase name "a" is used twice (first at line 2)`},
		{"mkdir without tree", "phases:\n  - {name: a, op: mkdir}\n", "e.yaml:2: phase a: op mkdir needs a tree"},
		{"format without tree", "phases:\n  - {name: a, op: format}\n", "e.yaml:2: phase a: op format needs a tree"},
		{"create by time", "tree: {depth: 1, width: 2, files: 3}\nphases:\n  - {name: a, op: create, duration: 5s}\n", "e.yaml:3: phase a: op create does each file once"},
		{"warmup alone", "phases:\n  - {name: a, op: read, warmup: 5s}\n", "e.yaml:2: phase a: warmup needs a duration"},
		{"tree key", "tree: {depth: 1, width: 2, files: 3, size: 4k}\nphases: [{name: a, op: read}]\n", `e.yaml:1: tree: unknown key "size"`},
		{"tree missing width", "tree:\n  depth: 1\n  files: 3\nphases: [{name: a, op: read}]\n", "e.yaml:2: tree: width is required"},
		{"tree format", "tree: {depth: 1, width: 2, files: 3, format: maybe}\nphases: [{name: a, op: read}]\n", "e.yaml:1: tree.format must be restart, yes or no"},
		{"tree dir outside", "tree: {dir: ../x, depth: 1, width: 2, files: 3, file_size: 1k}\nphases: [{name: a, op: read}]\n", `e.yaml:1: tree.dir "../x" must be a relative path`},
		{"tree file_size in phase", "tree: {depth: 1, width: 2, files: 3, file_size: 1k}\nphases:\n  - {name: a, op: read, file_size: 4k}\n", "e.yaml:3: phase a: file_size is the tree's"},
		{"tree empty files read", "tree: {depth: 1, width: 2, files: 3}\nphases:\n  - {name: a, op: read}\n", "e.yaml:3: phase a: op read needs files of more than 0 bytes"},
		{"huge tree", "tree: {depth: 9, width: 100, files: 3}\nphases: [{name: a, op: stat}]\n", "e.yaml:1: tree: tree of depth 9"},
		{"defaults op", "defaults: {op: read}\nphases: [{name: a, op: read}]\n", "e.yaml:1: defaults: op is per phase"},
		{"ioengine", "phases:\n  - {name: a, op: read, ioengine: libaio}\n", `e.yaml:2: phases[0].ioengine: want sync or io_uring, got "libaio"`},
		{"iodepth sync", "defaults: {iodepth: 8}\nphases:\n  - {name: a, op: read}\n", "e.yaml:3: phase a: iodepth 8 needs ioengine io_uring"},
		{"iodepth range", "phases:\n  - {name: a, op: read, ioengine: io_uring, iodepth: 0}\n", "e.yaml:2: phases[0].iodepth: 0 is not in 1..4096"},
		{"list value", "phases:\n  - name: [a, b]\n    op: read\n", "e.yaml:2: phases[0].name must be a single value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.in), "e.yaml")
			if err == nil {
				t.Fatalf("no error, want %q", c.want)
			}
			if !strings.HasPrefix(err.Error(), c.want) && !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want %q", err, c.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error spans lines: %q", err)
			}
		})
	}
}

func examples(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("..", "..", "examples", "*.yaml"))
	if len(files) < 8 {
		t.Fatalf("examples: %d files", len(files))
	}
	return files
}

// Every example file parses, and shrinks to a tiny size with its phases.
func TestExamplesParse(t *testing.T) {
	for _, f := range examples(t) {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		j, err := Parse(data, f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		n := len(j.Phases)
		j.Shrink(Limits{FileSize: 64 << 10, Duration: 100 * time.Millisecond, Files: 20, Ops: 100})
		if err := j.Validate(); err != nil || len(j.Phases) != n {
			t.Errorf("%s shrunk: %v", f, err)
		}
		if tr := j.Tree; tr != nil && (tr.NumFiles() > 20 || tr.FileSize > 64<<10) {
			t.Errorf("%s: shrunk tree %+v", f, tr.Shape)
		}
		for _, p := range j.Phases {
			if p.Duration+p.Warmup > 100*time.Millisecond || p.FileSize > 64<<10 {
				t.Errorf("%s: shrunk phase %+v", f, p)
			}
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(full))
	f.Add([]byte("phases:\n  - {name: a, op: read}\n"))
	f.Add([]byte("tree: {depth: 1, width: 2, files: 3}\nphases: [{name: a, op: stat}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := Parse(data, "f.yaml")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.yaml") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		if len(j.Phases) == 0 {
			t.Fatal("a job without phases parsed")
		}
		if err := j.Validate(); err != nil {
			t.Fatalf("parsed job does not validate again: %v", err)
		}
	})
}

// ioengine and iodepth, from the defaults or the phase, reach the phase.
func TestParseIOEngine(t *testing.T) {
	j, err := Parse([]byte("defaults: {ioengine: io_uring, iodepth: 32}\nphases:\n  - {name: a, op: randread}\n  - {name: b, op: write, ioengine: sync, iodepth: 1}\n"), "q.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := j.Phases[0], j.Phases[1]
	if a.IOEngine != workload.IOUring || a.IODepth != 32 || b.IOEngine != workload.Sync || b.IODepth != 1 {
		t.Errorf("a: %v %d, b: %v %d", a.IOEngine, a.IODepth, b.IOEngine, b.IODepth)
	}
}
