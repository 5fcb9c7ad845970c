package checkpoint

import (
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/workload"
)

// rankClock times each rank's shard from the file operations the engine
// traces: from the start of the first (open or create) to the end of the
// last (close, after fsync). The engine calls Trace from the worker's own
// goroutine, so each rank's slot has one writer, and it is read only after
// the phase has ended.
type rankClock struct {
	t []rankTime
}

type rankTime struct {
	start, end time.Time
	bytes      int64
	errs       int64
}

func newRankClock(ranks int) *rankClock { return &rankClock{t: make([]rankTime, ranks)} }

func (c *rankClock) reset() { clear(c.t) }

// Trace records one file operation of worker w.
func (c *rankClock) Trace(w int, ev workload.Event) {
	if w < 0 || w >= len(c.t) {
		return // the run's own operations
	}
	r := &c.t[w]
	if r.start.IsZero() {
		r.start = ev.Start
	}
	r.end = ev.Start.Add(ev.Dur)
	switch {
	case ev.Err != nil:
		r.errs++
	case ev.Op == "read" || ev.Op == "write":
		r.bytes += ev.Done
	}
}

// rows are the ranks' rows of a phase of part: each rank's own shard, or
// with read the shard it read back; a rank that moved less than the
// shard's bytes is incomplete.
func (c *rankClock) rows(part Part, shard int64, read bool) []report.RankPhase {
	rows := make([]report.RankPhase, len(c.t))
	for i, t := range c.t {
		row := report.RankPhase{Rank: part.First + i, Shard: part.First + i, Bytes: t.bytes, Errors: t.errs, Incomplete: t.bytes < shard}
		if read {
			row.Shard = part.Reads(i)
		}
		if d := t.end.Sub(t.start).Seconds(); d > 0 {
			row.Seconds = d
			row.BytesPerSec = float64(t.bytes) / d
		}
		rows[i] = row
	}
	return rows
}
