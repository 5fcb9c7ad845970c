package runenv

import (
	"fmt"

	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
)

// Dropper flushes and drops the kernel's caches before read phases: all
// caches as root, else the given files' pages.
type Dropper struct {
	method      string // drop_caches, fadvise or none
	warn        func(string, ...any)
	hooks       Hooks
	warned      bool
	flushWarned bool
}

// NewDropper makes the dropper of o.DropCaches and o.SkipDropCaches; root
// says whether the process may drop all caches.
func NewDropper(o Options, root bool, warn func(string, ...any)) *Dropper {
	d := &Dropper{warn: warn, hooks: o.Hooks}
	switch {
	case o.SkipDropCaches:
		d.method = "none"
		warn("SKIP_DROP_CACHES is set: read phases may be served from the page cache")
	case o.DropCaches == DropNever:
		d.method = "none"
	case root || o.DropCaches == DropAlways:
		d.method = "drop_caches"
	default:
		d.method = "fadvise"
		warn("not root: only the benchmark's own files are dropped from the page cache (fdatasync + fadvise DONTNEED); metadata caches stay warm")
	}
	return d
}

// Method is how caches are dropped: drop_caches, fadvise or none. A global
// drop that fails (a container's read-only /proc/sys) falls back to
// fadvise for this and later phases.
func (d *Dropper) Method() string { return d.method }

// Drop flushes dirty data and drops the caches before phase, which reads
// files, naming the wait: on a slow storage it takes as long as writing
// back what the last phase left in the page cache.
func (d *Dropper) Drop(phase string, files []string) {
	switch d.method {
	case "drop_caches":
		defer d.hooks.Waiting("flushing and dropping caches before " + phase)()
	case "fadvise":
		defer d.hooks.Waiting(fmt.Sprintf("flushing and dropping %s from the page cache before %s", units.CountGrouped(len(files), "file"), phase))()
	}
	d.dropNow(phase, files)
}

func (d *Dropper) dropNow(phase string, files []string) {
	switch d.method {
	case "drop_caches":
		if err := sysio.DropCaches(); err != nil {
			d.warn("before %s: %v; dropping only the benchmark's own files instead", phase, err)
			d.method = "fadvise"
			d.dropNow(phase, files)
		}
	case "fadvise":
		for _, f := range files {
			if err := sysio.DropFileCache(f); err != nil {
				if !d.warned {
					d.warn("before %s: drop page cache of %s: %v", phase, f, err)
					d.warned = true
				}
			}
		}
	}
}

// Flush writes back the dirty data of the file system that holds dir
// before phase, unless caches are not dropped at all: a phase that writes
// then starts from a clean cache, as one that reads does after Drop, and
// does not pay for what the phases before it left to write back.
func (d *Dropper) Flush(phase, dir string) {
	if d.method == "none" {
		return
	}
	defer d.hooks.Waiting("writing back dirty data before " + phase)()
	if err := sysio.SyncFS(dir); err != nil && !d.flushWarned {
		d.warn("before %s: %v", phase, err)
		d.flushWarned = true
	}
}
