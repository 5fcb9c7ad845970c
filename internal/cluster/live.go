package cluster

import (
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/prom"
)

// liveCounts are the counts of every phase a board has seen.
func liveCounts(b *prom.Board) []PhaseCounts {
	names, totals := b.Phases()
	out := make([]PhaseCounts, len(names))
	for i, t := range totals {
		out[i] = PhaseCounts{Phase: names[i], Ops: t.Ops, Bytes: t.Bytes, Errors: t.Errors, LatencyNs: t.LatencyNs,
			Buckets: append([]int64(nil), t.Buckets[:]...)}
	}
	return out
}

// totals are the counts of pc as a board takes them; buckets beyond the
// board's are added to its last one.
func (pc PhaseCounts) totals() prom.Totals {
	t := prom.Totals{Ops: pc.Ops, Bytes: pc.Bytes, Errors: pc.Errors, LatencyNs: pc.LatencyNs}
	for i, n := range pc.Buckets {
		t.Buckets[min(i, metrics.LiveBuckets-1)] += n
	}
	return t
}

// LiveSink takes the live counts that hosts report (a prom.Board).
type LiveSink interface {
	SetRemote(run, host, phase string, t prom.Totals)
}

// report passes a host's counts to the coordinator's sink.
func (c *Coordinator) report(h *host, counts []PhaseCounts) {
	if c.Live == nil {
		return
	}
	for _, pc := range counts {
		c.Live.SetRemote(h.run, h.addr, pc.Phase, pc.totals())
	}
}
