package verdict

import (
	"fmt"
	"math"

	"github.com/fsbench/fsbench/internal/report"
)

// Judgement is the outcome of a figure against its bound: one of
// report.VerdictPass, VerdictFail and VerdictTooShort, and for the last
// why, with what would make the figure judgeable.
type Judgement struct {
	Verdict string
	Reason  string
}

// within judges a figure whose plausible values run from lo to hi: pass
// when the bound holds for both ends, fail when it holds for neither,
// too short to judge when the range straddles it.
func within(holds func(float64) bool, lo, hi float64, straddles string) Judgement {
	switch l, h := holds(lo), holds(hi); {
	case l && h:
		return Judgement{Verdict: report.VerdictPass}
	case !l && !h:
		return Judgement{Verdict: report.VerdictFail}
	}
	return Judgement{Verdict: report.VerdictTooShort, Reason: straddles}
}

// MinOps is the fewest timed operations a throughput is judged from: as
// many as a median latency needs (MinSamples("p50")), since with fewer a
// single slow or fast operation moves the rate of the phase by more than
// a twentieth.
var MinOps = MinSamples("p50")

// Throughput judges a throughput against its bound (holds) from each
// run's rate of the phase, in values, and the operations of all runs
// together. A single run is judged on its rate once it holds MinOps
// operations. Several runs are judged on their median when the bound
// holds, or fails, over the whole of the median's confidence interval
// (from six runs on), or of the runs' range with fewer; when the interval
// straddles the bound, the runs cannot tell and the verdict is too short
// to judge.
func Throughput(values []float64, ops int64, holds func(float64) bool) Judgement {
	if ops < MinOps {
		return Judgement{Verdict: report.VerdictTooShort,
			Reason: fmt.Sprintf("%d operations, a rate needs %d: a longer run (more or bigger files) or --repeat", ops, MinOps)}
	}
	if len(values) == 1 {
		return within(holds, values[0], values[0], "")
	}
	s := Summarize(values)
	lo, hi, what := s.Low, s.High, fmt.Sprintf("the median's %g%% interval", 100*Confidence)
	if math.IsNaN(lo) || math.IsNaN(hi) {
		lo, hi, what = s.Min, s.Max, "the runs' range"
	}
	return within(holds, lo, hi, fmt.Sprintf("%s (%s to %s) straddles the bound: more runs (--repeat) or longer ones",
		what, num(lo), num(hi)))
}

// Percentile judges latency percentile kind (p50, p90, p99, p999, max)
// of count samples whose value is v. A percentile needs MinSamples(kind)
// samples; the maximum is a fact, the slowest operation that happened,
// and is judged however few there are.
func Percentile(kind string, count int64, v float64, holds func(float64) bool) Judgement {
	if kind != "max" && !Judgeable(kind, count) {
		return Judgement{Verdict: report.VerdictTooShort,
			Reason: fmt.Sprintf("%d latency samples, %s needs %d: a longer run or --repeat", count, kind, MinSamples(kind))}
	}
	return within(holds, v, v, "")
}

// num formats a bound of an interval for a reason.
func num(v float64) string { return fmt.Sprintf("%.4g", v) }
