// Package verdict turns measurements into judgements, in one place: the
// summary of a repeated benchmark's runs (median and spread), whether a
// change between two results is significant, and whether a run holds
// enough samples to judge a figure at all. compare, --expect, train's AU
// verdict and the HTML report all ask it, so fsbench has one definition of
// "significant".
//
// The statistics are distribution-free, as benchstat's are
// (golang.org/x/perf/benchmath): the median summarises the runs, its
// confidence interval comes from order statistics, and two sets of runs
// differ when a Mann-Whitney U test says so at the stated level.
//
// It measures nothing and does no I/O: measurements in, judgements out.
package verdict

import (
	"math"

	"golang.org/x/perf/benchmath"
)

// Defaults of the judgements.
const (
	// Alpha is the significance level of a comparison: a change is called
	// only when the chance of seeing it between identical setups is below.
	Alpha = 0.05
	// Confidence is the level of the median's interval.
	Confidence = 0.95
)

// MinSamples is how many latency samples a run needs before percentile q
// (0.5 for p50, 0.999 for p99.9) says something about the storage rather
// than about a handful of operations: ten samples beyond the percentile,
// so p99 needs 1,000 and p99.9 10,000. The maximum is one sample however
// many there are; it is never judged (0).
func MinSamples(kind string) int64 {
	switch kind {
	case "p50":
		return 20
	case "p90":
		return 100
	case "p99":
		return 1000
	case "p999":
		return 10000
	}
	return 0
}

// Judgeable reports whether a latency figure of kind (p50, p90, p99,
// p999, max) can be judged from count samples; other kinds (throughput)
// always can.
func Judgeable(kind string, count int64) bool {
	switch kind {
	case "p50", "p90", "p99", "p999":
		return count >= MinSamples(kind)
	case "max":
		return false
	}
	return true
}

// Summary is the centre and spread of a set of runs' values.
type Summary struct {
	N        int
	Median   float64
	Min, Max float64
	// Low and High bound the median at Confidence; NaN when N is too
	// small for a finite interval (fewer than six runs at 95%).
	Low, High float64
}

// Summarize gives the median of values, their range and the median's
// distribution-free confidence interval.
func Summarize(values []float64) Summary {
	if len(values) == 0 {
		return Summary{Median: math.NaN(), Min: math.NaN(), Max: math.NaN(), Low: math.NaN(), High: math.NaN()}
	}
	s := sample(values)
	sum := benchmath.AssumeNothing.Summary(s, Confidence)
	out := Summary{N: len(values), Median: sum.Center, Min: s.Values[0], Max: s.Values[len(s.Values)-1],
		Low: sum.Lo, High: sum.Hi}
	if math.IsInf(out.Low, 0) || math.IsInf(out.High, 0) {
		out.Low, out.High = math.NaN(), math.NaN()
	}
	return out
}

// Test is the outcome of testing whether two sets of runs differ.
type Test struct {
	// P is the Mann-Whitney U test's p-value; NaN when either side has a
	// single run, where no test is possible.
	P float64
	// Significant is P < Alpha.
	Significant bool
	// MinRuns is the number of runs a side needs before any difference
	// can be significant at Alpha (4 at 5%); Enough is whether both
	// sides have them.
	MinRuns int
	Enough  bool
}

// Compare tests whether old and new (one value per run) come from
// different distributions.
func Compare(old, new []float64) Test {
	t := Test{P: math.NaN(), MinRuns: minRuns(Alpha)}
	t.Enough = len(old) >= t.MinRuns && len(new) >= t.MinRuns
	if len(old) < 2 || len(new) < 2 {
		return t
	}
	c := benchmath.AssumeNothing.Compare(sample(old), sample(new))
	t.P = c.P
	t.Significant = c.P < Alpha
	return t
}

// sample is a benchmath sample of a copy of values (NewSample sorts the
// slice it is given).
func sample(values []float64) *benchmath.Sample {
	return benchmath.NewSample(append([]float64(nil), values...), &benchmath.DefaultThresholds)
}

// minRuns is the fewest runs per side with which a U test of two equal
// sides can reach alpha: with all of one side above all of the other,
// p = 2/C(2n, n).
func minRuns(alpha float64) int {
	for n := 1; n < 50; n++ {
		if 2/binomial(2*n, n) < alpha {
			return n
		}
	}
	return 50
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// Beyond tests whether new is worse than old by more than pct percent:
// lower when higher is better (a throughput), higher when lower is (a
// latency). It is the same U test as Compare, of new against old moved
// by the threshold (each old run times 1-pct/100, or 1+pct/100), so its
// p-value is below Alpha when the change's confidence interval at
// 1-Alpha (the ratios new/old the U test does not reject) lies wholly
// beyond the threshold: the "wrong side of the bound" rule of the
// expectations, for a change. It is 1 when new is not beyond the moved
// old at all, and NaN when either side has a single run.
func Beyond(old, new []float64, pct float64, higherBetter bool) float64 {
	if len(old) < 2 || len(new) < 2 {
		return math.NaN()
	}
	f := 1 + pct/100
	if higherBetter {
		f = 1 - pct/100
	}
	moved := make([]float64, len(old))
	for i, v := range old {
		moved[i] = v * f
	}
	a, b := Summarize(moved).Median, Summarize(new).Median
	if (b < a) != higherBetter || a == b {
		return 1
	}
	return benchmath.AssumeNothing.Compare(sample(moved), sample(new)).P
}
