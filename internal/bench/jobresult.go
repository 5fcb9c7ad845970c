package bench

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// jobPhase turns a workload phase's measurement into the result model:
// MiB/s for reads and writes, operations per second for the others, and
// the mean latency per operation as the cost.
func jobPhase(r *workload.Result, wp *workload.FilePhase, p *jobfile.PhaseSpec, fileSize int64) report.PhaseResult {
	out := r.Report()
	kind := wp.Kind
	switch {
	case kind.IsData():
		out.Value = out.ThroughputValue()
	case kind == workload.Create:
		out.Value = report.Measure{Value: out.ItemsPerSec, Unit: report.UnitFilesPerSec}
	default:
		out.Value = report.Measure{Value: out.OpsPerSec, Unit: report.UnitOpsPerSec}
	}
	out.Cost = report.Measure{Value: out.Latency.Mean / 1e3, Unit: report.UnitMsPerOp}
	out.LatencyOf = latencyOf(*wp, p, fileSize)
	if s := out.ServiceTime; s != nil {
		out.LatencyOf += fmt.Sprintf(", response time (service time p50 %s, p99 %s)", units.FormatLatency(s.P50), units.FormatLatency(s.P99))
	}
	return out
}

func latencyOf(wp workload.FilePhase, p *jobfile.PhaseSpec, fileSize int64) string {
	s := phaseOp(wp, fileSize)
	if wp.IOEngine == workload.IOUring && wp.Kind.IsData() {
		s += fmt.Sprintf(", io_uring at depth %d (submission to completion)", max(wp.IODepth, 1))
	}
	return s
}

func phaseOp(wp workload.FilePhase, fileSize int64) string {
	xfer := units.FormatBytes(wp.BlockSize)
	switch wp.Kind {
	case workload.Read, workload.Write:
		return fmt.Sprintf("%s %s %s", xfer, access(wp), wp.Kind)
	case workload.Mixed:
		return fmt.Sprintf("%s %s read/write (%d%% reads)", xfer, access(wp), wp.ReadPct)
	case workload.Create:
		if fileSize == 0 {
			return "create+close"
		}
		return fmt.Sprintf("create %s file (open to close)", units.FormatBytes(fileSize))
	case workload.Open:
		return "open+close"
	case workload.Readdir:
		return "readdir (open, read all, close)"
	}
	return wp.Kind.String()
}

// SummaryLine is a one-line account of a workload phase: IOPS, bandwidth
// and latency, as the interval lines show them.
func SummaryLine(p *report.PhaseResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %.1f ops/s", p.Name, p.OpsPerSec)
	if p.Bytes > 0 {
		fmt.Fprintf(&b, ", %.2f MiB/s", p.BytesPerSec/float64(units.MiB))
	}
	fmt.Fprintf(&b, ", latency mean %s p50 %s p99 %s max %s",
		units.FormatLatency(p.Latency.Mean), units.FormatLatency(p.Latency.P50), units.FormatLatency(p.Latency.P99), units.FormatLatency(p.Latency.Max))
	if s := p.ServiceTime; s != nil {
		fmt.Fprintf(&b, "; service time mean %s p99 %s", units.FormatLatency(s.Mean), units.FormatLatency(s.P99))
	}
	if p.Errors > 0 {
		fmt.Fprintf(&b, "; %d errors", p.Errors)
	}
	return b.String()
}

// IntervalLine is one line of --interval output.
func IntervalLine(name string, s report.Sample) string {
	return fmt.Sprintf("%-14s %7.1fs %10.1f ops/s %9.2f MiB/s  p50 %-7s p99 %-7s max %s",
		name, s.Start+s.Seconds, s.OpsPerSec, s.BytesPerSec/float64(units.MiB),
		units.FormatLatency(s.Latency.P50), units.FormatLatency(s.Latency.P99), units.FormatLatency(s.Latency.Max))
}

func (r *jobRun) params() report.Params {
	o, j := r.o, r.j
	name := j.Name
	if name == "" {
		name = "ad hoc"
	}
	ps := report.Params{
		{Key: "workload", Label: "Workload", Value: name, Display: name},
		{Key: "threads", Label: "NumThreads", Value: o.Threads, Display: strconv.Itoa(o.Threads)},
	}
	if j.File != "" {
		ps = append(ps, report.Param{Key: "workload_file", Value: j.File, Display: j.File})
	}
	if t := j.Tree; t != nil {
		d := fmt.Sprintf("depth %d, width %d, %d files of %s per directory (%d files)", t.Depth, t.Width, t.Files, units.FormatBytes(t.FileSize), t.NumFiles())
		if r.reusable {
			d += " in " + r.treeName
			if r.tree.Complete() {
				d += ", reused"
			}
		}
		ps = append(ps, report.Param{Key: "tree", Label: "Tree", Value: map[string]any{
			"depth": t.Depth, "width": t.Width, "files": t.Files, "file_size": t.FileSize, "dir": cmp.Or(r.treeName, r.tree.Root), "reused": r.reusable && r.tree.Complete(),
		}, Display: d})
	}
	if rate := oneRate(j); rate > 0 {
		ps = append(ps, report.Param{Key: "rate", Label: "Rate", Value: rate, Display: strconv.FormatFloat(rate, 'g', -1, 64) + "/s"})
	}
	ps = append(ps,
		report.Switch("direct", "Direct", o.Direct),
		report.Switch("fsync", "Fsync", o.Fsync),
		report.Switch("verify", "Verify", o.Verify),
	)
	return append(ps, report.DataParams(o.Data.Compress, o.Data.Dedupe)...)
}

// oneRate is the open loop's rate of j's paced phases when they all have
// the same one (--rate), else 0.
func oneRate(j *jobfile.Job) float64 {
	rate := 0.0
	for _, p := range j.Phases {
		switch {
		case p.Rate == 0:
		case rate == 0:
			rate = p.Rate
		case p.Rate != rate:
			return 0
		}
	}
	return rate
}

// access names the order of a phase's blocks, with its distribution.
func access(wp workload.FilePhase) string {
	if wp.Access == workload.Random && !wp.Skew.IsUniform() {
		return "random (" + wp.Skew.String() + ")"
	}
	return wp.Access.String()
}
