package objbench

import (
	"fmt"
	"strings"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

// rowSpec is one row of a workload's result: the whole phase, one
// operation of a mix, or one size class. A workload's phase records each
// operation in class op*len(size classes)+size (op is 0 but in a mix).
type rowSpec struct {
	name, title string
	op, size    int  // the class's operation and size; -1: all
	bytes       bool // the row may move data
}

// RowMetric is the stable name of one row a workload's result will have,
// for --expect; Bytes is set when it moves data.
type RowMetric struct {
	Name  string
	Bytes bool
}

// WorkloadMetrics lists the rows o's workload will have.
func WorkloadMetrics(o Options) []RowMetric {
	var out []RowMetric
	for _, s := range o.rowSpecs() {
		out = append(out, RowMetric{s.name, s.bytes})
	}
	return out
}

// rowSpecs are the rows of o's workload: the phase, then each operation of
// a mix, then each size class when there are more than one.
func (o *Options) rowSpecs() []rowSpec {
	wl := o.Workload
	data := wl == "get" || wl == "put" || wl == "mixed"
	title := wl + " objects"
	if wl == "mixed" {
		title = "mixed operations"
	}
	specs := []rowSpec{{name: wl, title: title, op: -1, size: -1, bytes: data}}
	if wl == "mixed" {
		for op, w := range o.Mix {
			if w > 0 {
				specs = append(specs, rowSpec{name: wl + "-" + opNames[op], title: "  " + opNames[op],
					op: op, size: -1, bytes: op == opGet || op == opPut})
			}
		}
	}
	if classes := o.Sizes.Classes(); len(classes) > 1 && wl != "list" {
		for i, c := range classes {
			name := wl + "-" + strings.ToLower(strings.ReplaceAll(c, " ", ""))
			specs = append(specs, rowSpec{name: name, title: "  " + c, op: -1, size: i, bytes: data})
		}
	}
	return specs
}

// classRows are the rows of a workload's measurement, as rowSpecs says.
func (r *run) classRows(res *engine.Result) []report.PhaseResult {
	nsz := len(r.o.Sizes.Classes())
	var rows []report.PhaseResult
	for _, spec := range r.o.rowSpecs() {
		part := res
		if spec.op >= 0 || spec.size >= 0 {
			part = subResult(res, nsz, spec.op, spec.size)
		}
		row := r.phaseRow(spec.name, spec.title, part)
		if part != res {
			// A class shares the phase's time with the others: its cost
			// is its own mean latency.
			row.Cost.Value = row.Latency.Mean / 1000
		}
		row.LatencyOf = r.latencyOf(spec, part, res)
		rows = append(rows, row)
	}
	return rows
}

// subResult merges the classes of res that belong to op and size (-1:
// any) into a measurement of its own, over the phase's time.
func subResult(res *engine.Result, nsz, op, size int) *engine.Result {
	out := &engine.Result{Workers: res.Workers, Elapsed: res.Elapsed, Hist: metrics.NewHistogram(), Incomplete: res.Incomplete}
	for i, c := range res.Classes {
		if op >= 0 && i/nsz != op || size >= 0 && i%nsz != size {
			continue
		}
		out.Ops += c.Ops
		out.Items += c.Ops
		out.Bytes += c.Bytes
		out.Errors += c.Errors
		out.Hist.Merge(c.Hist)
		if c.TTFB != nil {
			if out.TTFB == nil {
				out.TTFB = metrics.NewHistogram()
			}
			out.TTFB.Merge(c.TTFB)
		}
	}
	return out
}

// latencyOf says what a row's latency times: the operation and the
// objects, and for a mix's operation its realised share of the
// operations.
func (r *run) latencyOf(spec rowSpec, part, all *engine.Result) string {
	o := r.o
	what := o.Workload
	if spec.op >= 0 {
		share := 0.0
		if n := all.Ops + all.Errors; n > 0 {
			share = 100 * float64(part.Ops+part.Errors) / float64(n)
		}
		return fmt.Sprintf("%s, %.1f%% of operations", opNames[spec.op], share)
	}
	if spec.size >= 0 {
		return what + " of " + o.Sizes.Classes()[spec.size]
	}
	if o.Range > 0 && (what == "get" || what == "mixed") {
		return what + ", " + compactSize(o.Range) + " ranges of " + o.Sizes.String()
	}
	if what == "mixed" {
		return "one operation of the mix, " + o.Sizes.String()
	}
	return what + " of " + o.Sizes.String()
}

// proportions is the line that shows a mix's realised proportions.
func proportions(rows []report.PhaseResult) string {
	var parts []string
	for _, p := range rows {
		if op, ok := strings.CutPrefix(p.Name, "mixed-"); ok && opIndex(op) >= 0 {
			_, share, _ := strings.Cut(p.LatencyOf, ", ")
			parts = append(parts, op+" "+strings.TrimSuffix(share, " of operations"))
		}
	}
	return "mixed: realised proportions: " + strings.Join(parts, ", ")
}
