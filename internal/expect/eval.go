package expect

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/verdict"
)

// Metric is a stable metric name of a command: the name of one of its
// phases (report.PhaseResult.Name).
type Metric struct {
	Name string
	// Bytes is set when the phase moves data, so a throughput in bytes
	// (MiB/s) fits it; every phase has a rate of items and of operations.
	Bytes bool
}

// Catalog is the set of metrics one command measures.
type Catalog struct {
	Command string
	Metrics []Metric
	// Functional is set when the command runs functional checks.
	Functional bool
}

// Bench is what `fsbench bench` measures.
var Bench = Catalog{
	Command: "bench",
	Metrics: []Metric{
		{"write-big", true}, {"read-big", true}, {"write-small", true}, {"read-small", true}, {"stat", false},
		{"read-existing-small", true}, {"read-existing-big", true},
	},
}

// Objbench is what `fsbench objbench` measures.
var Objbench = Catalog{
	Command: "objbench",
	Metrics: []Metric{
		{"upload", true}, {"download", true}, {"put-small", true}, {"get-small", true},
		{"list", false}, {"head", false}, {"delete", false},
		{"chmod", false}, {"chown", false}, {"chtimes", false},
	},
	Functional: true,
}

// Checkpoint is what `fsbench checkpoint` measures.
var Checkpoint = Catalog{
	Command: "checkpoint",
	Metrics: []Metric{{"write", true}, {"read", true}, {"seq-write", true}},
}

// Names lists the metric names of c.
func (c Catalog) Names() []string {
	out := make([]string, len(c.Metrics))
	for i, m := range c.Metrics {
		out[i] = m.Name
	}
	return out
}

func (c Catalog) find(name string) (Metric, bool) {
	for _, m := range c.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return Metric{}, false
}

// Check tells whether e can be measured by c's command: a known metric with
// a unit that fits it.
func (c Catalog) Check(e Expr) error {
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w %q: %s", ErrSyntax, e.Text, fmt.Sprintf(format, args...))
	}
	switch e.Name {
	case Errors:
		if e.Unit.Name != "" {
			return fail("errors is a count and takes no unit (e.g. errors==0)")
		}
		return nil
	case Functional:
		if !c.Functional {
			return fail("%s runs no functional checks", c.Command)
		}
		return nil
	case Capacity:
		samples := c.Command == "train" && e.Unit.Name == "samples/s" // train's rates are of samples
		if e.Stat != "" || e.Unit.Dim != OpRate && e.Unit.Dim != ByteRate && !samples || e.Unit.Name == "" {
			if c.Command == "train" {
				return fail("capacity is a rate: write e.g. capacity>=5000samples/s or capacity>=20MiB/s")
			}
			return fail("capacity is a rate: write e.g. capacity>=5000ops/s or capacity>=20MiB/s")
		}
		return nil
	}
	m, ok := c.find(e.Name)
	if i := strings.LastIndexByte(e.Name, '.'); !ok && i > 0 {
		if _, known := c.find(e.Name[:i]); known {
			return fail("unknown suffix .%s (want .p50, .p90, .p99, .p999, .max, .errors or .from_storage)", e.Name[i+1:])
		}
	}
	if !ok {
		return fail("%s measures no metric %q (known: %s, errors%s)", c.Command, e.Name,
			strings.Join(c.Names(), ", "), map[bool]string{true: ", functional"}[c.Functional])
	}
	d := e.Dim()
	switch e.Stat {
	case VsHistory:
		return nil
	case Errors:
		if d != Count {
			return fail("%s is a count and takes no unit (e.g. %s==0)", e.Metric, e.Metric)
		}
	case FromStorage:
		switch {
		case d != Percent:
			return fail("%s is a percentage (e.g. %s>=95%%)", e.Metric, e.Metric)
		case !m.Bytes:
			return fail("%s reads no data: from_storage applies to phases that read", e.Name)
		}
	case "":
		switch {
		case d == Percent:
			return fail("a percentage needs a suffix: %s.from_storage%s%g%%", e.Name, e.Op, e.Value)
		case d == Count:
			return fail("a throughput needs a unit, e.g. %s>=%s", e.Name, example(m))
		case d == Latency:
			return fail("%s is a throughput; a latency needs a suffix, e.g. %s.p99<%g%s", e.Name, e.Name, e.Value, e.Unit.Name)
		case d == ByteRate && !m.Bytes:
			return fail("%s moves no data: use files/s, objects/s or ops/s, not %s", e.Name, e.Unit.Name)
		}
	default:
		if d != Latency {
			return fail("%s is a latency: use us, ms or s (e.g. %s<5ms)", e.Metric, e.Metric)
		}
	}
	return nil
}

