package replay

import (
	"cmp"
	"slices"
	"sync"

	"github.com/fsbench/fsbench/internal/report"
)

// differences counts the distinct outcomes that differed from the
// recording's ("write: no space left on device, recorded as succeeded"),
// for a message of one line each.
type differences struct {
	mu    sync.Mutex
	count map[string]int64
}

// add counts one operation whose outcome, what, differed.
func (d *differences) add(what string) { d.addN(what, 1) }

// addN counts n operations whose outcome, what, differed.
func (d *differences) addN(what string, n int64) {
	d.mu.Lock()
	if d.count == nil {
		d.count = map[string]int64{}
	}
	d.count[what] += n
	d.mu.Unlock()
}

// list is the distinct outcomes, the most frequent first.
func (d *differences) list() []report.ErrorCount {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []report.ErrorCount
	for e, n := range d.count {
		out = append(out, report.ErrorCount{Error: e, Count: n})
	}
	slices.SortFunc(out, func(a, b report.ErrorCount) int {
		return cmp.Or(cmp.Compare(b.Count, a.Count), cmp.Compare(a.Error, b.Error))
	})
	return out
}
