package cluster

import (
	"fmt"
	"os"

	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
)

// requestFiles is room in the coordinator's open files for the requests
// in flight: a step's parallel requests (preflight, the job, a release,
// cancel or clean-up) while a round of pings is under way, each on a
// connection of its own, and the files the process opens besides.
const requestFiles = 4*parallel + 64

// fitFiles makes room in this process's open files for a run on n hosts:
// each host's event stream is open for the whole run, and, where the
// limit has room, a connection kept open for its requests too; else
// every request has a connection of its own, closed after its answer, so
// that the open files grow by one a host, not two. The limit is raised
// where it may be. When even one a host does not fit, the run cannot
// start: its error names the limit and what the hosts need.
func (c *Coordinator) fitFiles(n int) error {
	open := openFiles()
	least, keep := open+n+requestFiles, open+2*n+requestFiles
	limit := sysio.RaiseOpenFileLimit(keep)
	switch {
	case limit == 0 || limit >= keep: // unlimited, unknown, or room enough
		c.closeConns = false
	case limit >= least:
		c.closeConns = true
	default:
		return fmt.Errorf("%s need %d open files in this process (an event stream each, %d for requests, %d open already) and it may open %d (ulimit -n): raise the limit, or drive fewer hosts from one coordinator",
			units.Count(n, "host"), least, requestFiles, open, limit)
	}
	return nil
}

// openFiles is how many files this process has open: 0 where the system
// does not say (no /proc/self/fd).
func openFiles() int {
	d, err := os.Open("/proc/self/fd")
	if err != nil {
		return 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	return max(len(names)-1, 0) // less d itself
}
