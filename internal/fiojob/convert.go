package fiojob

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// Result is fio's input as fsbench runs it.
type Result struct {
	Job *jobfile.Job
	// Dir is the directory to run in: fio's directory=, or the directory
	// of an absolute filename=, else "." (as fio).
	Dir string
	// Notes say how fio's settings run on fsbench (which engine libaio
	// runs on, ...), one line each, for stderr.
	Notes []string
	// Groups are fio's jobs behind each phase: Groups[i] names the jobs
	// phase i runs at once, for fio's summary lines.
	Groups [][]string
}

// Convert turns fio's input into fsbench's job. name names the job (and
// file, when there is one: "" for a command line).
func Convert(in *Input, file string) (*Result, error) {
	jobs, err := readJobs(in)
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("no job to run (only [global], or --section matched none)")
	}
	c := &converter{res: &Result{}, names: map[string]bool{},
		fsync: firstOf[bool]{name: "end_fsync/fsync_on_close"}, verify: firstOf[bool]{name: "verify"},
		data: firstOf[pattern.Data]{name: "buffer_compress_percentage/dedupe_percentage"}}
	groups, err := group(jobs)
	if err != nil {
		return nil, err
	}
	for _, g := range groups {
		if err := c.addGroup(g); err != nil {
			return nil, err
		}
	}
	first := jobs[0]
	j := c.job
	j.Name, j.Description, j.File = first.name, first.description, file
	if file != "" {
		j.Name = strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
	}
	if err := j.Validate(); err != nil {
		return nil, err
	}
	c.res.Job = j
	if c.res.Dir == "" {
		c.res.Dir = "."
	}
	return c.res, nil
}