func example(m Metric) string {
	if m.Bytes {
		return "100MiB/s"
	}
	return "100ops/s"
}

// Eval measures e against res. A figure the run holds too few samples,
// operations or runs to decide is too short to judge, as verdict rules
// (see verdict.Throughput and verdict.Percentile): that is no failure.
// Counts (errors, functional checks) and a maximum latency are facts and
// always judged.
func Eval(e Expr, res *report.Result) report.Expectation {
	x := report.Expectation{Expr: e.Text, Metric: e.Metric, Op: string(e.Op), Want: e.Value, Unit: e.Unit.Name}
	if x.Expr == "" {
		x.Expr = e.String()
	}
	fails := func(reason string) report.Expectation {
		x.Pass, x.Verdict, x.Reason = false, report.VerdictFail, reason
		return x
	}
	switch e.Name {
	case Errors:
		x.Unit = "errors"
		return judgeFact(x, e.Op, float64(res.TotalErrors()), false)
	case Functional:
		x.Op, x.Want, x.Unit = string(EQ), 0, "failed checks"
		if len(res.Checks) == 0 {
			return fails("no functional checks were run")
		}
		failed := failedChecks(res, func(c report.Check) string { return c.Name })
		x.Measured = float64(len(failed))
		if len(failed) > 0 {
			return fails("failed: " + strings.Join(failed, ", "))
		}
		x.Pass, x.Verdict = true, report.VerdictPass
		return x
	}
	if e.Name == Capacity {
		return evalCapacity(x, e, res.Capacity)
	}
	p := res.FindPhase(e.Name)
	switch {
	case p == nil:
		return fails(e.Name + " was not measured in this run")
	case p.Value.Unit == report.UnitNotSupported:
		return fails(e.Name + " is not supported by this storage")
	case e.Stat == Errors:
		x.Unit = "errors"
		return judgeFact(x, e.Op, float64(p.Errors), p.Incomplete)
	case e.Stat == FromStorage:
		return judgeOrigin(x, e, p)
	case e.Stat == "":
		return evalRate(x, e, p, res.Runs)
	case p.Latency.Count == 0:
		return fails(e.Name + " has no latency samples")
	}
	l := p.Latency
	v := e.scale(map[string]float64{"p50": l.P50, "p90": l.P90, "p99": l.P99, "p999": l.P999, "max": l.Max}[e.Stat])
	lo, hi := math.NaN(), math.NaN()
	if !verdict.Judgeable(e.Stat, l.Count) && p.Histogram != "" {
		lo, hi = e.bounds(p.Histogram)
	}
	return judge(x, e.Op, v, p.Incomplete, verdict.Percentile(e.Stat, l.Count, v, lo, hi, e.holds))
}

// bounds is the interval of e's percentile (verdict.QuantileBounds) from
// the phase's encoded histogram, in e's unit; NaN when it does not decode.
func (e Expr) bounds(hist string) (lo, hi float64) {
	h, err := metrics.Decode(hist)
	if err != nil {
		return math.NaN(), math.NaN()
	}
	l, u := verdict.QuantileBounds(h, verdict.Quantile(e.Stat))
	lo, hi = e.scale(float64(l)/1e3), math.Inf(1)
	if u < time.Duration(math.MaxInt64) {
		hi = e.scale(float64(u) / 1e3)
	}
	return lo, hi
}

// evalCapacity judges capacity: the answer of a search, a fact of the
// run (each rate it tried already had samples enough for the objective).
// A run without an answer fails it.
func evalCapacity(x report.Expectation, e Expr, c *report.Capacity) report.Expectation {
	if c == nil || c.Answer == nil {
		x.Pass, x.Verdict = false, report.VerdictFail
		x.Reason = "capacity was not measured: it is the answer of --slo"
		return x
	}
	v := c.Answer.OpsPerSec
	if e.Unit.Dim == ByteRate {
		v = c.Answer.BytesPerSec
	}
	return judgeFact(x, e.Op, e.scale(v), false)
}

