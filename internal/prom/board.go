// Package prom exports what fsbench measures to Prometheus: the live
// counters of every phase that engines run (Board), the rounds of a probe,
// and the HTTP endpoint that serves them (Serve).
//
// Nothing here touches the workers' hot path: a Board reads the engines'
// atomics when it is scraped, and takes a phase's final counts from the
// engine when the phase ends (engine.Watcher).
//
// It may not slow a phase down: nothing here runs on the workers' hot path.
package prom

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/metrics"
)

// Totals are the cumulative counts of one operation of a phase on one host.
type Totals struct {
	Ops, Bytes, ReadBytes, WriteBytes, Errors, LatencyNs int64
	Buckets                                              [metrics.LiveBuckets]int64
}

// add adds a live phase's counts.
func (t *Totals) add(l *metrics.Live) {
	t.Ops += l.Ops.Load()
	t.Bytes += l.Bytes.Load()
	t.ReadBytes += l.ReadBytes.Load()
	t.WriteBytes += l.WriteBytes.Load()
	t.Errors += l.Errors.Load()
	t.LatencyNs += l.LatencyNs.Load()
	for i := range t.Buckets {
		t.Buckets[i] += l.Buckets[i].Load()
	}
}

// Add adds o's counts to t.
func (t *Totals) Add(o Totals) {
	t.Ops += o.Ops
	t.Bytes += o.Bytes
	t.ReadBytes += o.ReadBytes
	t.WriteBytes += o.WriteBytes
	t.Errors += o.Errors
	t.LatencyNs += o.LatencyNs
	for i := range t.Buckets {
		t.Buckets[i] += o.Buckets[i]
	}
}

// TotalsOf reads the counts of a live phase.
func TotalsOf(l *metrics.Live) Totals {
	var t Totals
	t.add(l)
	return t
}

// series names one operation of one phase of one host: the phase's own
// name for a phase of one operation, the operation's (Live.OpNames) for
// one of several.
type series struct{ host, phase, op string }

// Counts are the counts of one operation of a phase.
type Counts struct {
	Phase, Op string
	Totals
}

// Board is an engine.Watcher and a prometheus.Collector: the operations,
// bytes, errors and latencies of every phase run under it, live while a
// phase runs, by host, phase and operation. The counts of a phase name
// that runs again (--repeat, a probe's rounds) add up, so every counter
// only grows.
type Board struct {
	host   string
	mu     sync.Mutex
	done   map[series]*Totals
	order  []series
	active map[*metrics.Live]series
	remote map[series]map[string]Totals // hosts that report their own counts, by run (SetRemote)
	addrs  map[string]string            // the address of each host that has one (SetAddress)
}

// NewBoard returns a board whose local phases are labelled with host.
func NewBoard(host string) *Board {
	return &Board{host: host, done: map[series]*Totals{}, active: map[*metrics.Live]series{},
		remote: map[series]map[string]Totals{}, addrs: map[string]string{}}
}

var _ engine.Watcher = (*Board)(nil)

// Begin starts showing a phase's live counts, each operation's apart when
// the phase runs several.
func (b *Board) Begin(p *engine.Phase, l *metrics.Live) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(l.ByOp) == 0 {
		b.begin(series{b.host, p.Name, p.Name}, l)
		return
	}
	for i, ol := range l.ByOp {
		b.begin(series{b.host, p.Name, l.OpNames[i]}, ol)
	}
}

func (b *Board) begin(s series, l *metrics.Live) {
	b.entry(s)
	b.active[l] = s
}

// End adds a phase's final counts to its totals.
func (b *Board) End(_ *engine.Phase, l *metrics.Live) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ol := range append([]*metrics.Live{l}, l.ByOp...) {
		if s, ok := b.active[ol]; ok {
			delete(b.active, ol)
			b.entry(s).add(ol)
		}
	}
}

// SetAddress tells the address a host is reached at, exported as
// fsbench_host_info.
func (b *Board) SetAddress(host, addr string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.addrs[host] = addr
}

