package bench

import (
	"path/filepath"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/workload"
)

// sharedName is the job's shared file: in the run's directory on one
// host, beside the hosts' directories on many, where every host finds it.
const sharedName = "job.shared"

// sharedTarget is the shared file and its layout for phase p.
// A phase of it has no file size of its own (0).
func (r *jobRun) sharedTarget(p *jobfile.PhaseSpec) (*workload.Targets, *workload.SharedFile, int64) {
	hosts := max(r.o.Hosts, 1)
	world := r.o.Threads * hosts
	segs := sharedSegments(p, world)
	root := r.dir
	if hosts > 1 {
		root = filepath.Dir(r.dir)
	}
	return r.runner.NewTargets(root, []string{sharedName}), &workload.SharedFile{
		Block: p.Block, Segments: segs, Rank0: r.o.Host * r.o.Threads, World: world,
	}, 0
}

// sharedSegments is the segments of one Block each thread of world has
// in the shared file of phase p: p's, or as many as fill its file size.
func sharedSegments(p *jobfile.PhaseSpec, world int) int {
	if p.Segments > 0 {
		return p.Segments
	}
	return int(max(1, p.FileSize/(int64(world)*p.Block)))
}

// removeShared removes the file the hosts' runs share, if a phase made
// it, on the first host, once every host has passed the finish barrier: no
// one reads it then. On one host it is in the run's directory, removed
// with it.
func (r *jobRun) removeShared() {
	if r.o.Host != 0 || r.o.Hosts <= 1 || r.o.Keep {
		return
	}
	base := filepath.Dir(r.dir)
	for _, n := range []string{sharedName, sharedName + workload.StatusSuffix} {
		if err := removeIn(base, []string{n}); err != nil {
			r.warn("clean up: %v", err)
		}
	}
}
