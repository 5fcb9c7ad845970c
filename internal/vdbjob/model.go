package vdbjob

import (
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// vdbench's defaults.
const (
	defaultXfer     = 128 * units.KiB // file system xfersize since vdbench 5.03
	defaultElapsed  = 30 * time.Second
	defaultInterval = time.Second
	// DefaultAgentPort is the port of an hd='s system= without one:
	// fsbench agent's default.
	DefaultAgentPort = 7781
)

type host struct {
	name, system string
	line         int
}

type fsd struct {
	name, anchor        string
	depth, width, files int
	size                int64
	shared, direct      bool
	line                int
}

type fwd struct {
	name, host, fsd    string
	fsds               int // how many fsds it names
	op                 string
	rdpct              int // -1: not given
	xfer               int64
	fileio, fileselect workload.Access
	threads            int
	direct             bool
	line               int
}

type rd struct {
	name                      string
	fwds                      []string
	rates                     []float64 // 0: max
	format                    string
	elapsed, interval, warmup time.Duration
	maxdata                   int64
	xfers                     []int64
	direct                    bool
	line                      int
}

// file is a parameter file's definitions, read.
type file struct {
	name     string
	validate bool
	data     pattern.Data // compratio=, dedupratio=
	hosts    []host
	fsds     []*fsd
	fwds     []*fwd
	rds      []*rd
}

// build reads the definitions into f, each with the defaults before it.
func build(name string, defs []*def) (*file, error) {
	f := &file{name: name}
	defaults := map[string][]param{}
	for _, d := range defs {
		if strings.EqualFold(d.name, "default") {
			if _, err := check(d); err != nil {
				return nil, err
			}
			defaults[d.kind] = append(defaults[d.kind], d.params...)
			continue
		}
		full := *d
		full.params = append(append([]param{}, defaults[d.kind]...), d.params...)
		ps, err := check(&full)
		if err != nil {
			return nil, err
		}
		if err := f.add(&full, ps); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func (f *file) add(d *def, ps params) error {
	p := &parsed{d: d}
	switch d.kind {
	case "":
		if v, ok := ps.get("validate"); ok {
			f.validate = p.yesNo(v)
		}
		p.data(ps, &f.data)
	case "hd":
		f.hosts = append(f.hosts, p.host(ps))
	case "fsd":
		f.fsds = append(f.fsds, p.fsd(ps))
	case "fwd":
		f.fwds = append(f.fwds, p.fwd(ps))
	case "rd":
		f.rds = append(f.rds, p.rd(ps))
	}
	if p.err == nil {
		p.err = f.unique(d)
	}
	return p.err
}

// unique refuses a second definition of a name.
func (f *file) unique(d *def) error {
	n := 0
	count := func(name string) {
		if strings.EqualFold(name, d.name) {
			n++
		}
	}
	for _, h := range f.hosts {
		count(h.name)
	}
	for _, x := range f.fsds {
		count(x.name)
	}
	for _, x := range f.fwds {
		count(x.name)
	}
	for _, x := range f.rds {
		count(x.name)
	}
	if n > 1 {
		return d.errf(d.line, "%s=%s is defined twice", d.kind, d.name)
	}
	return nil
}

func (p *parsed) host(ps params) host {
	h := host{name: p.d.name, line: p.d.line}
	if v, ok := ps.get("system"); ok {
		h.system = v.value
	}
	if v, ok := ps.get("shell"); ok && p.oneOf(v, "vdbench", "rsh", "ssh") != "vdbench" {
		p.fail(v, "fsbench does not start agents over %s: run `fsbench agent` on each host and drop shell= (or give shell=vdbench)", strings.ToLower(v.value))
	}
	return h
}

func (p *parsed) fsd(ps params) *fsd {
	x := &fsd{name: p.d.name, line: p.d.line, depth: -1, width: -1, files: -1, size: -1}
	for _, v := range ps {
		switch v.key {
		case "anchor":
			x.anchor = v.value
		case "depth":
			x.depth = p.int(v, 0, 64)
		case "width":
			x.width = p.int(v, 1, 1<<30)
		case "files":
			x.files = p.int(v, 1, 1<<30)
		case "size":
			x.size = p.size(v)
		case "shared":
			x.shared = p.yesNo(v)
		case "openflags":
			x.direct = p.direct(v)
		case "distribution":
			if p.oneOf(v, "bottom", "all") == "all" {
				p.fail(v, "fsbench's tree has files in the lowest level only (distribution=bottom)")
			}
		}
	}
	for _, m := range []struct {
		v    int64
		name string
	}{{int64(x.depth), "depth"}, {int64(x.width), "width"}, {int64(x.files), "files"}, {x.size, "size"}} {
		if m.v < 0 && p.err == nil {
			p.err = p.d.errf(p.d.line, "fsd=%s: %s= is required (anchor, depth, width, files and size make the tree)", x.name, m.name)
		}
	}
	if x.anchor == "" && p.err == nil {
		p.err = p.d.errf(p.d.line, "fsd=%s: anchor= is required: the directory the tree is made in", x.name)
	}
	return x
}

// vdbench's operations, as fsbench's.
var operations = map[string]string{
	"read": "read", "write": "write", "create": "create", "delete": "unlink", "mkdir": "mkdir", "rmdir": "rmdir",
	"getattr": "stat", "setattr": "chmod", "open": "open", "move": "rename",
}

func (p *parsed) fwd(ps params) *fwd {
	x := &fwd{name: p.d.name, line: p.d.line, op: "read", rdpct: -1, xfer: defaultXfer,
		fileselect: workload.Random, threads: 1}
	for _, v := range ps {
		switch v.key {
		case "fsd":
			if l := list(v.value); len(l) > 0 {
				x.fsd, x.fsds = l[0], len(l)
			}
		case "host":
			x.host = v.value
		case "operation":
			op, ok := operations[strings.ToLower(v.value)]
			if !ok {
				p.fail(v, "not supported: fsbench does read, write, create, delete, mkdir, rmdir, getattr, setattr, open and move")
			}
			x.op = op
		case "rdpct":
			x.rdpct = p.int(v, 0, 100)
		case "xfersize":
			x.xfer = p.size(v)
		case "fileio":
			x.fileio = p.access(v)
		case "fileselect":
			x.fileselect = p.access(v)
		case "threads":
			x.threads = p.int(v, 1, 4096)
		case "openflags":
			x.direct = p.direct(v)
		}
	}
	if x.rdpct >= 0 && x.op != "read" && x.op != "write" && p.err == nil {
		p.err = p.d.errf(p.d.line, "fwd=%s: rdpct= mixes reads and writes: it goes with operation=read or write, not %s", x.name, x.op)
	}
	if x.fsd == "" && p.err == nil {
		p.err = p.d.errf(p.d.line, "fwd=%s: fsd= is required", x.name)
	}
	return x
}

func (p *parsed) access(v param) workload.Access {
	if strings.HasPrefix(p.oneOf(v, "sequential", "random"), "seq") {
		return workload.Sequential
	}
	return workload.Random
}

func (p *parsed) rd(ps params) *rd {
	x := &rd{name: p.d.name, line: p.d.line, rates: []float64{0}, format: "no",
		elapsed: defaultElapsed, interval: defaultInterval}
	for _, v := range ps {
		switch v.key {
		case "fwd":
			x.fwds = list(v.value)
		case "fwdrate":
			x.rates = p.rates(v)
		case "format":
			x.format = p.oneOf(v, "yes", "restart", "no")
		case "elapsed":
			x.elapsed = p.seconds(v)
		case "interval":
			x.interval = p.seconds(v)
		case "warmup":
			x.warmup = p.seconds(v)
		case "maxdata":
			x.maxdata = p.size(v)
		case "forxfersize":
			for _, s := range list(v.value) {
				x.xfers = append(x.xfers, p.size(param{v.key, s, v.line}))
			}
		case "openflags":
			x.direct = p.direct(v)
		}
	}
	if len(x.fwds) == 0 && p.err == nil {
		p.err = p.d.errf(p.d.line, "rd=%s: fwd= is required: the fwds it runs", x.name)
	}
	if x.elapsed <= 0 && p.err == nil {
		p.err = p.d.errf(p.d.line, "rd=%s: elapsed= must be more than 0", x.name)
	}
	return x
}

// rates reads fwdrate=: max, a rate, or a list of them.
func (p *parsed) rates(v param) []float64 {
	var out []float64
	for _, s := range list(v.value) {
		if strings.EqualFold(s, "max") {
			out = append(out, 0)
			continue
		}
		r, err := strconv.ParseFloat(s, 64)
		if err != nil || !(r > 0) {
			p.fail(v, "want max or operations per second above 0 (curve and ranges are not supported)")
		}
		out = append(out, r)
	}
	if len(out) == 0 {
		p.fail(v, "want max or operations per second above 0")
	}
	return out
}
