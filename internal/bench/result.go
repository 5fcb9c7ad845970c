package bench

import (
	"fmt"

	"github.com/fsbench/fsbench/internal/juicefs"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// Threshold holds JuiceFS bench's colour ranges for one item.
type Threshold = report.Ranges

// Thresholds are JuiceFS's, for one thread and 1 GiB big files.
var Thresholds = map[string]Threshold{
	"write-big":   {Fair: 100, Good: 200, CostGood: 10, CostFair: 50},
	"read-big":    {Fair: 100, Good: 200, CostGood: 10, CostFair: 50},
	"write-small": {Fair: 12.5, Good: 20, CostGood: 50, CostFair: 80},
	"read-small":  {Fair: 50, Good: 100, CostGood: 10, CostFair: 20},
	"stat":        {Fair: 20, Good: 1000, CostGood: 1, CostFair: 5},
}

// ThresholdFor scales the ranges as JuiceFS does: small-file and stat rates
// grow with the thread count. The big-file cost (seconds per file) scales
// with the big file's size, so a smaller file is not graded as faster
// storage.
func ThresholdFor(name string, threads int, bigFileSize int64) (Threshold, bool) {
	t, ok := Thresholds[name]
	if !ok {
		return t, false
	}
	switch name {
	case "write-small", "read-small", "stat":
		t.Fair *= float64(threads)
		t.Good *= float64(threads)
	case "write-big", "read-big":
		f := float64(bigFileSize) / float64(units.GiB)
		t.CostGood *= f
		t.CostFair *= f
	}
	return t, true
}

// toPhase turns the engine's raw measurement into the result model with
// JuiceFS's value and cost: MiB/s and s/file for big files, files/s and
// ms/file for small files and stat. Cost is the mean time one thread spent
// per file, by the latencies of its operations (report's PerUnit).
func toPhase(r *workload.Result, wp *workload.FilePhase, o Options) report.PhaseResult {
	p := r.Report()
	perFile := p.PerUnit(r.Items)
	switch wp.Name {
	case "write-big", "read-big", ExistingBig:
		p.Value = p.ThroughputValue()
		p.Cost = report.Measure{Value: perFile, Unit: report.UnitSecondsPerFile}
	default:
		p.Value = report.Measure{Value: p.ItemsPerSec, Unit: report.UnitFilesPerSec}
		p.Cost = report.Measure{Value: perFile * 1000, Unit: report.UnitMsPerFile}
	}
	switch {
	case wp.Kind == workload.Stat:
		p.LatencyOf = "stat"
	case wp.PerFile && wp.Targets.Sizes != nil:
		p.LatencyOf = fmt.Sprintf("file of up to %s (open to close)", units.FormatBytes(wp.BlockSize))
	case wp.PerFile:
		p.LatencyOf = fmt.Sprintf("%s file (open to close)", units.FormatBytes(wp.FileSize))
	case wp.Kind == workload.Create:
		p.LatencyOf = units.FormatBytes(wp.BlockSize) + " write"
	case wp.Kind == workload.Read:
		p.LatencyOf = units.FormatBytes(wp.BlockSize) + " read"
	}
	if t, ok := ThresholdFor(wp.Name, o.Threads, o.BigFileSize); ok && !p.Incomplete {
		t.Grade(&p)
	}
	return p
}

// jfsInternal is the JuiceFS section of a run from the client's counters
// read before and after it. Rates, such as the client's CPU, are over the
// time the phases ran: the cache drops and set-up between them are not
// part of what was measured.
func jfsInternal(before, after juicefs.Stats, phases []report.PhaseResult) *report.Internal {
	seconds := 0.0
	for _, p := range phases {
		seconds += p.Seconds
	}
	return juicefs.Delta(before, after, seconds)
}
