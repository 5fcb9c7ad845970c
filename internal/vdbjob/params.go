package vdbjob

import (
	"fmt"
	"math"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/units"
)

// The parameters of each kind of definition: what fsbench does with each
// (Support), in the order of the manual's table. A parameter not listed is
// refused as unknown; one listed as refused is refused with its reason.
type support int

const (
	supported support = iota
	ignored           // accepted; it changes nothing in fsbench
	refused
)

// Spec is one parameter of the table: its kind of definition, its name,
// what fsbench does with it and why.
type Spec struct {
	Kind, Name string
	support    support
	Why        string
}

// Supported reports whether fsbench honours the parameter.
func (s Spec) Supported() bool { return s.support == supported }

// Ignored reports whether it is accepted and changes nothing.
func (s Spec) Ignored() bool { return s.support == ignored }

const oneWorkload = "fsbench runs one workload at a time"

// Table is every parameter fsbench knows, supported, ignored or refused;
// docs/vdbench.md shows it.
var Table = []Spec{
	{"hd", "system", supported, "the host's agent, HOST or HOST:PORT (port 7781 by default): `fsbench agent` must run there"},
	{"hd", "shell", supported, "vdbench (agents started by hand) only; rsh and ssh are refused: fsbench does not start agents, run `fsbench agent` on each host"},
	{"hd", "vdbench", ignored, "where vdbench is installed; fsbench agents are started by hand"},
	{"hd", "user", ignored, "the user vdbench logs in as; fsbench agents are started by hand"},
	{"hd", "jvms", ignored, "fsbench runs one process per host"},
	{"hd", "clients", refused, "several clients on one host: start one `fsbench agent` per client and give each its own hd="},
	{"hd", "mount", refused, "fsbench does not mount file systems"},

	{"fsd", "anchor", supported, "the tree's directory (kept and reused); fsbench makes it, and refuses one it did not make"},
	{"fsd", "depth", supported, "levels of directories"},
	{"fsd", "width", supported, "directories in each directory"},
	{"fsd", "files", supported, "files in each directory of the lowest level"},
	{"fsd", "size", supported, "one size for every file (sizes= too); a list of sizes is refused"},
	{"fsd", "shared", supported, "yes: the hosts split the tree's files, as vdbench's slaves do"},
	{"fsd", "openflags", supported, "o_direct (or directio) only"},
	{"fsd", "distribution", supported, "bottom only (files in the lowest level); all is refused"},
	{"fsd", "total_size", refused, "fsbench's tree has depth, width, files and size only"},
	{"fsd", "workingsetsize", refused, "fsbench works on every file of the tree"},
	{"fsd", "wss", refused, "fsbench works on every file of the tree"},
	{"fsd", "count", refused, "fsbench has one tree per run"},
	{"fsd", "journal", refused, "no journal of data validation"},

	{"fwd", "fsd", supported, "the fsd it works on: a run uses one fsd"},
	{"fwd", "host", supported, "the hd= it runs on; the fwds of a run on several hosts must be alike"},
	{"fwd", "operation", supported, "read, write, create, delete, mkdir, rmdir, getattr, setattr, open, move"},
	{"fwd", "rdpct", supported, "with read or write: a mix, rdpct percent reads"},
	{"fwd", "xfersize", supported, "one transfer size (xfersizes= too); a list, a mix of sizes, is refused"},
	{"fwd", "fileio", supported, "sequential or random; random,shared and other forms are refused"},
	{"fwd", "fileselect", supported, "sequential or random"},
	{"fwd", "threads", supported, "threads of the run (on each host); the fwds of a parameter file must agree"},
	{"fwd", "openflags", supported, "o_direct (or directio) only"},
	{"fwd", "skew", refused, oneWorkload},
	{"fwd", "stopafter", refused, "fsbench reads and writes whole files by elapsed= or maxdata="},

	{"rd", "fwd", supported, "the fwds it runs: a name, a list (a,b) or a wildcard fwd*"},
	{"rd", "fwdrate", supported, "max (closed loop), a rate in operations per second (open loop) or a list of rates (a phase each); with `hd=` hosts (or `--hosts`) the total across them, as in vdbench"},
	{"rd", "format", supported, "yes (rebuild the tree first: a phase of its own), restart (reuse a complete tree, else make it) or no (it must exist)"},
	{"rd", "elapsed", supported, "seconds (or with s, m, h), 30 by default"},
	{"rd", "interval", supported, "seconds between report lines, 1 by default"},
	{"rd", "warmup", supported, "seconds at the start left out of the figures"},
	{"rd", "maxdata", supported, "stop after this many bytes read and written (a size, 1024-based)"},
	{"rd", "forxfersize", supported, "a phase for each transfer size"},
	{"rd", "openflags", supported, "o_direct (or directio) only"},
	{"rd", "forthreads", refused, "the threads of a run are fixed: write an rd for each count and run them as parameter files of their own"},
	{"rd", "forrdpct", refused, "write an fwd with its rdpct= for each mix"},
	{"rd", "forwidth", refused, "fsbench has one tree per run"},
	{"rd", "fordepth", refused, "fsbench has one tree per run"},
	{"rd", "forfiles", refused, "fsbench has one tree per run"},
	{"rd", "forsizes", refused, "fsbench has one tree per run"},
	{"rd", "fortotal", refused, "fsbench has one tree per run"},
	{"rd", "foroperation", refused, "write an fwd with its operation= for each"},
	{"rd", "operations", refused, "operations= is for a block-device wd; use maxdata="},
	{"rd", "pause", refused, "fsbench starts each phase when the one before has ended"},
	{"rd", "distribution", refused, "arrivals are evenly spaced at fwdrate="},

	{"", "messagescan", ignored, "fsbench does not scan the system log"},
	{"", "create_anchors", ignored, "fsbench makes the anchor"},
	{"", "validate", supported, "yes: check every byte read against what was written (fsbench's --verify)"},
	{"", "data_errors", refused, "fsbench stops a phase at its first error"},
	{"", "compratio", supported, "the ratio a compressor reaches on the data written (fsbench's --compress-ratio)"},
	{"", "dedupratio", supported, "all 4 KiB blocks written over the distinct ones (fsbench's --dedupe-ratio)"},
	{"", "dedupunit", supported, "4k only: fsbench's blocks repeat at 4 KiB"},
	{"", "include", refused, "give each parameter file after -f instead"},
}

