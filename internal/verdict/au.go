package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat/distuv"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

// Bootstrap settings of the AU's interval: fixed, so that the same
// measurements always give the same interval.
const (
	auRounds = 1000
	auSeed   = 1
)

// MinSteps is the fewest measured steps (all ranks, hosts and runs
// together) from which an AU is judged against threshold (percent). A
// threshold T leaves the accelerators 100-T percent of their time to
// wait, and the steps that wait decide whether it is met; as for a latency
// percentile (MinSamples), ten steps are wanted beyond that share:
// 10/(1-T/100), so 100 steps for 90% and 34 for 70%. At least ten; a
// threshold of 100% asks as many as p99.9 does.
func MinSteps(threshold float64) int64 {
	if threshold >= 100 {
		return MinSamples("p999")
	}
	n := int64(math.Ceil(10/(1-max(threshold, 0)/100) - 1e-9))
	return min(max(n, 10), MinSamples("p999"))
}

// JudgeAU bounds t's AU at Confidence and judges it against t.Threshold:
// pass when the whole interval is at or above, fail when it is entirely
// below, else too short to judge. With fewer measured steps than MinSteps
// it never passes: it fails when the interval is entirely below, and is
// too short to judge otherwise.
//
// The interval is an approximate bootstrap over the measured steps' waits
// (t.WaitHistogram): each round draws as many steps as were measured from
// their waits, with replacement, and computes the AU of all measured
// compute time over that compute plus the drawn waits plus the time that
// was neither (the loop's own); the interval spans the middle Confidence
// of 1,000 rounds with a fixed seed, scaled to the AU reported (the mean
// over epochs and ranks rather than the pooled ratio). Steps are drawn as
// if independent, which steps of ranks that stall together are not;
// waits are taken at their histogram bucket's middle (within 0.8%).
func JudgeAU(t *report.Training) error { return judgeAU(t, nil) }

// judgeAU is JudgeAU, the interval widened to hold the AUs of the runs of
// a repeated benchmark too (runs, one AU each): the median's interval
// from six runs, their range with fewer, as for a throughput.
func judgeAU(t *report.Training, runs []float64) error {
	waits, err := t.Waits()
	if err != nil {
		return err
	}
	t.AULow, t.AUHigh, t.AUConfidence = nil, nil, 0
	if waits != nil && waits.Count() > 0 {
		compute, wall := auTimes(t)
		lo, hi := auInterval(t.AU, compute, wall, waits)
		t.AULow, t.AUHigh, t.AUConfidence = &lo, &hi, Confidence
	}
	need := MinSteps(t.Threshold)
	short := fmt.Sprintf("%d measured steps, an AU against %g%% needs %d: more steps per epoch (--dataset-files), more --epochs, or --repeat",
		t.MeasuredSteps, t.Threshold, need)
	if t.AULow == nil {
		t.Verdict, t.VerdictReason = report.VerdictTooShort, short
		return nil
	}
	meets := func(au float64) bool { return au >= t.Threshold }
	j := within(meets, *t.AULow, *t.AUHigh,
		fmt.Sprintf("the AU's %g%% interval (%.2f-%.2f%%) straddles the threshold: a longer run (--dataset-files, --epochs) or --repeat narrows it",
			100*Confidence, *t.AULow, *t.AUHigh))
	if len(runs) > 1 {
		lo, hi := runsInterval(runs)
		if r := within(meets, lo, hi, ""); r.Verdict != j.Verdict {
			j = Judgement{Verdict: report.VerdictTooShort,
				Reason: fmt.Sprintf("the %d runs' AUs (%.2f-%.2f%%) do not agree with each other on the threshold: more runs, or a client without other load", len(runs), lo, hi)}
		}
		*t.AULow, *t.AUHigh = min(*t.AULow, lo), max(*t.AUHigh, hi)
	}
	if t.MeasuredSteps < need {
		// Too few steps to pass; but when the whole interval is below,
		// more steps could not bring the AU up to the threshold.
		j = Judgement{Verdict: report.VerdictTooShort, Reason: short}
		if *t.AUHigh < t.Threshold {
			j = Judgement{Verdict: report.VerdictFail,
				Reason: fmt.Sprintf("only %d measured steps, but the AU's %g%% interval (%.2f-%.2f%%) lies wholly below the threshold %g%%",
					t.MeasuredSteps, 100*Confidence, *t.AULow, *t.AUHigh, t.Threshold)}
		}
	}
	t.Verdict, t.VerdictReason = j.Verdict, j.Reason
	return nil
}

// runsInterval bounds the runs' median: its interval at Confidence from
// six runs on, the runs' range with fewer.
func runsInterval(values []float64) (lo, hi float64) {
	s := Summarize(values)
	if math.IsNaN(s.Low) || math.IsNaN(s.High) {
		return s.Min, s.Max
	}
	return s.Low, s.High
}

// auTimes adds up the measured compute and wall time of every rank's
// epochs, in seconds.
func auTimes(t *report.Training) (compute, wall float64) {
	for _, r := range t.Ranks {
		for _, e := range r.Epochs {
			compute += e.Compute
			wall += e.Wall
		}
	}
	return compute, wall
}

// auInterval is the bootstrap interval of JudgeAU around au (percent),
// from the measured compute and wall seconds and the steps' waits.
func auInterval(au, compute, wall float64, waits *metrics.Histogram) (lo, hi float64) {
	bars := waits.Distribution()
	mid := make([]float64, len(bars)) // each bar's wait, seconds
	var total, steps float64
	for k, b := range bars {
		mid[k] = (b.From + b.To).Seconds() / 2
		total += float64(b.Count) * mid[k]
		steps += float64(b.Count)
	}
	other := max(wall-compute-total, 0)
	pooled := compute / (compute + other + total)
	if compute <= 0 || math.IsNaN(pooled) {
		return au, au
	}
	src := rand.NewPCG(auSeed, auSeed)
	ratios := make([]float64, auRounds)
	for i := range ratios {
		// How many of the drawn steps fall in each bar: a multinomial
		// draw, bar by bar, of the steps not yet placed.
		left, mass, drawn := steps, steps, 0.0
		for k, b := range bars {
			c := left
			if k < len(bars)-1 && left > 0 {
				c = distuv.Binomial{N: left, P: min(float64(b.Count)/mass, 1), Src: src}.Rand()
			}
			drawn += c * mid[k]
			left -= c
			mass -= float64(b.Count)
		}
		ratios[i] = compute / (compute + other + drawn)
	}
	slices.Sort(ratios)
	tail := (1 - Confidence) / 2
	lo = ratios[int(math.Floor(tail*auRounds))] * au / pooled
	hi = ratios[int(math.Ceil((1-tail)*auRounds))-1] * au / pooled
	return max(min(lo, au), 0), min(max(hi, au), 100)
}
