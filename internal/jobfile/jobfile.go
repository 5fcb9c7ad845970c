// Package jobfile reads fsbench workload files: a list of named phases
// (what fio calls jobs and vdbench run definitions) with their access
// pattern, transfer size, limits and, optionally, a vdbench-style file tree
// they work on. The file is YAML (JSON, being YAML, works too); every error
// names the file and line.
//
//	name: vdbench-4k
//	threads: 10
//	direct: true
//	tree: {depth: 3, width: 10, files: 30, file_size: 20M}
//	defaults: {xfer_size: 4K, duration: 600s, interval: 2s}
//	phases:
//	  - {name: randwrite, op: write, access: random, select: random}
//	  - {name: randread, op: read, access: random, select: random}
//	  - {name: mixed, op: rw, read_pct: 70, access: random, select: random}
package jobfile

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// Job is a workload: settings shared by its phases, an optional tree, and
// the phases in the order they run.
type Job struct {
	Name        string
	Description string
	Threads     int // 0: not given (the command's -p applies)
	Direct      bool
	Fsync       bool
	Verify      bool
	Tree        *Tree
	Phases      []Phase
	File        string // where it was read from, for messages
}

// Tree is the file tree the phases of a job work on.
type Tree struct {
	workload.Shape
	// Dir, when set, is where the tree lives, relative to the benchmarked
	// PATH; such a tree is kept after the run and reused by the next one
	// with the same shape. Empty: inside the run's own directory, removed
	// at the end.
	Dir string
	// Format is vdbench's format=: "restart" (reuse a complete tree of
	// the same shape, else rebuild; the default), "yes" (always rebuild)
	// or "no" (the tree must exist, complete, with this shape).
	Format string
	Line   int
}

// Operations of a phase, as written in a workload file.
const (
	OpRead    = "read"
	OpWrite   = "write"
	OpRW      = "rw" // mixed reads and writes, read_pct of them reads
	OpFormat  = "format"
	OpCreate  = "create"
	OpStat    = "stat"
	OpOpen    = "open"
	OpRename  = "rename"
	OpChmod   = "chmod"
	OpUtime   = "utime"
	OpReaddir = "readdir"
	OpUnlink  = "unlink"
	OpMkdir   = "mkdir"
	OpRmdir   = "rmdir"
)

var opKinds = map[string]workload.Kind{
	OpRead: workload.Read, OpWrite: workload.Write, OpRW: workload.Mixed, OpFormat: workload.Create,
	OpCreate: workload.Create, OpStat: workload.Stat, OpOpen: workload.Open, OpRename: workload.Rename,
	OpChmod: workload.Chmod, OpUtime: workload.Utime, OpReaddir: workload.Readdir, OpUnlink: workload.Unlink,
	OpMkdir: workload.Mkdir, OpRmdir: workload.Rmdir,
}

// fio's names for sequential and random reads and writes.
var fioOps = map[string]struct {
	op     string
	access workload.Access
}{
	"randread": {OpRead, workload.Random}, "randwrite": {OpWrite, workload.Random},
	"randrw": {OpRW, workload.Random}, "readwrite": {OpRW, workload.Sequential},
}

// ResolveOp reads an operation name, fio's randread and the like included:
// the operation and the access pattern it implies.
func ResolveOp(s string) (op string, access workload.Access, ok bool) {
	s = strings.ToLower(s)
	if f, ok := fioOps[s]; ok {
		return f.op, f.access, true
	}
	_, ok = opKinds[s]
	return s, workload.Sequential, ok
}

// Ops lists the operations a phase may name.
func Ops() []string {
	return []string{OpRead, OpWrite, OpRW, "randread", "randwrite", "randrw", OpFormat, OpCreate, OpStat, OpOpen,
		OpRename, OpChmod, OpUtime, OpReaddir, OpUnlink, OpMkdir, OpRmdir}
}