// spec finds the parameter key of a definition of kind.
func spec(kind, key string) (Spec, bool) {
	for _, s := range Table {
		if s.Kind == kind && s.Name == key {
			return s, true
		}
	}
	return Spec{}, false
}

// synonyms are other names vdbench takes for a parameter.
var synonyms = map[string]string{"sizes": "size", "xfersizes": "xfersize", "forxfersizes": "forxfersize", "forxfer": "forxfersize"}

// check refuses the parameters of d that fsbench does not honour, and
// returns the others by their canonical name, in order, a later one
// replacing an earlier one of the same name; ignored ones are dropped.
func check(d *def) (params, error) {
	if d.kind == "sd" || d.kind == "wd" || d.kind == "rg" {
		return nil, d.errf(d.line, "%s=%s: %s= defines block-device storage or its workload; fsbench benchmarks file systems: use fsd=, fwd= and rd=", d.kind, d.name, d.kind)
	}
	var out params
	for _, p := range d.params {
		key := p.key
		if s, ok := synonyms[key]; ok {
			key = s
		}
		what := d.kind + "=" + d.name + ": "
		if d.kind == "" {
			what = ""
		}
		s, ok := spec(d.kind, key)
		switch {
		case !ok:
			return nil, d.errf(p.line, "%s%s= is not a parameter fsbench knows for %s; see docs/vdbench.md", what, p.key, kindName(d.kind))
		case s.support == refused:
			return nil, d.errf(p.line, "%s%s= is not supported: %s", what, p.key, s.Why)
		case s.support == ignored:
			continue
		}
		out.set(param{key, p.value, p.line})
	}
	return out, nil
}

// params are a definition's parameters, each name once.
type params []param