// SetRemote sets the counts another host reported for an operation of a
// phase of one run so far (a coordinator's view of its agents; op "" is
// the phase's one operation); the runs of a phase add up. Counts lower
// than those set before for the run are ignored, so that the counters
// never go back.
func (b *Board) SetRemote(run, host, phase, op string, t Totals) {
	if op == "" {
		op = phase
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	s := series{host, phase, op}
	runs, seen := b.remote[s]
	if !seen {
		runs = map[string]Totals{}
		b.remote[s] = runs
		if _, local := b.done[s]; !local {
			b.order = append(b.order, s)
		}
	}
	if old, ok := runs[run]; ok && (t.Ops < old.Ops || t.Bytes < old.Bytes || t.ReadBytes < old.ReadBytes || t.WriteBytes < old.WriteBytes || t.Errors < old.Errors) {
		return
	}
	runs[run] = t
}

// entry returns the totals of s, made on first use; b.mu is held.
func (b *Board) entry(s series) *Totals {
	t, ok := b.done[s]
	if !ok {
		t = new(Totals)
		b.done[s] = t
		if _, ok := b.remote[s]; !ok {
			b.order = append(b.order, s)
		}
	}
	return t
}

// Totals returns the current counts of a phase on the board's host, all
// its operations together.
func (b *Board) Totals(phase string) Totals {
	b.mu.Lock()
	defer b.mu.Unlock()
	var t Totals
	for _, s := range b.order {
		if s.host == b.host && s.phase == phase {
			t.Add(b.totals(s))
		}
	}
	return t
}

// Series returns the current counts of every operation of every phase of
// the board's own host, in the order they first ran.
func (b *Board) Series() []Counts {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []Counts
	for _, s := range b.order {
		if s.host == b.host {
			out = append(out, Counts{Phase: s.phase, Op: s.op, Totals: b.totals(s)})
		}
	}
	return out
}

// totals sums the done, live and remote counts of s; b.mu is held.
func (b *Board) totals(s series) Totals {
	var t Totals
	if d, ok := b.done[s]; ok {
		t = *d
	}
	for l, a := range b.active {
		if a == s {
			t.add(l)
		}
	}
	for _, r := range b.remote[s] {
		t.Add(r)
	}
	return t
}

var (
	labels   = []string{"host", "phase", "op"}
	opsDesc  = prometheus.NewDesc("fsbench_operations_total", "Operations completed, warm-up included.", labels, nil)
	byteDesc = prometheus.NewDesc("fsbench_bytes_total", "Bytes moved by completed operations, by direction (read, write).", append(labels, "direction"), nil)
	errDesc  = prometheus.NewDesc("fsbench_errors_total", "Operations that failed.", labels, nil)
	latDesc  = prometheus.NewDesc("fsbench_operation_duration_seconds", "Latency of completed operations (from the scheduled start in an open loop).", labels, nil)
	runDesc  = prometheus.NewDesc("fsbench_phase_running", "1 while the phase runs, 0 once it has ended.", []string{"host", "phase"}, nil)
	infoDesc = prometheus.NewDesc("fsbench_host_info", "The address a host is reached at; always 1.", []string{"host", "address"}, nil)
)

// Describe sends the descriptions of the board's metrics.
func (b *Board) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{opsDesc, byteDesc, errDesc, latDesc, runDesc, infoDesc} {
		ch <- d
	}
}

// Collect sends the board's metrics, read now.
func (b *Board) Collect(ch chan<- prometheus.Metric) {
	b.mu.Lock()
	defer b.mu.Unlock()
	type phase struct{ host, phase string }
	running := map[phase]bool{}
	for _, s := range b.active {
		running[phase{s.host, s.phase}] = true
	}
	seen := map[phase]bool{}
	for _, s := range b.order {
		t := b.totals(s)
		lv := []string{s.host, s.phase, s.op}
		ch <- prometheus.MustNewConstMetric(opsDesc, prometheus.CounterValue, float64(t.Ops), lv...)
		ch <- prometheus.MustNewConstMetric(byteDesc, prometheus.CounterValue, float64(t.ReadBytes), append(lv, "read")...)
		ch <- prometheus.MustNewConstMetric(byteDesc, prometheus.CounterValue, float64(t.WriteBytes), append(lv, "write")...)
		ch <- prometheus.MustNewConstMetric(errDesc, prometheus.CounterValue, float64(t.Errors), lv...)
		ch <- histogram(t, lv)
		if ph := (phase{s.host, s.phase}); !seen[ph] {
			seen[ph] = true
			r := 0.0
			if running[ph] {
				r = 1
			}
			ch <- prometheus.MustNewConstMetric(runDesc, prometheus.GaugeValue, r, s.host, s.phase)
		}
	}
	for h, a := range b.addrs {
		ch <- prometheus.MustNewConstMetric(infoDesc, prometheus.GaugeValue, 1, h, a)
	}
}

// histogram is the latency histogram of t, in seconds.
func histogram(t Totals, lv []string) prometheus.Metric {
	buckets := make(map[float64]uint64, metrics.LiveBuckets-1)
	var n uint64
	for k := 0; k < metrics.LiveBuckets-1; k++ {
		n += uint64(t.Buckets[k])
		buckets[metrics.LiveBucketBound(k).Seconds()] = n
	}
	n += uint64(t.Buckets[metrics.LiveBuckets-1])
	return prometheus.MustNewConstHistogram(latDesc, n, float64(t.LatencyNs)/1e9, buckets, lv...)
}
