package report

import (
	"fmt"
	"strconv"

	"github.com/fsbench/fsbench/internal/metrics"
)

// figure is one figure of a result, by its JSON name.
type figure struct {
	name string
	v    float64
}

// checkFigures rejects a result whose counts, times, rates or latencies
// are negative, in its summary or in any of its runs: no run measures
// those, so the file was edited or made by something else, and figures
// compared or charted from it would mislead.
func (r *Result) checkFigures() error {
	if err := checkPhases("", r.Phases, r.Training); err != nil {
		return err
	}
	for _, run := range r.Runs {
		where := fmt.Sprintf("run %d: ", run.Index)
		if err := noNegative(where[:len(where)-2], figure{"seconds", run.Seconds}); err != nil {
			return err
		}
		if err := checkPhases(where, run.Phases, run.Training); err != nil {
			return err
		}
	}
	return nil
}

// checkPhases checks the figures of phases and training; prefix starts
// the place an error names.
func checkPhases(prefix string, phases []PhaseResult, t *Training) error {
	for i := range phases {
		p := &phases[i]
		where := fmt.Sprintf("%sphase %q", prefix, p.Name)
		if err := noNegative(where, phaseFigures(p)...); err != nil {
			return err
		}
		for _, h := range p.Hosts {
			if err := noNegative(where+" host "+h.Address, hostFigures(&h)...); err != nil {
				return err
			}
		}
	}
	if t != nil {
		return noNegative(prefix+"training", figure{"samples", float64(t.Samples)}, figure{"au_pct", t.AU},
			figure{"samples_per_sec", t.SamplesPerSec}, figure{"bytes_per_sec", t.BytesPerSec})
	}
	return nil
}

func phaseFigures(p *PhaseResult) []figure {
	return append([]figure{
		{"ops", float64(p.Ops)}, {"items", float64(p.Items)}, {"bytes", float64(p.Bytes)},
		{"errors", float64(p.Errors)}, {"throttled", float64(p.Throttled)}, {"seconds", p.Seconds},
		{"bytes_per_sec", p.BytesPerSec}, {"ops_per_sec", p.OpsPerSec}, {"items_per_sec", p.ItemsPerSec},
		{"value", p.Value.Value}, {"cost", p.Cost.Value},
	}, latencyFigures("latency", p.Latency)...)
}

func hostFigures(h *HostPhase) []figure {
	return append([]figure{
		{"ops", float64(h.Ops)}, {"items", float64(h.Items)}, {"bytes", float64(h.Bytes)},
		{"errors", float64(h.Errors)}, {"seconds", h.Seconds},
		{"bytes_per_sec", h.BytesPerSec}, {"ops_per_sec", h.OpsPerSec},
	}, latencyFigures("latency", h.Latency)...)
}

func latencyFigures(name string, s metrics.Summary) []figure {
	return []figure{
		{name + ".count", float64(s.Count)}, {name + ".mean_us", s.Mean}, {name + ".min_us", s.Min},
		{name + ".p50_us", s.P50}, {name + ".p90_us", s.P90}, {name + ".p99_us", s.P99},
		{name + ".p999_us", s.P999}, {name + ".max_us", s.Max},
	}
}

// noNegative returns an error naming the first negative figure.
func noNegative(where string, figs ...figure) error {
	for _, f := range figs {
		if f.v < 0 {
			return fmt.Errorf("%s: %s is %s; a result holds no negative figure", where, f.name, strconv.FormatFloat(f.v, 'f', -1, 64))
		}
	}
	return nil
}