// readJobs applies [global] and each job's options, in order.
func readJobs(in *Input) ([]*fioJob, error) {
	var global []Option
	var jobs []*fioJob
	for _, s := range in.Sections {
		if s.Global() {
			global = append(global, s.Options...)
			continue
		}
		if len(in.Only) > 0 && !contains(in.Only, s.Name) {
			continue
		}
		j := newFioJob(s.Name, s.Where)
		all := append(append([]Option{}, global...), s.Options...)
		for _, o := range all { // kb_base first: it decides what the sizes mean
			if canonical(o.Key) == "kb_base" {
				if err := j.set(o); err != nil {
					return nil, err
				}
			}
		}
		for i, o := range all {
			if i == len(global) {
				j.name = s.Name // the section names the job, over a name= in [global]
			}
			if err := j.set(o); err != nil {
				return nil, err
			}
		}
		if len(s.Options) == 0 && len(global) > 0 {
			j.name = s.Name
		}
		jobs = append(jobs, j)
	}
	return jobs, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// group splits the jobs into what fio runs at the same time: a job with
// stonewall waits for every job before it, the others start together.
// Jobs that run together must be the same job apart from their names
// (fsbench runs one phase at a time): they become one phase with the
// threads of all.
func group(jobs []*fioJob) ([][]*fioJob, error) {
	var out [][]*fioJob
	for i, j := range jobs {
		if i == 0 || j.stonewall {
			out = append(out, []*fioJob{j})
			continue
		}
		g := &out[len(out)-1]
		if a, b := shape(j), shape((*g)[0]); a != b {
			return nil, fmt.Errorf("%s: jobs that run at the same time (no stonewall between them), [%s] and [%s], differ in %s: fsbench runs one phase at a time; add stonewall to [%s] to run it after",
				j.where, (*g)[0].name, j.name, firstDiff(a, b), j.name)
		}
		*g = append(*g, j)
	}
	return out, nil
}

// shape is what a job does, apart from its name and thread count, as a
// comparable string of settings.
func shape(j *fioJob) string {
	k := *j
	k.name, k.description, k.where, k.numjobs, k.stonewall, k.given = "", "", "", 0, false, nil
	return fmt.Sprintf("%+v", k)
}

var fieldRE = regexp.MustCompile(`(\w+):(\S*)`)

// firstDiff names the first setting in which two shapes differ.
func firstDiff(a, b string) string {
	fa, fb := fieldRE.FindAllStringSubmatch(a, -1), fieldRE.FindAllStringSubmatch(b, -1)
	for i := range min(len(fa), len(fb)) {
		if fa[i][2] != fb[i][2] {
			return fmt.Sprintf("%s (%s, %s)", fa[i][1], fb[i][2], fa[i][2])
		}
	}
	return "their settings"
}

type converter struct {
	res   *Result
	job   *jobfile.Job
	names map[string]bool
	where string // the first job, for messages about the whole
	// fsync is set by the jobs that write, verify by those that read.
	fsync, verify firstOf[bool]
	// data is set by the jobs that write.
	data firstOf[pattern.Data]
}

// addGroup adds the phase (or phases: a write and its verification) of
// jobs that run at the same time.
func (c *converter) addGroup(g []*fioJob) error {
	j := g[0]
	threads := 0
	var names []string
	for _, x := range g {
		threads += x.numjobs
		names = append(names, x.name)
	}
	if err := c.jobWide(j, threads); err != nil {
		return err
	}
	if err := c.dir(j); err != nil {
		return err
	}
	ph, err := c.phase(j, threads)
	if err != nil {
		return err
	}
	c.job.Phases = append(c.job.Phases, ph)
	c.res.Groups = append(c.res.Groups, names)
	if j.verify && j.doVerify && (ph.Op == jobfile.OpWrite) {
		v := ph
		v.Name, v.Op, v.Access, v.Rate = c.phaseName(j.name+"-verify"), jobfile.OpRead, workload.Sequential, 0
		c.job.Phases = append(c.job.Phases, v)
		c.res.Groups = append(c.res.Groups, names)
	}
	return nil
}

// jobWide checks and sets what fsbench's job has once for all its phases:
// threads, O_DIRECT, fsync and verify.
func (c *converter) jobWide(j *fioJob, threads int) error {
	verify := j.verify && j.doVerify
	if c.job == nil {
		c.job = &jobfile.Job{Threads: threads, Direct: j.direct}
		c.where = j.name
	}
	data := pattern.Data{Compress: j.compress, Dedupe: j.dedupe}
	diffs := []setting{{"numjobs", c.where, c.job.Threads, threads}, {"direct", c.where, c.job.Direct, j.direct}}
	if j.rw != "read" && j.rw != "randread" {
		diffs = append(diffs, c.data.take(j, data))
		c.job.Data = c.data.v
	}
	// fsync applies to the phases that write, verify to those that read.
	if j.rw != "read" && j.rw != "randread" {
		diffs = append(diffs, c.fsync.take(j, j.fsync))
		c.job.Fsync = j.fsync
	}
	if j.rw != "write" && j.rw != "randwrite" || verify {
		diffs = append(diffs, c.verify.take(j, verify))
		c.job.Verify = verify
	}
	for _, d := range diffs {
		if d.first != d.this {
			return fmt.Errorf("%s: %s differs between [%s] (%v) and [%s] (%v): fsbench sets it once for every phase of a run; run them as separate commands",
				j.where, d.name, d.firstJob, d.first, j.name, d.this)
		}
	}
	return nil
}

// setting is one of the job-wide settings as the first job that has it
// set it, and as this one does.
type setting struct {
	name, firstJob string
	first, this    any
}

// firstOf keeps the first job's value of a job-wide setting.
type firstOf[T any] struct {
	name, job string
	v         T
	set       bool
}

func (f *firstOf[T]) take(j *fioJob, v T) setting {
	if !f.set {
		f.job, f.v, f.set = j.name, v, true
	}
	return setting{f.name, f.job, f.v, v}
}

// dir sets the run's directory from the job's directory= or filename=.
func (c *converter) dir(j *fioJob) error {
	d := j.directory
	if j.filename != "" {
		if filepath.IsAbs(j.filename) && d == "" {
			d = filepath.Dir(j.filename)
		}
		if j.numjobs > 1 {
			c.note(fmt.Sprintf("filename=%s: each of the %d threads of [%s] works on a file of its own (fio's clones share one)", j.filename, j.numjobs, j.name))
		}
	}
	if d == "" {
		d = "."
	}
	if c.res.Dir != "" && c.res.Dir != d {
		return fmt.Errorf("%s: [%s] runs in %s, an earlier job in %s: fsbench runs in one directory", j.where, j.name, d, c.res.Dir)
	}
	c.res.Dir = d
	return nil
}

// phase makes the phase of one job run by threads threads.
func (c *converter) phase(j *fioJob, threads int) (jobfile.PhaseSpec, error) {
	errf := func(format string, args ...any) error {
		return fmt.Errorf("%s: [%s]: %s", j.where, j.name, fmt.Sprintf(format, args...))
	}
	op, access, _ := jobfile.ResolveOp(j.rw)
	p := jobfile.PhaseSpec{Name: c.phaseName(j.name), Op: op, Access: access, XferSize: j.bs, Files: j.nrfiles, ReadPct: -1}
	if access == workload.Random {
		p.Distribution = j.dist // fio draws only random offsets from it
	}
	if op == jobfile.OpRW {
		p.ReadPct = jobfile.DefaultReadPct
		if j.readPct >= 0 {
			p.ReadPct = j.readPct
		}
	}
	if err := c.sizes(j, &p); err != nil {
		return p, errf("%v", err)
	}
	if err := c.engine(j, &p); err != nil {
		return p, errf("%v", err)
	}
	if err := timing(j, &p, threads); err != nil {
		return p, errf("%v", err)
	}
	switch {
	case j.rateIOPS > 0 && j.rateBytes > 0:
		return p, errf("rate and rate_iops: give one")
	case j.rateIOPS > 0:
		p.Rate = float64(j.rateIOPS) * float64(threads)
	case j.rateBytes > 0:
		p.Rate = float64(j.rateBytes) / float64(j.bs) * float64(threads)
	}
	if p.Rate > 0 {
		c.note("rate: fsbench schedules operations at the rate and times each from its scheduled start; fio's clat (the service time) is in the -v lines")
	}
	return p, nil
}

// sizes sets the phase's files from size, filesize and nrfiles: fio's
// size is what each job moves, across its nrfiles files.
func (c *converter) sizes(j *fioJob, p *jobfile.PhaseSpec) error {
	switch {
	case j.fileSize > 0:
		if j.size > 0 && j.size != j.fileSize*int64(j.nrfiles) {
			return fmt.Errorf("size=%s with filesize=%s and nrfiles=%d: fsbench does each file once, so size must be filesize times nrfiles", units.FormatBytes(j.size), units.FormatBytes(j.fileSize), j.nrfiles)
		}
		p.FileSize = j.fileSize
	case j.size > 0:
		p.FileSize = j.size / int64(j.nrfiles)
		if p.FileSize == 0 {
			return fmt.Errorf("size=%d over nrfiles=%d leaves files of 0 bytes", j.size, j.nrfiles)
		}
	default:
		return fmt.Errorf("size= is needed: the bytes each job reads or writes (fio needs it too for files it creates)")
	}
	if j.nrfiles > 1 && !strings.HasPrefix(j.fileService, "sequential") {
		return fmt.Errorf("nrfiles=%d with file_service_type=%s: fio moves to another file after every I/O; fsbench works through a thread's files one at a time: give file_service_type=sequential", j.nrfiles, j.fileService)
	}
	if f := j.filenameFmt; f != "" {
		if j.numjobs > 1 && !strings.Contains(f, "$jobnum") || j.nrfiles > 1 && !strings.Contains(f, "$filenum") {
			return fmt.Errorf("filename_format=%s: files shared between threads or between a job's files are not supported; fsbench gives each thread files of its own (include $jobnum and $filenum)", f)
		}
	}
	return nil
}

// engine maps fio's ioengine and iodepth onto fsbench's engines: sync
// and io_uring.
func (c *converter) engine(j *fioJob, p *jobfile.PhaseSpec) error {
	e := j.ioengine
	switch {
	case e == "io_uring":
		p.IOEngine, p.IODepth = workload.IOUring, j.iodepth
	case (e == "libaio" || e == "posixaio") && j.iodepth > 1 && (j.direct || e == "posixaio"):
		p.IOEngine, p.IODepth = workload.IOUring, j.iodepth
		c.note(fmt.Sprintf("ioengine=%s runs on fsbench's io_uring engine at iodepth %d", e, j.iodepth))
	case e == "libaio" && j.iodepth > 1:
		p.IOEngine = workload.Sync
		c.note("ioengine=libaio on buffered files completes each I/O as it is submitted (the kernel's libaio is asynchronous with direct=1 only); it runs on fsbench's sync engine")
	case e == "libaio" || e == "posixaio":
		p.IOEngine = workload.Sync
		c.note(fmt.Sprintf("ioengine=%s at iodepth 1 runs on fsbench's sync engine", e))
	default:
		// The sync engines have one I/O in flight whatever iodepth says,
		// in fio as in fsbench.
		p.IOEngine = workload.Sync
	}
	return nil
}

// timing sets the phase's limits: one pass (fio's default: size bytes
// per job), a runtime with time_based, or a runtime that ends the pass
// early; loops passes.
func timing(j *fioJob, p *jobfile.PhaseSpec, threads int) error {
	switch {
	case j.timeBased:
		if j.runtime == 0 {
			return fmt.Errorf("time_based needs runtime= (fio would run until stopped)")
		}
		p.Duration, p.Warmup = j.runtime, j.rampTime
		return nil
	case j.rampTime > 0:
		return fmt.Errorf("ramp_time needs time_based and runtime in fsbench (its warm-up is part of a timed phase)")
	case j.runtime > 0 && j.loops > 1:
		return fmt.Errorf("loops=%d with runtime=%s (no time_based) is not supported", j.loops, j.runtime)
	case j.runtime > 0:
		p.Duration, p.Once = j.runtime, true
	case j.loops > 1:
		blocks := (p.FileSize + p.XferSize - 1) / p.XferSize
		p.Ops = int64(j.loops) * int64(threads) * int64(p.Files) * blocks
	}
	return nil
}

var nameBad = regexp.MustCompile(`[^a-z0-9._-]+`)

// phaseName is a phase name (lower case, no blanks) for a fio job's
// name, unique in the job.
func (c *converter) phaseName(name string) string {
	n := strings.Trim(nameBad.ReplaceAllString(strings.ToLower(name), "-"), "-._")
	if n == "" {
		n = "job"
	}
	base := n
	for i := 2; c.names[n]; i++ {
		n = base + "-" + strconv.Itoa(i)
	}
	c.names[n] = true
	return n
}

func (c *converter) note(s string) {
	for _, n := range c.res.Notes {
		if n == s {
			return
		}
	}
	c.res.Notes = append(c.res.Notes, s)
}
