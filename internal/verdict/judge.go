package verdict

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fsbench/fsbench/internal/metrics"
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
// and is judged however few there are. With fewer samples, lo and hi
// bound the percentile (QuantileBounds; NaN when unknown): when the bound
// fails over the whole of that interval, the percentile fails however
// few samples there are, since more could not bring it back; else it is
// too short to judge.
func Percentile(kind string, count int64, v, lo, hi float64, holds func(float64) bool) Judgement {
	if kind != "max" && !Judgeable(kind, count) {
		short := fmt.Sprintf("%d latency samples, %s needs %d: a longer run or --repeat", count, kind, MinSamples(kind))
		if !math.IsNaN(lo) && !math.IsNaN(hi) && within(holds, lo, hi, "").Verdict == report.VerdictFail {
			return Judgement{Verdict: report.VerdictFail,
				Reason: fmt.Sprintf("only %d latency samples, but the %s's %g%% interval (%s to %s) lies wholly beyond the bound", count, kind, 100*Confidence, num(lo), num(hi))}
		}
		return Judgement{Verdict: report.VerdictTooShort, Reason: short}
	}
	return within(holds, v, v, "")
}

// Quantile is the fraction of samples at or below percentile kind (0.99
// for p99); 0 for other kinds.
func Quantile(kind string) float64 {
	return map[string]float64{"p50": 0.5, "p90": 0.9, "p99": 0.99, "p999": 0.999}[kind]
}

// QuantileBounds bounds the q quantile (0 < q < 1) of the samples in h at
// Confidence, free of any assumption on their distribution: the order
// statistics X(l) and X(u) with P(X(l) <= Q) and P(X(u) >= Q) each at
// least 1-(1-Confidence)/2, from the binomial count of samples below the
// quantile Q. lo is 0 and hi +Inf when the samples are too few for that
// end (hi is for p99 below about 300 samples). Each end is taken at the
// side of its histogram bucket that widens the interval.
func QuantileBounds(h *metrics.Histogram, q float64) (lo, hi time.Duration) {
	n := h.Count()
	lo, hi = 0, time.Duration(math.MaxInt64)
	if n == 0 || q <= 0 || q >= 1 {
		return lo, hi
	}
	tail := (1 - Confidence) / 2
	b := distuv.Binomial{N: float64(n), P: q}
	// l: the largest rank with P(Bin >= l) >= 1-tail; u: the smallest with
	// P(Bin <= u-1) >= 1-tail.
	l, u := int64(0), n+1
	for k := int64(1); k <= n; k++ {
		if b.Survival(float64(k)-0.5) >= 1-tail {
			l = k
		}
		if u > n && b.CDF(float64(k-1)) >= 1-tail {
			u = k
		}
	}
	var seen int64
	for _, bar := range h.Distribution() {
		if l > seen && l <= seen+bar.Count {
			lo = bar.From
		}
		if u > seen && u <= seen+bar.Count {
			hi = bar.To
		}
		seen += bar.Count
	}
	return lo, hi
}

// num formats a bound of an interval for a reason.
func num(v float64) string { return fmt.Sprintf("%.4g", v) }

// Strict is j for a job that must decide (--strict): a figure too short
// to judge fails, its reason kept after "too short to judge (--strict): ";
// a pass or a failure is left as it is.
func (j Judgement) Strict() Judgement {
	if j.Verdict != report.VerdictTooShort {
		return j
	}
	return Judgement{Verdict: report.VerdictFail, Reason: report.VerdictTooShort + " (--strict): " + j.Reason}
}
