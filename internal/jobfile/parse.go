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

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/skew"
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
	jobKeys   = []string{"name", "description", "threads", "direct", "fsync", "verify", "compress_ratio", "dedupe_ratio", "tree", "defaults", "phases"}
	treeKeys  = []string{"dir", "depth", "width", "files", "file_size", "format"}
	phaseKeys = []string{"name", "op", "access", "select", "xfer_size", "file_size", "files", "read_pct", "ops",
		"duration", "warmup", "interval", "rate", "shared", "block_size", "segments", "ioengine", "iodepth", "distribution"}
)

// reader reads the value of one key at key (the key's full name, for
// messages) into its place.
type reader func(v *yaml.Node, key string) error

// to is the reader that stores what read returns in dst.
func to[T any](dst *T, read func(*yaml.Node, string) (T, error)) reader {
	return func(v *yaml.Node, key string) (err error) {
		*dst, err = read(v, key)
		return err
	}
}

// node is the reader that keeps the value's node in dst, to read later.
func node(dst **yaml.Node) reader {
	return func(v *yaml.Node, _ string) error {
		*dst = v
		return nil
	}
}

// read reads each pair of kv with the reader of its key; prefix and the
// key name the value in messages.
func read(kv [][2]*yaml.Node, prefix string, readers map[string]reader) error {
	for _, x := range kv {
		if err := readers[x[0].Value](x[1], prefix+x[0].Value); err != nil {
			return err
		}
	}
	return nil
}

