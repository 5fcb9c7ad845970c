package bench

import (
	"fmt"
	"math"
	"path/filepath"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// CheckSpace refuses (ErrBadInput), before anything is written, a run
// whose files do not fit in the free space of the file system at o.Path:
// a run that fills it fails late, and on a tmpfs fills the memory. j is
// the workload, nil for the default benchmark; --read-existing writes
// nothing and is never refused.
func CheckSpace(o Options, j *jobfile.Job) error {
	if o.ReadExisting {
		return nil
	}
	need, remedy := o.need(), "give a smaller --big-file-size or --small-file-count, or fewer threads (-p)"
	what := "the benchmark"
	if j != nil {
		need, remedy = jobNeed(o, j), "give a smaller --file-size or fewer --files, or fewer threads (-p)"
		what = "the workload"
		if j.File != "" {
			what += " " + j.File
		}
	}
	free, short := sysio.Short(o.Path, need)
	if !short {
		return nil
	}
	return runenv.BadInput(fmt.Errorf("%s writes %s and %s has %s free; %s",
		what, units.FormatBytes(need), o.Path, units.FormatBytes(free), remedy))
}

// need is what the default benchmark writes: each thread's big file and
// its small files.
func (o *Options) need() int64 {
	var each int64
	if o.BigFileSize > 0 {
		size, _ := wholeBlocks(o.BigFileSize, o.BlockSize)
		each = sysio.OnDisk(size)
	}
	if o.SmallFileCount > 0 {
		size, _ := wholeBlocks(o.SmallFileSize, o.BlockSize)
		each = sysio.AddCapped(each, sysio.MulCapped(int64(o.SmallFileCount), sysio.OnDisk(size)))
	}
	return sysio.MulCapped(int64(o.Threads), each)
}

// jobNeed is what a workload writes: its tree (unless a kept one is there
// already, to be reused or rebuilt in its place), or each thread's job
// files at the largest size a phase gives each, and the shared file.
func jobNeed(o Options, j *jobfile.Job) int64 {
	threads := o.Threads
	if j.Threads > 0 {
		threads = j.Threads
	}
	if t := j.Tree; t != nil {
		if t.Dir != "" {
			if _, err := workload.ReadTreeInfoBeneath(o.Path, filepath.Clean(t.Dir)); err == nil {
				return 0
			}
		}
		return sysio.MulCapped(int64(t.NumFiles()), sysio.OnDisk(t.FileSize))
	}
	var shared int64
	for i := range j.Phases {
		if p := &j.Phases[i]; p.Shared {
			world := threads * max(o.Hosts, 1)
			shared = max(shared, sysio.MulCapped(int64(world)*int64(sharedSegments(p, world)), p.Block))
		}
	}
	return sysio.AddCapped(sysio.MulCapped(int64(threads), jobFilesNeed(j.Phases)), shared)
}

// jobFilesNeed is what one thread's job files take: file i (job.W.i) at
// the largest size of the phases that have an i-th file.
func jobFilesNeed(ps []jobfile.PhaseSpec) int64 {
	var total int64
	done := 0 // files counted so far
	for done < math.MaxInt {
		next, size := math.MaxInt, int64(-1)
		for i := range ps {
			if p := &ps[i]; !p.Shared && p.Files > done {
				next, size = min(next, p.Files), max(size, sysio.OnDisk(p.FileSize))
			}
		}
		if size < 0 {
			break
		}
		total = sysio.AddCapped(total, sysio.MulCapped(int64(next-done), size))
		done = next
	}
	return total
}
