package verdict

import (
	"fmt"
	"math"

	"github.com/fsbench/fsbench/internal/report"
)

// SummarizeRuns fills res.Phases (and res.Training) with the summary of
// res.Runs, a repeated benchmark's runs: per phase, the median VALUE with
// its spread, medians of the time, rates and COST, counts added up over
// the runs, and latency percentiles from every run's samples together
// (merged histograms, never averaged percentiles). A phase missing from
// some runs (a run that failed before it) is summarised over the runs that
// have it. It changes nothing when res holds no runs.
func SummarizeRuns(res *report.Result) error {
	if len(res.Runs) == 0 {
		return nil
	}
	var names []string
	byName := map[string][]report.PhaseResult{}
	for _, r := range res.Runs {
		for _, p := range r.Phases {
			if _, ok := byName[p.Name]; !ok {
				names = append(names, p.Name)
			}
			byName[p.Name] = append(byName[p.Name], p)
		}
	}
	res.Phases = make([]report.PhaseResult, 0, len(names)) // a run may share the old slice
	for _, n := range names {
		p, err := summarizePhase(byName[n])
		if err != nil {
			return err
		}
		res.Phases = append(res.Phases, p)
	}
	t, err := summarizeTraining(res.Runs)
	res.Training = t
	return err
}

// summarizePhase is the summary of one phase over the runs that have it.
func summarizePhase(runs []report.PhaseResult) (report.PhaseResult, error) {
	out, err := report.MergePhases(runs)
	if err != nil {
		return report.PhaseResult{}, fmt.Errorf("summary of the runs: %w", err)
	}
	pick := func(f func(p *report.PhaseResult) float64) float64 {
		vs := make([]float64, len(runs))
		for i := range runs {
			vs[i] = f(&runs[i])
		}
		return Summarize(vs).Median
	}
	out.Seconds = pick(func(p *report.PhaseResult) float64 { return p.Seconds })
	out.BytesPerSec = pick(func(p *report.PhaseResult) float64 { return p.BytesPerSec })
	out.OpsPerSec = pick(func(p *report.PhaseResult) float64 { return p.OpsPerSec })
	out.ItemsPerSec = pick(func(p *report.PhaseResult) float64 { return p.ItemsPerSec })
	out.Cost.Value = pick(func(p *report.PhaseResult) float64 { return p.Cost.Value })
	values := make([]float64, len(runs))
	for i := range runs {
		values[i] = runs[i].Value.Value
	}
	s := Summarize(values)
	out.Value.Value = s.Median
	out.Value.Grade = runs[closest(values, s.Median)].Value.Grade
	out.Cost.Grade = runs[closest(values, s.Median)].Cost.Grade
	out.Spread = spread(values, s)
	return out, nil
}

// spread is the report's form of a summary.
func spread(values []float64, s Summary) *report.Spread {
	sp := &report.Spread{Runs: s.N, Values: append([]float64(nil), values...), Min: s.Min, Max: s.Max, Confidence: Confidence}
	if !math.IsNaN(s.Low) && !math.IsNaN(s.High) {
		lo, hi := s.Low, s.High
		sp.Low, sp.High = &lo, &hi
	}
	return sp
}

// closest is the index of the value nearest to v.
func closest(values []float64, v float64) int {
	best := 0
	for i, x := range values {
		if math.Abs(x-v) < math.Abs(values[best]-v) {
			best = i
		}
	}
	return best
}

// summarizeTraining is the training figures of the runs together: every
// run's ranks, epochs and measured steps count alike, so the AU is their
// mean over all runs and is judged over all runs' steps, its interval
// holding the runs' own AUs too; the accelerator count stays that of one
// run.
func summarizeTraining(runs []report.Run) (*report.Training, error) {
	var parts []*report.Training
	for _, r := range runs {
		if r.Training != nil {
			parts = append(parts, r.Training)
		}
	}
	if len(parts) == 0 {
		return nil, nil
	}
	out, err := report.MergeTraining(parts)
	if err != nil {
		return nil, fmt.Errorf("summary of the runs: %w", err)
	}
	out.Accelerators = parts[0].Accelerators
	var sps, bps, aus []float64
	for _, t := range parts {
		sps = append(sps, t.SamplesPerSec)
		bps = append(bps, t.BytesPerSec)
		aus = append(aus, t.AU)
	}
	out.SamplesPerSec, out.BytesPerSec = Summarize(sps).Median, Summarize(bps).Median
	if err := judgeAU(out, aus); err != nil {
		return nil, fmt.Errorf("summary of the runs: %w", err)
	}
	return out, nil
}
