package cluster

import (
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/prom"
)

// liveCounts are the counts of every phase a board has seen.
func liveCounts(b *prom.Board) []PhaseCounts {
	series := b.Series()
	out := make([]PhaseCounts, len(series))
	for i, c := range series {
		out[i] = PhaseCounts{Phase: c.Phase, Op: c.Op, Ops: c.Ops, Bytes: c.Bytes, ReadBytes: c.ReadBytes, WriteBytes: c.WriteBytes, Errors: c.Errors,
			LatencyNs: c.LatencyNs, Buckets: append([]int64(nil), c.Buckets[:]...)}
	}
	return out
}

// totals are the counts of pc as a board takes them; buckets beyond the
// board's are added to its last one.
func (pc PhaseCounts) totals() prom.Totals {
	t := prom.Totals{Ops: pc.Ops, Bytes: pc.Bytes, ReadBytes: pc.ReadBytes, WriteBytes: pc.WriteBytes, Errors: pc.Errors, LatencyNs: pc.LatencyNs}
	if pc.ReadBytes == 0 && pc.WriteBytes == 0 {
		t.WriteBytes = pc.Bytes // an agent that does not split them
	}
	for i, n := range pc.Buckets {
		t.Buckets[min(i, metrics.LiveBuckets-1)] += n
	}
	return t
}

// LiveSink takes the live counts that hosts report (a prom.Board).
type LiveSink interface {
	SetRemote(run, host, phase, op string, t prom.Totals)
	SetAddress(host, addr string)
}

// report passes a host's counts to the coordinator's sink.
func (c *Coordinator) report(h *host, hosts []*host, counts []PhaseCounts) {
	if c.Live == nil {
		return
	}
	name := h.name(hosts)
	c.Live.SetAddress(name, h.addr)
	for _, pc := range counts {
		c.Live.SetRemote(h.run, name, pc.Phase, pc.Op, pc.totals())
	}
}

// name is the host's identity in metrics: the name its agent gives
// (its --name, else its host name), or its address when it gives none.
// Agents that give one name (several on one machine, a launcher's ranks)
// are told apart by their address: NAME@ADDRESS.
func (h *host) name(hosts []*host) string {
	n := h.info.Host.Name
	if n == "" {
		return h.addr
	}
	for _, o := range hosts {
		if o != h && o.info.Host.Name == n {
			return n + "@" + h.addr
		}
	}
	return n
}
