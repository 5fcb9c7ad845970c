package vdbjob

import (
	"fmt"
	"math"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/units"
)

// Options change how a parameter file is read.
type Options struct {
	// Vars are the values of $name in the files (vdbench's name=value
	// after the parameter file), by lower-case name.
	Vars map[string]string
	// Scale, between 0 and 1 (0: 1), makes the run smaller: see Scale.
	Scale float64
	// Anchor, when set, replaces the anchor= of the fsd.
	Anchor string
	// Hosts is how many hosts run a file without hd= lines (--hosts);
	// 0 or 1: this one.
	Hosts int
}

// Run is what a parameter file asks: a workload, the directory it runs
// in and the hosts it runs on.
type Run struct {
	Job *jobfile.Job
	// Path is the directory to benchmark, the anchor's parent; the tree
	// lives in the anchor itself (Job.Tree.Dir), on one host.
	Path   string
	Anchor string
	// Hosts are the agents (HOST:PORT) of the hd= lines, in order;
	// none when the file runs on this host.
	Hosts []string
}

// Read reads parameter files, concatenated as vdbench does, into a run.
// Every error names its file and line; nothing is run or touched.
func Read(srcs []Source, o Options) (*Run, error) {
	if len(srcs) == 0 {
		return nil, &Error{File: "vdbench", Msg: "no parameter file"}
	}
	name := srcs[0].Name
	defs, err := parseDefs(srcs, o.Vars)
	if err != nil {
		return nil, err
	}
	f, err := build(name, defs)
	if err != nil {
		return nil, err
	}
	if o.Anchor != "" {
		for _, x := range f.fsds {
			x.anchor = o.Anchor
		}
	}
	if o.Scale > 0 && o.Scale < 1 {
		f.scale(o.Scale)
	}
	return f.run(o.Hosts)
}

func (f *file) errf(line int, format string, args ...any) error {
	return &Error{f.name, line, fmt.Sprintf(format, args...)}
}

// run translates the file's definitions into fsbench's run on the hosts
// of its hd= lines, or on given hosts.
func (f *file) run(given int) (*Run, error) {
	if len(f.rds) == 0 {
		return nil, f.errf(0, "no rd= line: nothing to run")
	}
	hosts, err := f.agents()
	if err != nil {
		return nil, err
	}
	t := &translation{file: f, hosts: max(1, len(hosts))}
	if len(hosts) == 0 {
		t.hosts = max(1, given)
	}
	for _, r := range f.rds {
		if err := t.rd(r); err != nil {
			return nil, err
		}
	}
	j, err := t.job()
	if err != nil {
		return nil, err
	}
	anchor := filepath.Clean(t.fsd.anchor)
	return &Run{Job: j, Path: filepath.Dir(anchor), Anchor: anchor, Hosts: hosts}, nil
}

// agents are the hosts of the hd= lines as HOST:PORT; none for no hd= or
// the local host alone.
func (f *file) agents() ([]string, error) {
	if len(f.hosts) == 1 && local(f.hosts[0]) {
		return nil, nil
	}
	var out []string
	for _, h := range f.hosts {
		addr := h.system
		if addr == "" {
			addr = h.name
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			addr = net.JoinHostPort(addr, strconv.Itoa(DefaultAgentPort))
		}
		if host, _, _ := net.SplitHostPort(addr); host == "" || strings.ContainsAny(host, " /") {
			return nil, f.errf(h.line, "hd=%s: system=%s is not a host name or HOST:PORT", h.name, h.system)
		}
		out = append(out, addr)
	}
	return out, nil
}

func local(h host) bool {
	s := h.system
	if s == "" {
		s = h.name
	}
	return s == "localhost" || s == "127.0.0.1" || s == "::1"
}

// translation is the job being made from the rds, one after another.
type translation struct {
	file    *file
	hosts   int
	fsd     *fsd
	threads *fwd // the fwd whose threads= the job has
	direct  *bool
	phases  []jobfile.PhaseSpec
	format  string // of the first rd
}

