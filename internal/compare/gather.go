package compare

import (
	"errors"
	"fmt"
	"slices"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/verdict"
)

// Gather makes one side of a comparison of the results of one job run at
// different times (names are their files): every run of each (a result
// without --repeat is one run) becomes a run of the gathered result, in
// the order they started, and its phases are their summary, as --repeat
// would have made them. Measuring OLD and NEW alternately and gathering
// each side lets a drift of the machine reach both sides alike, where two
// blocks of --repeat back to back meet it in one side only.
//
// The results must be of one command with the same parameters: anything
// else is an error. One result is returned as it is.
func Gather(parts []*report.Result, names []string) (*report.Result, error) {
	if len(parts) == 0 {
		return nil, errors.New("no results to gather")
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	first := parts[0]
	for i, p := range parts[1:] {
		if p.Command != first.Command {
			return nil, fmt.Errorf("%s and %s are not runs of one job: %s is from fsbench %s, %s from fsbench %s", names[0], names[i+1], names[0], first.Command, names[i+1], p.Command)
		}
		if d := paramKeys(first.Parameters, p.Parameters); len(d) > 0 {
			k := d[0]
			return nil, fmt.Errorf("%s and %s are not runs of one job: parameter %s differs (%s and %s)", names[0], names[i+1], k, showParam(first.Parameters.Get(k)), showParam(p.Parameters.Get(k)))
		}
	}
	var runs []report.Run
	out := *first
	out.Warnings, out.Interrupted, out.Usage = nil, false, report.Usage{}
	for _, p := range parts {
		runs = append(runs, runsOf(p)...)
		for _, w := range p.Warnings {
			if !slices.Contains(out.Warnings, w) {
				out.Warnings = append(out.Warnings, w) // once, not once a run
			}
		}
		out.Interrupted = out.Interrupted || p.Interrupted
		out.Usage.Seconds += p.Usage.Seconds
		out.Usage.CPUPercent += p.Usage.CPUPercent * p.Usage.Seconds
		out.Usage.PeakRSSBytes = max(out.Usage.PeakRSSBytes, p.Usage.PeakRSSBytes)
		if p.StartedAt.Before(out.StartedAt) {
			out.StartedAt = p.StartedAt
		}
	}
	if out.Usage.Seconds > 0 {
		out.Usage.CPUPercent /= out.Usage.Seconds // the mean over the runs' time
	}
	slices.SortStableFunc(runs, func(a, b report.Run) int { return a.StartedAt.Compare(b.StartedAt) })
	for i := range runs {
		runs[i].Index = i + 1
	}
	out.Runs = runs
	out.Phases = nil
	if err := verdict.SummarizeRuns(&out); err != nil {
		return nil, err
	}
	return &out, nil
}

// runsOf is a result's runs: those of --repeat, or the result itself.
func runsOf(r *report.Result) []report.Run {
	if len(r.Runs) > 0 {
		return append([]report.Run(nil), r.Runs...)
	}
	return []report.Run{{StartedAt: r.StartedAt, Seconds: r.Usage.Seconds, Load: r.Host.Load,
		Phases: r.Phases, Training: r.Training, Interrupted: r.Interrupted, Error: r.Error}}
}

// paramKeys are the keys of the parameters whose values differ.
func paramKeys(a, b report.Params) []string {
	var out []string
	seen := map[string]bool{}
	for _, p := range a {
		seen[p.Key] = true
		if showParam(p.Value) != showParam(b.Get(p.Key)) {
			out = append(out, p.Key)
		}
	}
	for _, p := range b {
		if !seen[p.Key] {
			out = append(out, p.Key)
		}
	}
	return out
}

// showParam is a parameter's value as a comparison names it.
func showParam(v any) string {
	if v == nil {
		return "unset"
	}
	return fmt.Sprint(v)
}