func (ps *params) set(p param) {
	for i := range *ps {
		if (*ps)[i].key == p.key {
			(*ps)[i] = p
			return
		}
	}
	*ps = append(*ps, p)
}

func (ps params) get(key string) (param, bool) {
	for _, p := range ps {
		if p.key == key {
			return p, true
		}
	}
	return param{}, false
}

func kindName(kind string) string {
	if kind == "" {
		return "the whole file"
	}
	return kind + "="
}

// parsed reads typed values, keeping the first error with its line.
type parsed struct {
	d   *def
	err error
}

func (p *parsed) fail(pr param, format string, args ...any) {
	if p.err == nil {
		p.err = p.d.errf(pr.line, "%s=%s: %s=%s: %s", p.d.kind, p.d.name, pr.key, pr.value, fmt.Sprintf(format, args...))
	}
}

func (p *parsed) int(pr param, lo, hi int) int {
	v, err := strconv.Atoi(pr.value)
	if err != nil || v < lo || v > hi {
		p.fail(pr, "want a whole number in %d..%d", lo, hi)
	}
	return v
}

func (p *parsed) size(pr param) int64 {
	if strings.HasPrefix(pr.value, "(") {
		p.fail(pr, "a list of sizes (a mix) is not supported: give one size")
		return 0
	}
	v, err := units.ParseSize(pr.value)
	if err != nil {
		p.fail(pr, "%v", err)
	}
	return v
}

// seconds reads a time in seconds, or with an s, m or h suffix.
func (p *parsed) seconds(pr param) time.Duration {
	s, mult := strings.ToLower(pr.value), time.Second
	switch {
	case strings.HasSuffix(s, "h"):
		s, mult = s[:len(s)-1], time.Hour
	case strings.HasSuffix(s, "m"):
		s, mult = s[:len(s)-1], time.Minute
	case strings.HasSuffix(s, "s"):
		s = s[:len(s)-1]
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f > 1e7 || math.IsNaN(f) {
		p.fail(pr, "want a number of seconds (or with s, m or h)")
		return 0
	}
	return time.Duration(f * float64(mult))
}

// ratio reads compratio= or dedupratio=: 1 to pattern.MaxRatio.
func (p *parsed) ratio(pr param) float64 {
	v, err := strconv.ParseFloat(pr.value, 64)
	if err != nil || !(v >= 1 && v <= pattern.MaxRatio) {
		p.fail(pr, "want a ratio from 1 to %d", pattern.MaxRatio)
	}
	return v
}

func (p *parsed) yesNo(pr param) bool {
	switch strings.ToLower(pr.value) {
	case "yes", "y", "true":
		return true
	case "no", "n", "false":
		return false
	}
	p.fail(pr, "want yes or no")
	return false
}

func (p *parsed) oneOf(pr param, choices ...string) string {
	v := strings.ToLower(pr.value)
	if !slices.Contains(choices, v) {
		p.fail(pr, "want %s", strings.Join(choices, " or "))
	}
	return v
}

// direct reads openflags=: O_DIRECT is the one flag fsbench honours.
func (p *parsed) direct(pr param) bool {
	for _, f := range list(pr.value) {
		switch strings.ToLower(f) {
		case "o_direct", "directio":
		default:
			p.fail(pr, "%s is not supported: fsbench opens with o_direct (directio) or without flags", f)
		}
	}
	return true
}

// match reports whether name matches pattern, a name or a wildcard.
func match(pattern, name string) bool {
	ok, err := path.Match(strings.ToLower(pattern), strings.ToLower(name))
	return err == nil && ok
}

// data reads the general parameters of the data written: compratio=,
// dedupratio= and dedupunit= (4k, the unit fsbench's copies have).
func (p *parsed) data(ps params, d *pattern.Data) {
	if v, ok := ps.get("compratio"); ok {
		d.Compress = p.ratio(v)
	}
	if v, ok := ps.get("dedupratio"); ok {
		d.Dedupe = p.ratio(v)
	}
	if v, ok := ps.get("dedupunit"); ok {
		if n := p.size(v); n != 4096 && p.err == nil {
			p.fail(v, "fsbench's copies are 4 KiB blocks: give dedupunit=4k")
		}
	}
}