// rd adds the phases of one run definition.
func (t *translation) rd(r *rd) error {
	w, err := t.workload(r)
	if err != nil {
		return err
	}
	if err := t.useFsd(r, w); err != nil {
		return err
	}
	if t.threads == nil {
		t.threads = w
	} else if w.threads != t.threads.threads {
		return t.file.errf(r.line, "rd=%s: fwd=%s has threads=%d and fwd=%s threads=%d: the threads of a run are fixed; put each count in a parameter file of its own",
			r.name, w.name, w.threads, t.threads.name, t.threads.threads)
	}
	direct := t.fsd.direct || w.direct || r.direct
	if t.direct == nil {
		t.direct = &direct
	} else if *t.direct != direct {
		return t.file.errf(r.line, "rd=%s: openflags=o_direct on some runs only: fsbench opens every file of a run alike", r.name)
	}
	if err := t.formatPhase(r); err != nil {
		return err
	}
	xfers := r.xfers
	if len(xfers) == 0 {
		xfers = []int64{w.xfer}
	}
	for _, x := range xfers {
		for _, rate := range r.rates {
			if err := t.phase(r, w, x, rate, len(xfers) > 1, len(r.rates) > 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// workload is the one fwd an rd runs (on each host).
func (t *translation) workload(r *rd) (*fwd, error) {
	var sel []*fwd
	for _, pat := range r.fwds {
		n := 0
		for _, w := range t.file.fwds {
			if match(pat, w.name) {
				sel = append(sel, w)
				n++
			}
		}
		if n == 0 {
			return nil, t.file.errf(r.line, "rd=%s: fwd=%s names no fwd", r.name, pat)
		}
	}
	if len(t.file.hosts) > 0 {
		return t.onHosts(r, sel)
	}
	for _, w := range sel {
		if w.host != "" && !strings.EqualFold(w.host, "localhost") {
			return nil, t.file.errf(w.line, "fwd=%s: host=%s is no hd=", w.name, w.host)
		}
	}
	if len(sel) > 1 {
		return nil, t.file.errf(r.line, "rd=%s runs %d fwds at once (%s): %s; give each its own rd", r.name, len(sel), names(sel), oneWorkload)
	}
	return sel[0], nil
}

// onHosts checks that the fwds of an rd put one workload, the same, on
// every host: fsbench runs each phase on every host.
func (t *translation) onHosts(r *rd, sel []*fwd) (*fwd, error) {
	per := map[string][]*fwd{}
	for _, w := range sel {
		if w.host == "" {
			for _, h := range t.file.hosts {
				per[strings.ToLower(h.name)] = append(per[strings.ToLower(h.name)], w)
			}
			continue
		}
		if !t.file.isHost(w.host) {
			return nil, t.file.errf(w.line, "fwd=%s: host=%s is no hd=", w.name, w.host)
		}
		per[strings.ToLower(w.host)] = append(per[strings.ToLower(w.host)], w)
	}
	for _, h := range t.file.hosts {
		ws := per[strings.ToLower(h.name)]
		switch {
		case len(ws) == 0:
			return nil, t.file.errf(r.line, "rd=%s runs nothing on hd=%s: fsbench runs every phase on every host", r.name, h.name)
		case len(ws) > 1:
			return nil, t.file.errf(r.line, "rd=%s runs %d fwds at once on hd=%s (%s): %s", r.name, len(ws), h.name, names(ws), oneWorkload)
		case !alike(ws[0], sel[0]):
			return nil, t.file.errf(r.line, "rd=%s: fwd=%s and fwd=%s differ: fsbench runs the same workload on every host", r.name, sel[0].name, ws[0].name)
		}
	}
	return sel[0], nil
}

func (f *file) isHost(name string) bool {
	for _, h := range f.hosts {
		if strings.EqualFold(h.name, name) {
			return true
		}
	}
	return false
}

// alike reports whether two fwds are the same workload (on other hosts).
func alike(a, b *fwd) bool {
	x, y := *a, *b
	x.name, x.host, x.line, y.name, y.host, y.line = "", "", 0, "", "", 0
	return x == y
}

func names(ws []*fwd) string {
	var s []string
	for _, w := range ws {
		s = append(s, w.name)
	}
	return strings.Join(s, ", ")
}

// useFsd makes the fsd of w the run's: fsbench has one tree per run.
func (t *translation) useFsd(r *rd, w *fwd) error {
	if w.fsds > 1 {
		return t.file.errf(w.line, "fwd=%s works on %d fsds: fsbench has one tree per run", w.name, w.fsds)
	}
	var x *fsd
	for _, s := range t.file.fsds {
		if strings.EqualFold(s.name, w.fsd) {
			x = s
		}
	}
	switch {
	case x == nil:
		return t.file.errf(w.line, "fwd=%s: fsd=%s is no fsd= line", w.name, w.fsd)
	case t.fsd != nil && t.fsd != x:
		return t.file.errf(r.line, "rd=%s works on fsd=%s, an rd before on fsd=%s: fsbench has one tree per run", r.name, x.name, t.fsd.name)
	case t.hosts > 1 && !x.shared:
		return t.file.errf(x.line, "fsd=%s is used by %d hosts: give it shared=yes, as vdbench needs too", x.name, t.hosts)
	}
	t.fsd = x
	return nil
}

// formatPhase adds the format phase of format=yes, and keeps the
// format of the first rd for the tree.
func (t *translation) formatPhase(r *rd) error {
	first := t.format == ""
	if first {
		t.format = r.format
	}
	switch {
	case r.format == "no" && t.hosts > 1 && first:
		return t.file.errf(r.line, "rd=%s: format=no on many hosts: each host's part of the tree is new in each run; give format=yes or restart", r.name)
	case r.format != "yes":
		return nil
	case !first:
		return t.file.errf(r.line, "rd=%s: format=yes after the first rd: fsbench rebuilds the tree before the first run only; give format=restart", r.name)
	}
	t.phases = append(t.phases, jobfile.PhaseSpec{Name: phaseName(r.name) + "-format", Op: jobfile.OpFormat,
		XferSize: units.MiB, ReadPct: -1, Files: 1, Interval: r.interval, Line: r.line})
	return nil
}

// eachOnce are the operations fsbench does once for each file.
var eachOnce = map[string]bool{"create": true, "unlink": true, "mkdir": true, "rmdir": true}

func (t *translation) phase(r *rd, w *fwd, xfer int64, rate float64, byXfer, byRate bool) error {
	name := phaseName(r.name)
	if byXfer {
		name += "-" + strings.ToLower(strings.ReplaceAll(units.FormatBytes(xfer), " ", ""))
	}
	if byRate {
		if rate == 0 {
			name += "-max"
		} else {
			name += "-" + strconv.FormatFloat(rate, 'f', -1, 64)
		}
	}
	p := jobfile.PhaseSpec{Name: name, Op: w.op, Access: w.fileio, Select: w.fileselect, XferSize: xfer,
		ReadPct: -1, Files: 1, Duration: r.elapsed, Warmup: r.warmup, Interval: min(r.interval, r.elapsed), Rate: rate, Line: r.line}
	if w.rdpct >= 0 {
		p.Op, p.ReadPct = jobfile.OpRW, w.rdpct
	}
	if r.maxdata > 0 {
		if !p.Data() {
			return t.file.errf(r.line, "rd=%s: maxdata= counts bytes read and written; operation=%s moves none", r.name, w.op)
		}
		p.Ops = max(1, (r.maxdata+xfer-1)/xfer)
	}
	if eachOnce[w.op] {
		if rate > 0 {
			return t.file.errf(r.line, "rd=%s: fwdrate=%g with operation=%s: fsbench does each file once, as fast as it can", r.name, rate, w.op)
		}
		p.Duration, p.Warmup = 0, 0
	}
	t.phases = append(t.phases, p)
	return nil
}

var unsafeName = regexp.MustCompile(`[^a-z0-9._-]+`)

// phaseName is an rd's name as a phase's: lower case, other characters
// made dashes.
func phaseName(s string) string {
	s = unsafeName.ReplaceAllString(strings.ToLower(s), "-")
	if s == "" || !strings.ContainsAny(s[:1], "abcdefghijklmnopqrstuvwxyz0123456789") {
		s = "rd" + s
	}
	return s
}

// job is the workload of the translated rds.
func (t *translation) job() (*jobfile.Job, error) {
	x := t.fsd
	j := &jobfile.Job{Name: "vdbench " + filepath.Base(t.file.name), Threads: t.threads.threads, Direct: *t.direct,
		Verify: t.file.validate, Phases: t.phases, File: t.file.name, Data: t.file.data}
	tree := &jobfile.Tree{Format: t.format, Line: x.line}
	tree.Depth, tree.Width, tree.Files, tree.FileSize = x.depth, x.width, x.files, x.size
	if t.hosts > 1 {
		// shared=yes: the hosts split the files, each its part in its
		// own directory of the run.
		tree.Files = max(1, (x.files+t.hosts-1)/t.hosts)
	} else {
		tree.Dir = filepath.Base(filepath.Clean(x.anchor))
		if !filepath.IsAbs(x.anchor) || tree.Dir == "/" || tree.Dir == "." || tree.Dir == ".." {
			return nil, t.file.errf(x.line, "fsd=%s: anchor=%s: want an absolute path below the mount, such as /mnt/jfs/vdbench", x.name, x.anchor)
		}
	}
	j.Tree = tree
	if err := j.Validate(); err != nil {
		return nil, err
	}
	return j, nil
}

// scale makes the run smaller by s (0 < s < 1): each fsd's files= and
// size=, each rd's elapsed=, warmup= and maxdata=. A size stays a multiple
// of the largest transfer on it and no smaller, so that every transfer
// keeps its size; files and elapsed stay at least 1 and 0.1 s.
func (f *file) scale(s float64) {
	for _, x := range f.fsds {
		x.files = max(1, int(math.Ceil(float64(x.files)*s)))
		unit := min(x.size, f.largestXfer(x))
		if unit > 0 {
			x.size = max(unit, int64(float64(x.size)*s)/unit*unit)
		}
	}
	for _, r := range f.rds {
		r.elapsed = max(100*time.Millisecond, time.Duration(float64(r.elapsed)*s))
		r.warmup = time.Duration(float64(r.warmup) * s)
		if r.maxdata > 0 {
			r.maxdata = max(1, int64(float64(r.maxdata)*s))
		}
	}
}

// largestXfer is the largest transfer size of the fwds and rds on x.
func (f *file) largestXfer(x *fsd) int64 {
	var m int64
	for _, w := range f.fwds {
		if strings.EqualFold(w.fsd, x.name) {
			m = max(m, w.xfer)
		}
	}
	for _, r := range f.rds {
		for _, v := range r.xfers {
			m = max(m, v)
		}
	}
	return m
}
