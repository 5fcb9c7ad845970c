package cli

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsbench/fsbench/internal/cluster"
)

// hostsProgress shows a run on many hosts as one bar per phase: the sum
// of what the hosts have done, from the progress their agents send with
// each heartbeat, ended with the final count once every host has ended
// the phase.
type hostsProgress struct {
	app   *App
	hosts int
	mu    sync.Mutex
	phase string // the phase shown, "" before the first
	done  atomic.Int64
	bar   *Progress
	since time.Time // when the phase shown began
	ended bool      // its final count is shown
}

// update takes the hosts' progress in a phase (cluster.Coordinator's
// Progress): a phase's start (no unit yet), then the sums of the hosts'
// heartbeats, then its final count.
func (h *hostsProgress) update(p cluster.Progress, final bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p.Phase != h.phase {
		h.endLocked()
		h.phase, h.since, h.ended = p.Phase, time.Now(), false
	}
	h.done.Store(p.Done)
	if h.bar == nil && p.Unit != "" && !h.ended {
		// The bar counts from the phase's start on every host, also when
		// the phase ended before a heartbeat told of it.
		title := fmt.Sprintf("%s (%d hosts)", p.Phase, h.hosts)
		h.bar = h.app.startProgress(title, p.Total, 0, p.Unit, h.done.Load, h.since)
		// Its last line gives no rate: the time here runs from the
		// first report of a host to the last, the table's from the first
		// host's start to the last host's end, and two rates of one phase
		// would disagree.
		h.bar.bare = true
	}
	if h.bar != nil && p.Total >= 0 {
		h.bar.SetTotal(p.Total) // once every host has told its own
	}
	if final {
		h.endLocked()
		h.ended = true
	}
}

// end ends the bar shown, if any, and forgets the phase: a run repeated
// (--repeat) shows its phases again.
func (h *hostsProgress) end() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.endLocked()
	h.phase = ""
}

func (h *hostsProgress) endLocked() {
	if h.bar != nil {
		h.bar.Done()
		h.bar = nil
	}
}
