package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/units"
)

// ANSI colours of the grades, as JuiceFS shows them.
const (
	ansiRed    = "\x1b[1;31m"
	ansiGreen  = "\x1b[1;32m"
	ansiYellow = "\x1b[1;33m"
	ansiReset  = "\x1b[0m"
)

func paint(o Options, g Grade, s string) string {
	if !o.Color {
		return s
	}
	switch g {
	case Good:
		return ansiGreen + s + ansiReset
	case Fair:
		return ansiYellow + s + ansiReset
	case Poor:
		return ansiRed + s + ansiReset
	}
	return s
}

// NewTable returns a table in the style of every fsbench report: ASCII
// borders, centred headers, no wrapping, per-column alignment.
func NewTable(w io.Writer, header []string, align []tw.Align) *tablewriter.Table {
	t := tablewriter.NewTable(w,
		tablewriter.WithRenderer(renderer.NewBlueprint(tw.Rendition{Symbols: tw.NewSymbols(tw.StyleASCII)})),
		tablewriter.WithConfig(tablewriter.Config{
			Header: tw.CellConfig{
				Alignment:  tw.CellAlignment{Global: tw.AlignCenter},
				Formatting: tw.CellFormatting{AutoFormat: tw.Off},
			},
			Row: tw.CellConfig{
				Alignment:  tw.CellAlignment{PerColumn: align},
				Formatting: tw.CellFormatting{AutoWrap: tw.WrapNone},
			},
		}),
	)
	t.Header(anySlice(header)...)
	return t
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

// FormatMeasure prints a value with the precision JuiceFS uses for its unit.
func FormatMeasure(m Measure) string {
	if m.Unit == UnitNotSupported {
		return string(m.Unit) // an item the storage cannot do (objbench: chmod on S3)
	}
	return strconv.FormatFloat(m.Value, 'f', m.Unit.decimals(), 64) + " " + string(m.Unit)
}

// WriteTable writes the human-readable report: a header, the functional
// checks (if any), the ITEM | VALUE | COST table with latency percentiles,
// and the expectations (if any).
func WriteTable(w io.Writer, r *Result, o Options) error {
	bw := &ErrWriter{W: w}
	if len(r.Checks) > 0 {
		if err := writeChecks(bw, r, o); err != nil {
			return err
		}
	}
	if len(r.Phases) > 0 {
		if err := writePhases(bw, r, o); err != nil {
			return err
		}
		writeTraining(bw, r.Training, o)
		writeIO500(bw, r.IO500)
		writeCapacity(bw, r.Capacity)
		if err := writeReplay(bw, r.Replay); err != nil {
			return err
		}
	} else {
		// A search whose objective held at no rate keeps no phase: its
		// answer, "none", is the result.
		writeCapacity(bw, r.Capacity)
	}
	if len(r.Expectations) > 0 {
		if err := writeExpectations(bw, r, o); err != nil {
			return err
		}
	}
	// Warnings are in the result for JSON; commands print them to stderr as
	// they happen, so the table does not repeat them on stdout.
	return bw.Err()
}

// maxCheckCell bounds a check's result in the table without -v; the whole
// reason is in -v and in JSON.
const maxCheckCell = 160

// writeChecks writes the table of functional checks.
func writeChecks(bw *ErrWriter, r *Result, o Options) error {
	var rows [][]string
	for _, c := range r.Checks {
		g := Good
		switch c.Status {
		case CheckFailed:
			g = Poor
		case CheckWarning, CheckNotSupport:
			g = Fair
		}
		res := c.Status
		if c.Reason != "" {
			res += ": " + c.Reason
		}
		if len(res) > maxCheckCell && !o.Verbose {
			res = res[:maxCheckCell] + "... (all of it with -v)"
		}
		rows = append(rows, []string{c.Category, c.Name, paint(o, g, res)})
	}
	return renderTable(bw, []string{"CATEGORY", "TEST", "RESULT"}, []tw.Align{tw.AlignRight, tw.AlignRight, tw.AlignLeft},
		rows, []int{0, 1, 2})
}

// writePhases writes the header lines and the ITEM | VALUE | COST table.
func writePhases(bw *ErrWriter, r *Result, o Options) error {
	switch {
	case r.Interrupted:
		fmt.Fprintln(bw, "Benchmark interrupted! Results so far:")
	case r.Error != "":
		fmt.Fprintln(bw, "Benchmark failed! Results so far:")
	default:
		fmt.Fprintln(bw, "Benchmark finished!")
	}
	if line := paramLine(r.Parameters); line != "" {
		fmt.Fprintln(bw, line)
	}
	fmt.Fprintf(bw, "Time used: %.1f s, CPU: %.1f%%, Memory: %.1f MiB\n",
		r.Usage.Seconds, r.Usage.CPUPercent, float64(r.Usage.PeakRSSBytes)/float64(units.MiB))
	if r.CacheDrop != "" {
		fmt.Fprintf(bw, "Cache drop: %s\n", r.CacheDrop)
	}
	header, align := phaseHeader(r, o)
	cells := phaseRows(r, o)
	if tableWidth(header, projectAll(header, cells)) > MaxColumns && meanIsCost(r) {
		// Every COST is its phase's mean latency: MEAN would repeat it.
		header, align = without(header, align, "MEAN")
	}
	rows := projectAll(header, cells)
	if len(unsupported(r)) < len(r.Phases) || len(r.Phases) == 0 || r.Internal != nil {
		// A table with no row at all is left out.
		wrap := make([]int, len(header))
		for i, h := range header {
			switch h {
			case "LATENCY OF":
				wrap[i] = 2
			case "ITEM", "RUNS: MIN-MAX":
				wrap[i] = 1
			}
		}
		if err := renderTable(bw, header, align, rows, wrap); err != nil {
			return err
		}
	}
	if line := repeatLine(r); line != "" {
		fmt.Fprintln(bw, line)
	}
	if line := notSupportedLine(r); line != "" {
		fmt.Fprintln(bw, line)
	}
	writeOrigins(bw, r)
	writeAccess(bw, r)
	if len(r.Hosts) > 0 {
		fmt.Fprintf(bw, "Aggregate of %s (first start to last end)", units.Count(len(r.Hosts), "host"))
		if !o.Verbose {
			fmt.Fprint(bw, "; per-host rows, start skew and stonewall rates with -v")
		}
		fmt.Fprintln(bw)
	}
	if in := r.Internal; in != nil {
		cpu, mem := "unknown", "unknown"
		if in.ClientCPUPercent != nil {
			cpu = strconv.FormatFloat(*in.ClientCPUPercent, 'f', 1, 64) + "%"
		}
		if in.ClientMemoryBytes != nil {
			mem = strconv.FormatFloat(float64(*in.ClientMemoryBytes)/float64(units.MiB), 'f', 1, 64) + " MiB"
		}
		fmt.Fprintf(bw, "%s client: CPU: %s, Memory: %s\n", in.Source, cpu, mem)
	}
	if o.Verbose {
		writeFioSummaries(bw, r)
	}
	return nil
}

// phaseRows are the rows of the table of phases, by column: each phase
// (but those the storage cannot do, named under the table) with, in -v,
// its hosts and ranks, and its endpoints; then the storage client's own
// counters.
func phaseRows(r *Result, o Options) []row {
	var rows []row
	for _, p := range r.Phases {
		if p.Value.Unit == UnitNotSupported {
			continue
		}
		cells := phaseCells(&p, o, showTTFB(r))
		if len(r.Runs) > 0 {
			cells["RUNS: MIN-MAX"] = spreadCell(&p, o)
		}
		rows = append(rows, cells)
		if o.Verbose {
			rows = append(rows, hostRows(&p)...)
			rows = append(rows, rankRows(&p)...)
		}
		rows = append(rows, endpointRows(&p)...)
	}
	return append(rows, internalRows(r, o)...)
}

// meanIsCost reports whether every measured phase's COST is its mean
// latency: a time per operation, or per file or object where one
// operation is one of them.
func meanIsCost(r *Result) bool {
	for i := range r.Phases {
		p := &r.Phases[i]
		if p.Ops == 0 || p.Value.Unit == UnitNotSupported {
			continue
		}
		switch p.Cost.Unit {
		case UnitMsPerOp, UnitMsPerList:
		case UnitMsPerFile, UnitMsPerObject, UnitSecondsPerFile:
			if p.Ops != p.Items {
				return false
			}
		default:
			return false
		}
	}
	return r.Internal == nil
}

// without is header and align without the column named name.
func without(header []string, align []tw.Align, name string) ([]string, []tw.Align) {
	var h []string
	var a []tw.Align
	for i := range header {
		if header[i] != name {
			h, a = append(h, header[i]), append(a, align[i])
		}
	}
	return h, a
}

func projectAll(header []string, rows []row) [][]string {
	out := make([][]string, len(rows))
	for i, r := range rows {
		out[i] = project(header, r)
	}
	return out
}

// internalRows are the table's rows of the storage client's own counters
// (JuiceFS's .stats).
func internalRows(r *Result, o Options) []row {
	if r.Internal == nil {
		return nil
	}
	var out []row
	for _, ir := range r.Internal.Rows {
		value, cost := "unknown", "unknown"
		if !ir.Unknown {
			value = strconv.FormatInt(ir.Count, 10) + " operations"
			cost = paint(o, ir.Grade, strconv.FormatFloat(ir.AvgMs, 'f', 2, 64)+" ms/op")
		}
		out = append(out, row{"ITEM": ir.Name, "VALUE": value, "COST": cost})
	}
	return out
}

// row is one row of the table of phases, by column; project lays it out
// in the columns of a header, leaving the others blank.
type row map[string]string

func project(header []string, r row) []string {
	out := make([]string, len(header))
	for i, h := range header {
		out[i] = r[h]
	}
	return out
}

// writeExpectations writes the table of expectations.
func writeExpectations(bw *ErrWriter, r *Result, o Options) error {
	var rows [][]string
	for _, e := range r.Expectations {
		res, g := "PASS", Good
		switch e.Outcome() {
		case VerdictTooShort:
			res, g = "TOO SHORT TO JUDGE", Fair
		case VerdictFail:
			res, g = "FAIL", Poor
		}
		if g != Good && e.Reason != "" {
			res += ": " + e.Reason
		}
		rows = append(rows, []string{e.Expr, strconv.FormatFloat(e.Measured, 'f', -1, 64) + " " + e.Unit, paint(o, g, res)})
	}
	return renderTable(bw, []string{"EXPECTATION", "MEASURED", "RESULT"}, []tw.Align{tw.AlignLeft, tw.AlignRight, tw.AlignLeft},
		rows, []int{1, 0, 2})
}

// showTTFB reports whether the table shows the time to first byte: for
// objbench's workloads (--workload), whose reads record it.
func showTTFB(r *Result) bool {
	if r.Parameters.Get("workload") == nil {
		return false
	}
	for _, p := range r.Phases {
		if p.TTFB != nil {
			return true
		}
	}
	return false
}

// phaseHeader is the header of the table of phases, and its alignment.
// IOPS is shown when a phase moves data in transfers under 64 KiB. -v
// adds rows (hosts, ranks) and, under the table, each phase's operations,
// errors and percentiles (P90, P99.9 and more) as fio prints them.
func phaseHeader(r *Result, o Options) ([]string, []tw.Align) {
	header := []string{"ITEM", "VALUE"}
	if showIOPS(r) {
		header = append(header, "IOPS")
	}
	header = append(header, "COST", "MEAN", "P50", "P99", "MAX", "LATENCY OF")
	if showTTFB(r) {
		header = append(header, "TTFB P50", "TTFB P99")
	}
	if len(r.Runs) > 0 {
		header = append(header, "RUNS: MIN-MAX")
	}
	align := make([]tw.Align, len(header))
	for i, h := range header {
		align[i] = tw.AlignRight
		if h == "LATENCY OF" {
			align[i] = tw.AlignLeft
		}
	}
	return header, align
}

// smallIO is the largest mean transfer of a phase whose table row shows
// IOPS beside its bandwidth: below it, operations per second are the
// figure a reader of fio's output looks for.
const smallIO = 64 << 10

// iops is the operations per second of a phase that moves data in
// transfers under smallIO; ok is false for other phases.
func iops(p *PhaseResult) (float64, bool) {
	switch p.Value.Unit {
	case UnitMiBPerSec, UnitGiBPerSec:
	default:
		return 0, false
	}
	if p.Ops <= 0 || p.Bytes <= 0 || p.Bytes/p.Ops >= smallIO {
		return 0, false
	}
	return p.OpsPerSec, true
}

// showIOPS reports whether a phase of r shows IOPS.
func showIOPS(r *Result) bool {
	for i := range r.Phases {
		if _, ok := iops(&r.Phases[i]); ok {
			return true
		}
	}
	return false
}

// formatIOPS prints operations per second as the IOPS column shows them.
func formatIOPS(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// spreadCell is a repeated phase's range of VALUE over its runs, with the
// median's interval where the runs are enough for one (-v).
func spreadCell(p *PhaseResult, o Options) string {
	s := p.Spread
	if s == nil {
		return ""
	}
	f := func(v float64) string { return FormatMeasure(Measure{Value: v, Unit: p.Value.Unit}) }
	num := func(v float64) string { return strings.Fields(f(v))[0] }
	out := fmt.Sprintf("%d: %s-%s", s.Runs, num(s.Min), f(s.Max))
	if o.Verbose && s.Low != nil && s.High != nil {
		out += fmt.Sprintf(" (%.0f%% CI %s-%s)", s.Confidence*100, num(*s.Low), num(*s.High))
	}
	return out
}

// phaseCells is the table's row of a phase.
func phaseCells(p *PhaseResult, o Options, ttfb bool) row {
	l := p.Latency
	lat := func(s metrics.Summary, v float64) string {
		if s.Count == 0 {
			return "-"
		}
		return units.FormatLatency(v)
	}
	title := p.Title
	if p.Incomplete {
		title += " (incomplete)"
	}
	value := paint(o, p.Value.Grade, FormatMeasure(p.Value))
	cost := paint(o, p.Cost.Grade, FormatMeasure(p.Cost))
	if p.Incomplete && p.Ops == 0 {
		// Stopped before its first operation: a rate of 0.00 would read
		// as a measurement.
		title, value, cost = p.Title+" (not run)", "-", "-"
	}
	if p.Errors > 0 {
		title += fmt.Sprintf(" [%d errors]", p.Errors)
	}
	cells := row{"ITEM": title, "VALUE": value, "COST": cost, "MEAN": lat(l, l.Mean),
		"P50": lat(l, l.P50), "P99": lat(l, l.P99), "MAX": lat(l, l.Max), "LATENCY OF": p.LatencyOf}
	if v, ok := iops(p); ok && p.Ops > 0 {
		cells["IOPS"] = formatIOPS(v)
	}
	if ttfb {
		var f metrics.Summary
		if p.TTFB != nil {
			f = *p.TTFB
		}
		cells["TTFB P50"], cells["TTFB P99"] = lat(f, f.P50), lat(f, f.P99)
	}
	return cells
}

// repeatLine explains the table of a repeated benchmark.
func repeatLine(r *Result) string {
	if len(r.Runs) == 0 {
		return ""
	}
	return fmt.Sprintf("VALUE and COST are medians of %d runs; latency percentiles are over every run's operations", len(r.Runs))
}

func paramLine(p Params) string {
	parts := make([]string, 0, len(p))
	for _, x := range p {
		if x.Label == "" {
			continue
		}
		d := x.Display
		if d == "" {
			d = fmt.Sprint(x.Value)
		}
		parts = append(parts, x.Label+": "+d)
	}
	return strings.Join(parts, ", ")
}

// ErrWriter remembers the first write error so a long report is not
// checked line by line; Err returns it.
type ErrWriter struct {
	W   io.Writer
	err error
}

// Err is the first error a write returned.
func (e *ErrWriter) Err() error { return e.err }

func (e *ErrWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.W.Write(p)
	e.err = err
	return n, err
}

// hostRows are the verbose table's rows under a phase run on many hosts:
// each host's own figures, then the start skew and the stonewall rate.
func hostRows(p *PhaseResult) []row {
	if len(p.Hosts) == 0 {
		return nil
	}
	var rows []row
	for _, h := range p.Hosts {
		v := Measure{Unit: p.Value.Unit, Value: h.OpsPerSec}
		if r, ok := v.Unit.Rate(h.Bytes, h.Items, h.Ops, h.Seconds); ok {
			v.Value = r
		}
		l := h.Latency
		rows = append(rows, row{"ITEM": "  " + h.Address, "VALUE": FormatMeasure(v), "COST": fmt.Sprintf("+%.0f ms", h.StartOffset*1000),
			"MEAN": units.FormatLatency(l.Mean), "P50": units.FormatLatency(l.P50), "P99": units.FormatLatency(l.P99),
			"MAX": units.FormatLatency(l.Max), "LATENCY OF": "host (start offset): " + opsText(h.Ops, h.Errors)})
	}
	if sw := p.Stonewall; sw != nil {
		// A stonewall counts no items: its operations stand for them.
		v := Measure{Unit: p.Value.Unit, Value: sw.OpsPerSec}
		if r, ok := v.Unit.Rate(sw.Bytes, sw.Ops, sw.Ops, sw.Seconds); ok {
			v.Value = r
		}
		rows = append(rows, row{"ITEM": "  stonewall", "VALUE": FormatMeasure(v), "COST": fmt.Sprintf("skew %.0f ms", p.StartSkew*1000),
			"LATENCY OF": fmt.Sprintf("while all hosts ran (%.2f s): %s", sw.Seconds, opsText(sw.Ops, 0))})
	}
	return rows
}

// rankRows are the verbose table's rows under a checkpoint phase: each
// rank's throughput and time, and whose shard it wrote or read.
func rankRows(p *PhaseResult) []row {
	var rows []row
	for _, r := range p.Ranks {
		item := fmt.Sprintf("  rank %d", r.Rank)
		if r.Host != "" {
			item += " (" + r.Host + ")"
		}
		what := "own shard"
		if r.Shard != r.Rank {
			what = fmt.Sprintf("shard of rank %d", r.Shard)
		}
		if r.Incomplete {
			what += " (incomplete)"
		}
		if r.Errors > 0 {
			what += ", " + count(r.Errors, "error")
		}
		v := Measure{Value: r.BytesPerSec / float64(units.MiB), Unit: UnitMiBPerSec}
		rows = append(rows, row{"ITEM": item, "VALUE": FormatMeasure(v), "COST": fmt.Sprintf("%.2f s", r.Seconds),
			"LATENCY OF": what})
	}
	return rows
}

// opsText counts operations and, if any, errors.
func opsText(ops, errors int64) string {
	s := count(ops, "op")
	if errors > 0 {
		s += ", " + count(errors, "error")
	}
	return s
}
