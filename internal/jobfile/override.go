package jobfile

import (
	"time"

	"github.com/fsbench/fsbench/internal/skew"
	"github.com/fsbench/fsbench/internal/workload"
)

// Overrides are settings given outside a workload (on a command line) that
// replace the same settings of its tree and of every phase, so that a
// workload file can be run shorter or smaller. A nil field is not given.
type Overrides struct {
	XferSize *int64
	FileSize *int64
	Files    *int // files per thread, or per leaf directory of a tree
	Select   *workload.Access
	// Distribution replaces the phases' distribution of random picks.
	Distribution *skew.Spec
	Ops          *int64
	Duration     *time.Duration
	Warmup       *time.Duration
	Interval     *time.Duration
	Rate         *float64
	IOEngine     *workload.IOEngine
	IODepth      *int

	// Of the tree only.
	Depth, Width *int
	TreeDir      *string
	TreeFormat   *string
}

// Apply puts the overrides into j. The tree takes the file size and the
// file count when there is one; the phases take them otherwise. In a job
// read from a file, phases that do each file once (create, unlink, mkdir,
// rmdir) take only the transfer size: a limit would not fit them. A job
// built without a file takes every override, and Validate says what does
// not fit.
func (o *Overrides) Apply(j *Job) {
	if t := j.Tree; t != nil {
		o.applyTree(t)
	}
	for i := range j.Phases {
		p := &j.Phases[i]
		set(&p.XferSize, o.XferSize)
		set(&p.IOEngine, o.IOEngine)
		set(&p.IODepth, o.IODepth)
		if j.File != "" && p.eachFileOnce() {
			continue
		}
		if j.Tree == nil {
			o.applyFiles(&p.FileSize, &p.Files)
		}
		set(&p.Select, o.Select)
		if p.Random() {
			set(&p.Distribution, o.Distribution)
		}
		set(&p.Ops, o.Ops)
		set(&p.Duration, o.Duration)
		set(&p.Warmup, o.Warmup)
		set(&p.Interval, o.Interval)
		set(&p.Rate, o.Rate)
	}
}

func (o *Overrides) applyTree(t *Tree) {
	o.applyFiles(&t.FileSize, &t.Files)
	set(&t.Depth, o.Depth)
	set(&t.Width, o.Width)
	set(&t.Dir, o.TreeDir)
	set(&t.Format, o.TreeFormat)
}

// applyFiles sets the file size and count where they apply: in the tree,
// or in each phase of a job without one.
func (o *Overrides) applyFiles(size *int64, files *int) {
	set(size, o.FileSize)
	set(files, o.Files)
}

// eachFileOnce reports whether the phase's operation does each file once.
func (p *PhaseSpec) eachFileOnce() bool {
	switch p.Kind() {
	case workload.Create, workload.Unlink, workload.Mkdir, workload.Rmdir:
		return true
	}
	return false
}

// set stores *v in dst when v is given.
func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}
