package replay

import (
	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

// fill puts the replay's measurement into res: a row for the whole
// replay and one per type of operation (replay-read, ...), with the
// recording's figures beside them in res.Replay.
func fill(res *report.Result, r *engine.Result, t *Trace, o Options) {
	all := row(r, "replay", "Replay", "one recorded operation")
	res.Phases = append(res.Phases, all)
	rp := &report.Replay{Log: o.logName(), Format: t.Format, Streams: len(t.Streams), Speed: o.Speed,
		RecordedSeconds: t.Span.Seconds(), Seconds: r.Elapsed.Seconds(),
		Prepared: len(t.Initial) + len(t.Implied), Emptied: t.Cleared,
		Lines: t.Skipped.Lines, Blank: t.Skipped.Blank, Malformed: t.Skipped.Malformed, Virtual: t.Skipped.Virtual}
	if rp.Seconds > 0 && !r.Incomplete {
		rp.Speedup = rp.RecordedSeconds / rp.Seconds
	}
	for _, n := range t.Skipped.UnsupportedNames() {
		rp.Unsupported = append(rp.Unsupported, report.OpCount{Op: n, Count: t.Skipped.Unsupported[n]})
	}
	for i, c := range t.Classes {
		ok, failed := classOf(r, 2*i), classOf(r, 2*i+1)
		res.Phases = append(res.Phases, row(ok, "replay-"+c.Name, "  "+c.Name, c.Name))
		rp.Ops = append(rp.Ops, report.ReplayOp{Op: c.Name, Ops: ok.Ops, Bytes: ok.Bytes, Failed: failed.Ops,
			Errors: ok.Errors, Latency: ok.Hist.Summary(),
			Recorded: report.RecordedOps{Ops: c.Ops, Bytes: c.Bytes, Failed: c.Failed, Latency: c.Latency.Summary()}})
	}
	res.Replay = rp
}

// classOf is the measurement of one class of the replay, over the
// replay's time.
func classOf(r *engine.Result, i int) *engine.Result {
	out := &engine.Result{Workers: r.Workers, Elapsed: r.Elapsed, Hist: metrics.NewHistogram(), Incomplete: r.Incomplete}
	if i < len(r.Classes) {
		c := r.Classes[i]
		out.Ops, out.Items, out.Bytes, out.Errors = c.Ops, c.Ops, c.Bytes, c.Errors
		out.Hist.Merge(c.Hist)
	}
	return out
}

// row is one row of the table: operations per second, and the mean
// latency as the cost.
func row(r *engine.Result, name, title, of string) report.PhaseResult {
	r.Name, r.Title = name, title
	p := r.Report()
	p.Value = report.Measure{Value: p.OpsPerSec, Unit: report.UnitOpsPerSec}
	p.Cost = report.Measure{Value: p.Latency.Mean / 1000, Unit: report.UnitMsPerOp}
	p.LatencyOf = of
	return p
}

// Merge is the replay of a run on many hosts, each of which replayed
// part of the recording: each type of operation's counts and bytes summed
// over the hosts and its latency that of its merged row of res; the
// recording's figures from the whole logs (recorded: each as Load read
// it), the replay's time the longest host's, as they started together.
func Merge(res *report.Result, hosts []*report.Replay, recorded []*Trace, log string, speed float64) *report.Replay {
	rp := &report.Replay{Log: log, Speed: speed}
	rec := map[string]*Class{}
	var names []string
	for _, t := range recorded {
		rp.Format = t.Format
		rp.RecordedSeconds = max(rp.RecordedSeconds, t.Span.Seconds())
		rp.Lines += t.Skipped.Lines
		rp.Blank += t.Skipped.Blank
		rp.Malformed += t.Skipped.Malformed
		rp.Virtual += t.Skipped.Virtual
		for _, n := range t.Skipped.UnsupportedNames() {
			rp.Unsupported = addCount(rp.Unsupported, n, t.Skipped.Unsupported[n])
		}
		for _, c := range t.Classes {
			m, ok := rec[c.Name]
			if !ok {
				m = &Class{Name: c.Name, Latency: metrics.NewHistogram()}
				rec[c.Name], names = m, append(names, c.Name)
			}
			m.Ops, m.Bytes, m.Failed = m.Ops+c.Ops, m.Bytes+c.Bytes, m.Failed+c.Failed
			m.Latency.Merge(c.Latency)
		}
	}
	done := map[string]*report.ReplayOp{}
	var diffs differences
	for _, h := range hosts {
		rp.Streams += h.Streams
		rp.Prepared += h.Prepared
		rp.Emptied += h.Emptied
		rp.Seconds = max(rp.Seconds, h.Seconds)
		for _, d := range h.Differed {
			diffs.addN(d.Error, d.Count)
		}
		for _, o := range h.Ops {
			d, ok := done[o.Op]
			if !ok {
				d = &report.ReplayOp{Op: o.Op}
				done[o.Op] = d
			}
			d.Ops, d.Bytes, d.Failed, d.Errors = d.Ops+o.Ops, d.Bytes+o.Bytes, d.Failed+o.Failed, d.Errors+o.Errors
		}
	}
	if rp.Seconds > 0 && !res.Interrupted {
		rp.Speedup = rp.RecordedSeconds / rp.Seconds
	}
	rp.Differed = diffs.list()
	for _, n := range names {
		op := report.ReplayOp{Op: n}
		if d := done[n]; d != nil {
			op = *d
		}
		if p := res.FindPhase("replay-" + n); p != nil {
			op.Latency = p.Latency
		}
		c := rec[n]
		op.Recorded = report.RecordedOps{Ops: c.Ops, Bytes: c.Bytes, Failed: c.Failed, Latency: c.Latency.Summary()}
		rp.Ops = append(rp.Ops, op)
	}
	return rp
}

func addCount(list []report.OpCount, op string, n int64) []report.OpCount {
	for i := range list {
		if list[i].Op == op {
			list[i].Count += n
			return list
		}
	}
	return append(list, report.OpCount{Op: op, Count: n})
}