// judgeOrigin judges NAME.from_storage. A phase whose origin is unknown
// fails it, saying why: a CI check must not pass on what was not measured.
func judgeOrigin(x report.Expectation, e Expr, p *report.PhaseResult) report.Expectation {
	o := p.Origin
	switch {
	case o == nil:
		x.Pass, x.Verdict = false, report.VerdictFail
		x.Reason = e.Name + ": where its bytes came from was not measured (from_storage applies to phases that read files)"
		return x
	case o.FromStorage == nil:
		x.Pass, x.Verdict = false, report.VerdictFail
		x.Reason = e.Name + ": from storage unknown: " + o.Unknown
		return x
	}
	// A share of bytes counted over the whole phase: a fact, not an
	// estimate from samples.
	return judgeFact(x, e.Op, *o.FromStorage, p.Incomplete)
}

// holds reports whether the bound of e holds for v, in e's unit.
func (e Expr) holds(v float64) bool { return e.Op.Holds(v, e.Value) }

// scale converts v from the base unit of its dimension to e's unit.
func (e Expr) scale(v float64) float64 {
	if e.Unit.Factor > 0 {
		return v / e.Unit.Factor
	}
	return v
}

// evalRate judges a throughput of phase p, over the runs of a repeated
// benchmark when there are several (their median, p's value).
func evalRate(x report.Expectation, e Expr, p *report.PhaseResult, runs []report.Run) report.Expectation {
	rate := func(p *report.PhaseResult) float64 {
		switch e.Unit.Dim {
		case ByteRate:
			return e.scale(p.BytesPerSec)
		case ItemRate:
			return e.scale(p.ItemsPerSec)
		}
		return e.scale(p.OpsPerSec)
	}
	var values []float64
	for i := range runs {
		if q := runs[i].FindPhase(p.Name); q != nil {
			values = append(values, rate(q))
		}
	}
	if len(values) < 2 {
		values = []float64{rate(p)}
	}
	return judge(x, e.Op, rate(p), p.Incomplete, verdict.Throughput(values, p.Ops, e.holds))
}

// judgeFact judges a count, which needs no samples.
func judgeFact(x report.Expectation, op Op, v float64, incomplete bool) report.Expectation {
	j := verdict.Judgement{Verdict: report.VerdictFail}
	if op.Holds(v, x.Want) {
		j.Verdict = report.VerdictPass
	}
	return judge(x, op, v, incomplete, j)
}

// judge fills the outcome of x from the measured value and its verdict.
// An incomplete phase fails, whatever its figures.
func judge(x report.Expectation, op Op, v float64, incomplete bool, j verdict.Judgement) report.Expectation {
	x.Measured = RoundSig(v, 6)
	x.Verdict, x.Reason = j.Verdict, j.Reason
	switch {
	case j.Verdict == report.VerdictFail:
		x.Reason = fmt.Sprintf("%s is not %s %s", formatValue(x.Measured, x.Unit), op, formatValue(x.Want, x.Unit))
	case incomplete:
		x.Verdict, x.Reason = report.VerdictFail, "the phase did not complete"
	}
	x.Pass = x.Verdict != report.VerdictFail
	return x
}

func formatValue(v float64, unit string) string {
	s := strconv.FormatFloat(v, 'f', -1, 64)
	if unit == "" {
		return s
	}
	return s + " " + unit
}

// RoundSig rounds v to n significant digits, for display.
func RoundSig(v float64, n int) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return v
	}
	out, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', n, 64), 64)
	if err != nil {
		return v
	}
	return out
}

// EvalAll measures every expression against res, in order, but those
// against a history (VsHistory), which the command evaluates.
func EvalAll(exprs []Expr, res *report.Result) []report.Expectation {
	out := make([]report.Expectation, 0, len(exprs))
	for _, e := range exprs {
		if e.Stat != VsHistory {
			out = append(out, Eval(e, res))
		}
	}
	return out
}

// FailedChecks lists the functional checks of res that failed, sorted.
func FailedChecks(res *report.Result) []string {
	out := failedChecks(res, func(c report.Check) string { return c.Category + "/" + c.Name })
	sort.Strings(out)
	return out
}

// failedChecks names the functional checks of res that failed, in order.
func failedChecks(res *report.Result, name func(report.Check) string) []string {
	var out []string
	for _, c := range res.Checks {
		if c.Status == report.CheckFailed {
			out = append(out, name(c))
		}
	}
	return out
}
