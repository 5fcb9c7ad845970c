package jobfile

import (
	"bytes"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// Parse reads a workload file. name is used in messages.
func Parse(data []byte, name string) (*Job, error) {
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err == io.EOF {
		return nil, &Error{name, 0, "empty workload file"}
	} else if err != nil {
		return nil, yamlError(name, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &Error{name, 0, "empty workload file"}
	}
	p := &parser{file: name}
	j, err := p.job(doc.Content[0])
	if err != nil {
		return nil, err
	}
	if err := j.Validate(); err != nil {
		return nil, err
	}
	return j, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func yamlError(name string, err error) error {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return &Error{name, n, m[2]}
	}
	return &Error{name, 0, strings.TrimPrefix(msg, "yaml: ")}
}

type parser struct{ file string }

func (p *parser) errf(n *yaml.Node, format string, args ...any) error {
	line := 0
	if n != nil {
		line = n.Line
	}
	return &Error{p.file, line, fmt.Sprintf(format, args...)}
}

// pairs returns the key/value pairs of a mapping, refusing duplicates and
// keys not in allowed.
func (p *parser) pairs(n *yaml.Node, what string, allowed []string) ([][2]*yaml.Node, error) {
	if n.Kind != yaml.MappingNode {
		return nil, p.errf(n, "%s must be a mapping (key: value lines)", what)
	}
	seen := map[string]bool{}
	var out [][2]*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !contains(allowed, k.Value) {
			return nil, p.errf(k, "%s: unknown key %q (want one of %s)", what, k.Value, strings.Join(allowed, ", "))
		}
		if seen[k.Value] {
			return nil, p.errf(k, "%s: %s given twice", what, k.Value)
		}
		seen[k.Value] = true
		out = append(out, [2]*yaml.Node{k, v})
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	jobKeys   = []string{"name", "description", "threads", "direct", "fsync", "verify", "tree", "defaults", "phases"}
	treeKeys  = []string{"dir", "depth", "width", "files", "file_size", "format"}
	phaseKeys = []string{"name", "op", "access", "select", "xfer_size", "file_size", "files", "read_pct", "ops",
		"duration", "warmup", "interval", "rate"}
)

func (p *parser) job(n *yaml.Node) (*Job, error) {
	kv, err := p.pairs(n, "workload", jobKeys)
	if err != nil {
		return nil, err
	}
	j := &Job{File: p.file}
	var defaults, phases *yaml.Node
	for _, x := range kv {
		k, v := x[0], x[1]
		switch k.Value {
		case "name":
			j.Name, err = p.str(v, "name")
		case "description":
			j.Description, err = p.str(v, "description")
		case "threads":
			j.Threads, err = p.int(v, "threads", 1, 4096)
		case "direct":
			j.Direct, err = p.bool(v, "direct")
		case "fsync":
			j.Fsync, err = p.bool(v, "fsync")
		case "verify":
			j.Verify, err = p.bool(v, "verify")
		case "tree":
			j.Tree, err = p.tree(v)
		case "defaults":
			defaults = v
		case "phases":
			phases = v
		}
		if err != nil {
			return nil, err
		}
	}
	var defs [][2]*yaml.Node
	if defaults != nil {
		if defs, err = p.pairs(defaults, "defaults", phaseKeys); err != nil {
			return nil, err
		}
		for _, d := range defs {
			if d[0].Value == "name" || d[0].Value == "op" {
				return nil, p.errf(d[0], "defaults: %s is per phase", d[0].Value)
			}
		}
	}
	if phases == nil {
		return nil, p.errf(n, "no phases: add a list under phases:")
	}
	if phases.Kind != yaml.SequenceNode {
		return nil, p.errf(phases, "phases must be a list (lines starting with -)")
	}
	for i, pn := range phases.Content {
		ph, err := p.phase(pn, i, defs)
		if err != nil {
			return nil, err
		}
		j.Phases = append(j.Phases, ph)
	}
	return j, nil
}

func (p *parser) tree(n *yaml.Node) (*Tree, error) {
	kv, err := p.pairs(n, "tree", treeKeys)
	if err != nil {
		return nil, err
	}
	t := &Tree{Format: "restart", Line: n.Line}
	t.Width, t.Files, t.Depth = -1, -1, -1
	for _, x := range kv {
		k, v := x[0], x[1]
		switch k.Value {
		case "dir":
			t.Dir, err = p.str(v, "tree.dir")
		case "depth":
			t.Depth, err = p.int(v, "tree.depth", 0, 64)
		case "width":
			t.Width, err = p.int(v, "tree.width", 1, 1<<30)
		case "files":
			t.Files, err = p.int(v, "tree.files", 1, 1<<30)
		case "file_size":
			t.FileSize, err = p.size(v, "tree.file_size")
		case "format":
			t.Format, err = p.str(v, "tree.format")
			if err == nil && t.Format != "restart" && t.Format != "yes" && t.Format != "no" {
				err = p.errf(v, "tree.format must be restart, yes or no (got %q)", t.Format)
			}
		}
		if err != nil {
			return nil, err
		}
	}
	for _, m := range []struct {
		v    int
		name string
	}{{t.Depth, "depth"}, {t.Width, "width"}, {t.Files, "files"}} {
		if m.v < 0 {
			return nil, p.errf(n, "tree: %s is required", m.name)
		}
	}
	return t, nil
}

func (p *parser) phase(n *yaml.Node, i int, defs [][2]*yaml.Node) (Phase, error) {
	what := fmt.Sprintf("phases[%d]", i)
	kv, err := p.pairs(n, what, phaseKeys)
	if err != nil {
		return Phase{}, err
	}
	ph := Phase{Line: n.Line, Files: 1, ReadPct: -1}
	for _, x := range append(append([][2]*yaml.Node{}, defs...), kv...) {
		k, v := x[0], x[1]
		key := what + "." + k.Value
		switch k.Value {
		case "name":
			ph.Name, err = p.str(v, key)
		case "op":
			var op string
			if op, err = p.str(v, key); err != nil {
				break
			}
			if o, a, ok := ResolveOp(op); !ok {
				err = p.errf(v, "%s: unknown operation %q (want one of %s)", key, op, strings.Join(Ops(), ", "))
			} else {
				ph.Op = o
				if a == workload.Random {
					ph.Access = a
				}
			}
		case "access":
			ph.Access, err = p.access(v, key)
		case "select":
			ph.Select, err = p.access(v, key)
		case "xfer_size":
			ph.XferSize, err = p.size(v, key)
		case "file_size":
			ph.FileSize, err = p.size(v, key)
		case "files":
			ph.Files, err = p.int(v, key, 1, 1<<24)
		case "read_pct":
			ph.ReadPct, err = p.int(v, key, 0, 100)
		case "ops":
			var o int
			o, err = p.int(v, key, 1, 1<<62)
			ph.Ops = int64(o)
		case "duration":
			ph.Duration, err = p.duration(v, key)
		case "warmup":
			ph.Warmup, err = p.duration(v, key)
		case "interval":
			ph.Interval, err = p.duration(v, key)
		case "rate":
			ph.Rate, err = p.float(v, key)
		}
		if err != nil {
			return ph, err
		}
	}
	if ph.Op == "" {
		return ph, p.errf(n, "%s: op is required (one of %s)", what, strings.Join(Ops(), ", "))
	}
	return ph, nil
}

func (p *parser) scalar(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errf(n, "%s must be a single value", key)
	}
	return n.Value, nil
}

func (p *parser) str(n *yaml.Node, key string) (string, error) { return p.scalar(n, key) }

func (p *parser) int(n *yaml.Node, key string, lo, hi int) (int, error) {
	s, err := p.scalar(n, key)
	if err != nil {
		return 0, err
	}
	v, err := strconv.Atoi(strings.ReplaceAll(s, "_", ""))
	if err != nil {
		return 0, p.errf(n, "%s: want a whole number, got %q", key, s)
	}
	if v < lo || v > hi {
		return 0, p.errf(n, "%s: %d is not in %d..%d", key, v, lo, hi)
	}
	return v, nil
}

func (p *parser) float(n *yaml.Node, key string) (float64, error) {
	s, err := p.scalar(n, key)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v <= 0 || v > 1e9 {
		return 0, p.errf(n, "%s: want a number of operations per second above 0, got %q", key, s)
	}
	return v, nil
}

func (p *parser) bool(n *yaml.Node, key string) (bool, error) {
	s, err := p.scalar(n, key)
	if err != nil {
		return false, err
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true, nil
	case "false", "no", "off":
		return false, nil
	}
	return false, p.errf(n, "%s: want true or false, got %q", key, s)
}

func (p *parser) size(n *yaml.Node, key string) (int64, error) {
	return convert(p, n, key, units.ParseSize)
}

func (p *parser) duration(n *yaml.Node, key string) (time.Duration, error) {
	return convert(p, n, key, units.ParseDuration)
}

func (p *parser) access(n *yaml.Node, key string) (workload.Access, error) {
	return convert(p, n, key, ParseAccess)
}

// convert reads a scalar with parse, whose error is reported at the node.
func convert[T any](p *parser, n *yaml.Node, key string, parse func(string) (T, error)) (T, error) {
	var zero T
	s, err := p.scalar(n, key)
	if err != nil {
		return zero, err
	}
	v, err := parse(s)
	if err != nil {
		return zero, p.errf(n, "%s: %v", key, err)
	}
	return v, nil
}

// ParseAccess reads sequential (seq) or random (rand).
func ParseAccess(s string) (workload.Access, error) {
	switch strings.ToLower(s) {
	case "seq", "sequential":
		return workload.Sequential, nil
	case "random", "rand":
		return workload.Random, nil
	}
	return 0, fmt.Errorf("want seq or random, got %q", s)
}