// Phase is one phase of a job.
type Phase struct {
	Name     string
	Op       string // one of the Op constants
	Access   workload.Access
	Select   workload.Access
	XferSize int64
	FileSize int64 // without a tree: size of each thread's files (reads and writes: 1 GiB unless given)
	Files    int   // without a tree: files per thread
	ReadPct  int   // rw: share of reads, percent; -1 when not given
	Ops      int64
	Duration time.Duration
	Warmup   time.Duration
	Interval time.Duration
	Rate     float64
	Line     int
}

// Kind is the engine's operation for the phase.
func (p *Phase) Kind() workload.Kind { return opKinds[p.Op] }

// Data reports whether the phase reads or writes blocks of files.
func (p *Phase) Data() bool { return p.Kind().IsData() }

// OnePass reports whether the phase does each file (or block) once, as
// opposed to running for a count of operations or a time.
func (p *Phase) OnePass() bool { return p.Ops == 0 && p.Duration == 0 }

// Defaults of a phase's settings.
const (
	DefaultXferSize = units.MiB
	DefaultFileSize = units.GiB
	DefaultReadPct  = 50
)

// Error is a mistake in a workload file, at a line.
type Error struct {
	File string
	Line int
	Msg  string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

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
	s, err := p.scalar(n, key)
	if err != nil {
		return 0, err
	}
	v, err := units.ParseSize(s)
	if err != nil {
		return 0, p.errf(n, "%s: %v", key, err)
	}
	return v, nil
}

func (p *parser) duration(n *yaml.Node, key string) (time.Duration, error) {
	s, err := p.scalar(n, key)
	if err != nil {
		return 0, err
	}
	d, err := units.ParseDuration(s)
	if err != nil {
		return 0, p.errf(n, "%s: %v", key, err)
	}
	return d, nil
}