func (p *parser) job(n *yaml.Node) (*Job, error) {
	kv, err := p.pairs(n, "workload", jobKeys)
	if err != nil {
		return nil, err
	}
	j := &Job{File: p.file}
	var defaults, phases *yaml.Node
	err = read(kv, "", map[string]reader{
		"name":           to(&j.Name, p.str),
		"description":    to(&j.Description, p.str),
		"threads":        to(&j.Threads, p.ints(1, 4096)),
		"direct":         to(&j.Direct, p.bool),
		"fsync":          to(&j.Fsync, p.bool),
		"verify":         to(&j.Verify, p.bool),
		"compress_ratio": to(&j.Data.Compress, p.ratio),
		"dedupe_ratio":   to(&j.Data.Dedupe, p.ratio),
		"tree":           to(&j.Tree, p.tree),
		"defaults":       node(&defaults),
		"phases":         node(&phases),
	})
	if err != nil {
		return nil, err
	}
	defs, err := p.defaults(defaults)
	if err != nil {
		return nil, err
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

// defaults reads the defaults: mapping, when there is one, into the pairs
// that stand before every phase's own.
func (p *parser) defaults(n *yaml.Node) ([][2]*yaml.Node, error) {
	if n == nil {
		return nil, nil
	}
	defs, err := p.pairs(n, "defaults", phaseKeys)
	if err != nil {
		return nil, err
	}
	for _, d := range defs {
		if d[0].Value == "name" || d[0].Value == "op" {
			return nil, p.errf(d[0], "defaults: %s is per phase", d[0].Value)
		}
	}
	return defs, nil
}

// tree reads the tree: mapping (key is always "tree").
func (p *parser) tree(n *yaml.Node, _ string) (*Tree, error) {
	kv, err := p.pairs(n, "tree", treeKeys)
	if err != nil {
		return nil, err
	}
	t := &Tree{Format: "restart", Line: n.Line}
	t.Width, t.Files, t.Depth = -1, -1, -1
	err = read(kv, "tree.", map[string]reader{
		"dir":       to(&t.Dir, p.str),
		"depth":     to(&t.Depth, p.ints(0, 64)),
		"width":     to(&t.Width, p.ints(1, 1<<30)),
		"files":     to(&t.Files, p.ints(1, 1<<30)),
		"file_size": to(&t.FileSize, p.size),
		"format":    to(&t.Format, p.format),
	})
	if err != nil {
		return nil, err
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

// format reads tree.format: restart, yes or no.
func (p *parser) format(n *yaml.Node, key string) (string, error) {
	f, err := p.str(n, key)
	if err == nil && f != "restart" && f != "yes" && f != "no" {
		err = p.errf(n, "%s must be restart, yes or no (got %q)", key, f)
	}
	return f, err
}

func (p *parser) phase(n *yaml.Node, i int, defs [][2]*yaml.Node) (PhaseSpec, error) {
	what := fmt.Sprintf("phases[%d]", i)
	kv, err := p.pairs(n, what, phaseKeys)
	if err != nil {
		return PhaseSpec{}, err
	}
	ph := PhaseSpec{Line: n.Line, Files: 1, ReadPct: -1}
	err = read(append(append([][2]*yaml.Node{}, defs...), kv...), what+".", map[string]reader{
		"name":         to(&ph.Name, p.str),
		"op":           func(v *yaml.Node, key string) error { return p.op(v, key, &ph) },
		"access":       to(&ph.Access, p.access),
		"select":       to(&ph.Select, p.access),
		"xfer_size":    to(&ph.XferSize, p.size),
		"file_size":    to(&ph.FileSize, p.size),
		"files":        to(&ph.Files, p.ints(1, 1<<24)),
		"read_pct":     to(&ph.ReadPct, p.ints(0, 100)),
		"ops":          to(&ph.Ops, p.int64s(1, 1<<62)),
		"duration":     to(&ph.Duration, p.duration),
		"warmup":       to(&ph.Warmup, p.duration),
		"interval":     to(&ph.Interval, p.duration),
		"rate":         to(&ph.Rate, p.float),
		"shared":       to(&ph.Shared, p.bool),
		"block_size":   to(&ph.Block, p.size),
		"segments":     to(&ph.Segments, p.ints(1, 1<<30)),
		"ioengine":     to(&ph.IOEngine, p.ioengine),
		"iodepth":      to(&ph.IODepth, p.ints(1, workload.MaxIODepth)),
		"distribution": to(&ph.Distribution, p.distribution),
	})
	if err != nil {
		return ph, err
	}
	if ph.Op == "" {
		return ph, p.errf(n, "%s: op is required (one of %s)", what, strings.Join(Ops(), ", "))
	}
	return ph, nil
}

// op reads a phase's operation; a random one (randread, ...) sets the
// phase's access too.
func (p *parser) op(v *yaml.Node, key string, ph *PhaseSpec) error {
	op, err := p.str(v, key)
	if err != nil {
		return err
	}
	o, a, ok := ResolveOp(op)
	if !ok {
		return p.errf(v, "%s: unknown operation %q (want one of %s)", key, op, strings.Join(Ops(), ", "))
	}
	ph.Op = o
	if a == workload.Random {
		ph.Access = a
	}
	return nil
}

func (p *parser) scalar(n *yaml.Node, key string) (string, error) {
	if n.Kind != yaml.ScalarNode {
		return "", p.errf(n, "%s must be a single value", key)
	}
	return n.Value, nil
}

func (p *parser) str(n *yaml.Node, key string) (string, error) { return p.scalar(n, key) }

// ints is the reader of a whole number in lo..hi.
func (p *parser) ints(lo, hi int) func(*yaml.Node, string) (int, error) {
	return func(n *yaml.Node, key string) (int, error) {
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
}

// int64s is ints for an int64.
func (p *parser) int64s(lo, hi int) func(*yaml.Node, string) (int64, error) {
	return func(n *yaml.Node, key string) (int64, error) {
		v, err := p.ints(lo, hi)(n, key)
		return int64(v), err
	}
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

func (p *parser) ioengine(n *yaml.Node, key string) (workload.IOEngine, error) {
	return convert(p, n, key, workload.ParseIOEngine)
}

func (p *parser) access(n *yaml.Node, key string) (workload.Access, error) {
	return convert(p, n, key, ParseAccess)
}

// ratio reads compress_ratio or dedupe_ratio: 2, 2:1 or 50%.
func (p *parser) ratio(n *yaml.Node, key string) (float64, error) {
	return convert(p, n, key, pattern.ParseRatio)
}

// distribution reads a distribution of random picks: zipf:1.2, ...
func (p *parser) distribution(n *yaml.Node, key string) (skew.Spec, error) {
	return convert(p, n, key, skew.Parse)
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