func (p *parser) access(n *yaml.Node, key string) (workload.Access, error) {
	s, err := p.scalar(n, key)
	if err != nil {
		return 0, err
	}
	a, err := ParseAccess(s)
	if err != nil {
		return 0, p.errf(n, "%s: %v", key, err)
	}
	return a, nil
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

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]*$`)

// Validate checks the job as a whole: what each phase asks is possible,
// with the tree or files it has. Parse calls it; a job built from flags
// must call it too. Errors carry the phase's line when it has one.
func (j *Job) Validate() error {
	errAt := func(line int, format string, args ...any) error {
		return &Error{j.File, line, fmt.Sprintf(format, args...)}
	}
	if len(j.Phases) == 0 {
		return errAt(0, "no phases")
	}
	if t := j.Tree; t != nil {
		if err := t.Shape.Validate(); err != nil {
			return errAt(t.Line, "tree: %v", err)
		}
		if t.Dir != "" {
			if strings.HasPrefix(t.Dir, "/") || t.Dir == "." || containsDotDot(t.Dir) {
				return errAt(t.Line, "tree.dir %q must be a relative path inside the benchmarked PATH, without ..", t.Dir)
			}
		}
	}
	seen := map[string]int{}
	for i := range j.Phases {
		ph := &j.Phases[i]
		if !nameRE.MatchString(ph.Name) {
			return errAt(ph.Line, "phase name %q: want lower-case letters, digits, '.', '_' and '-' (it names the phase in results and --expect)", ph.Name)
		}
		if l, ok := seen[ph.Name]; ok {
			return errAt(ph.Line, "phase name %q is used twice (first at line %d)", ph.Name, l)
		}
		seen[ph.Name] = ph.Line
		if err := j.validatePhase(ph); err != nil {
			return errAt(ph.Line, "phase %s: %v", ph.Name, err)
		}
	}
	return nil
}

func containsDotDot(p string) bool {
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return true
		}
	}
	return false
}

func (j *Job) validatePhase(ph *Phase) error {
	kind, ok := opKinds[ph.Op]
	if !ok {
		return fmt.Errorf("unknown operation %q (want one of %s)", ph.Op, strings.Join(Ops(), ", "))
	}
	if ph.XferSize == 0 {
		ph.XferSize = DefaultXferSize
	}
	if ph.XferSize > units.GiB {
		return fmt.Errorf("xfer_size %s is larger than 1 GiB", units.FormatBytes(ph.XferSize))
	}
	switch {
	case ph.Op == OpRW && ph.ReadPct < 0:
		ph.ReadPct = DefaultReadPct
	case ph.Op != OpRW && ph.ReadPct >= 0:
		return errors.New("read_pct applies to op rw (mixed reads and writes), e.g. op: rw, read_pct: 70 for vdbench's rdpct=70")
	}
	tree := j.Tree != nil
	if tree && ph.FileSize != 0 {
		return errors.New("file_size is the tree's (tree.file_size) when there is a tree")
	}
	if !tree {
		// Reads and writes need a size; metadata operations work on
		// empty files unless one is given.
		if ph.FileSize == 0 && ph.Data() {
			ph.FileSize = DefaultFileSize
		}
		switch kind {
		case workload.Mkdir, workload.Rmdir, workload.Readdir:
			return fmt.Errorf("op %s needs a tree (tree: depth, width, files)", ph.Op)
		}
		if ph.Op == OpFormat {
			return errors.New("op format needs a tree; without one, files are laid out before the first read")
		}
	}
	if ph.Data() && j.fileSize(ph) == 0 {
		return fmt.Errorf("op %s needs files of more than 0 bytes (file_size)", ph.Op)
	}
	if ph.Warmup > 0 && ph.Duration == 0 {
		return errors.New("warmup needs a duration (it is excluded from a time-limited phase)")
	}
	if ph.eachFileOnce() && (!ph.OnePass() || ph.Rate > 0) {
		return fmt.Errorf("op %s does each file once: duration, ops and rate do not apply", ph.Op)
	}
	if err := engine.CheckRate(ph.Rate, 1, ph.Ops, ph.Duration); err != nil {
		return err
	}
	if ph.Interval > 0 && ph.Interval < 10*time.Millisecond {
		return errors.New("interval must be at least 10ms")
	}
	return nil
}

// fileSize is the size of the files a phase works on.
func (j *Job) fileSize(ph *Phase) int64 {
	if j.Tree != nil {
		return j.Tree.FileSize
	}
	return ph.FileSize
}

// FileSize is the size of the files phase i works on.
func (j *Job) FileSize(i int) int64 { return j.fileSize(&j.Phases[i]) }

// MaxXfer is the largest transfer size of the job's phases.
func (j *Job) MaxXfer() int64 {
	var m int64
	for _, p := range j.Phases {
		m = max(m, min(p.XferSize, max(j.fileSize(&p), 1)))
	}
	return m
}

// Limits are the bounds Shrink puts on a job.
type Limits struct {
	FileSize int64         // largest file
	Duration time.Duration // longest phase (warm-up included)
	Files    int           // most files in the tree, or per thread
	Ops      int64         // most operations of a count-limited phase
}

// Shrink scales a job down to the limits, keeping its shape: the same
// phases and operations on smaller files, fewer of them and for less time.
// Tests run the example files this way.
func (j *Job) Shrink(l Limits) {
	if t := j.Tree; t != nil {
		if l.FileSize > 0 && t.FileSize > l.FileSize {
			t.FileSize = l.FileSize
		}
		for l.Files > 0 && t.NumFiles() > l.Files {
			switch {
			case t.Files > 1:
				t.Files = max(1, t.Files*l.Files/t.NumFiles())
			case t.Width > 1:
				t.Width--
			default:
				t.Depth--
			}
		}
	}
	for i := range j.Phases {
		p := &j.Phases[i]
		if l.FileSize > 0 && p.FileSize > l.FileSize {
			p.FileSize = l.FileSize
		}
		if l.Files > 0 && p.Files > l.Files {
			p.Files = l.Files
		}
		if fs := j.fileSize(p); fs > 0 && p.XferSize > fs {
			p.XferSize = fs
		}
		if l.Duration > 0 && p.Duration+p.Warmup > l.Duration {
			p.Warmup = min(p.Warmup, l.Duration/4)
			p.Duration = l.Duration - p.Warmup
		}
		if p.Interval > 0 && l.Duration > 0 && p.Interval > l.Duration/2 {
			p.Interval = max(l.Duration/2, 10*time.Millisecond)
		}
		if l.Ops > 0 && p.Ops > l.Ops {
			p.Ops = l.Ops
		}
	}
}
