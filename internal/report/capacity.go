package report

import (
	"fmt"
	"io"
	"strconv"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/units"
)

// Capacity is what --slo and --curve measured of one phase: the
// closed-loop maximum, each open-loop step run after it and, for --slo,
// the highest rate at which the latency objective held over the whole
// phase.
type Capacity struct {
	// Phase is the phase whose rate was set (the workload's last phase
	// limited by time or count).
	Phase string `json:"phase"`
	// Unit names what its rates count, per second: "samples" for train
	// (each rate and throughput is samples per second); empty is
	// operations.
	Unit string `json:"unit,omitempty"`
	// Objective is the latency objective of --slo, in canonical form
	// (p99<5ms,p50<1ms); empty for a curve alone.
	Objective string `json:"objective,omitempty"`
	// Bounds are the objective's latency bounds in microseconds, by
	// statistic (p99, mean), for drawing them.
	Bounds map[string]float64 `json:"bounds_us,omitempty"`
	// Repeat is how many times each rate ran; an objective held at a
	// rate only when it held in every run.
	Repeat int `json:"repeat"`
	// MaxOpsPerSec is the closed-loop maximum: as fast as the threads go.
	MaxOpsPerSec float64 `json:"max_ops_per_sec"`
	// Answer is the outcome of --slo; nil for a curve alone.
	Answer *CapacityAnswer `json:"answer,omitempty"`
	// Steps are the rates run, in order: the maximum first (rate 0), then
	// the search's probes or the curve's steps.
	Steps []CapacityStep `json:"steps"`
	// KneeStep is the index in Steps of the knee: the open-loop step of
	// the highest rate that kept up with it and whose p50 is at most three
	// times the lowest p50 of the steps. 0 (the maximum) is none.
	KneeStep int `json:"knee_step,omitempty"`
}

// CapacityAnswer is the highest open-loop rate at which the objective
// held: it held at Low (= OpsPerSec) and not at High, so the true answer
// lies between them. High equals Low when the objective held at the
// closed-loop maximum: the threads, not the objective, were the limit.
// OpsPerSec is 0 when it held at no rate tried.
type CapacityAnswer struct {
	OpsPerSec float64 `json:"ops_per_sec"`
	Low       float64 `json:"low_ops_per_sec"`
	High      float64 `json:"high_ops_per_sec"`
	// BytesPerSec and Latency were measured at that rate.
	BytesPerSec float64         `json:"bytes_per_sec"`
	Latency     metrics.Summary `json:"latency"`
	// Values are the objective's statistics at that rate, e.g. p99, in
	// microseconds (errors in percent).
	Values map[string]float64 `json:"values,omitempty"`
	// ThreadsBound is set when the objective held at the maximum.
	ThreadsBound bool `json:"threads_bound,omitempty"`
}

// CapacityStep is one rate run: its achieved throughput and latency.
type CapacityStep struct {
	// Rate is the open loop's rate asked for, ops/s; 0 is the closed-loop
	// maximum. Percent is the rate as a percent of that maximum.
	Rate        float64 `json:"rate"`
	Percent     float64 `json:"percent"`
	Runs        int     `json:"runs"`
	Seconds     float64 `json:"seconds"`
	Ops         int64   `json:"ops"`
	Errors      int64   `json:"errors"`
	Missed      int64   `json:"missed,omitempty"`
	OpsPerSec   float64 `json:"ops_per_sec"`
	BytesPerSec float64 `json:"bytes_per_sec"`
	// Latency is the response time (from each operation's scheduled
	// start), over every run of the step; Histogram its encoded form.
	Latency   metrics.Summary `json:"latency"`
	Histogram string          `json:"histogram,omitempty"`
	// Holds says whether the objective held (every run), with the reason
	// when it did not; nil without an objective.
	Holds  *bool  `json:"holds,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// writeCapacity writes the answer of --slo and the steps of --curve
// below the table.
func writeCapacity(w io.Writer, c *Capacity) {
	if c == nil || c.Answer == nil && len(c.Steps) == 0 { // stopped before its first step ended
		return
	}
	if c.Answer == nil {
		u := c.RateUnit()
		fmt.Fprintf(w, "Latency-throughput curve of %s (closed-loop maximum %s %s):\n", c.Phase, ratef(c.MaxOpsPerSec), u)
		for i, s := range c.Steps[1:] {
			knee := ""
			if i+1 == c.KneeStep {
				knee = "  <- knee"
			}
			fmt.Fprintf(w, "  %5s%% %10s %s asked, %10s %s done, %11s, p50 %s, p99 %s, errors %d%s\n",
				strconv.FormatFloat(s.Percent, 'f', -1, 64), ratef(s.Rate), u, ratef(s.OpsPerSec), u, mibs(s.BytesPerSec),
				units.FormatLatency(s.Latency.P50), units.FormatLatency(s.Latency.P99), s.Errors, knee)
		}
		return
	}
	fmt.Fprintln(w, c.AnswerLine())
}

// RateUnit is the unit of the rates: ops/s, or samples/s for train.
func (c *Capacity) RateUnit() string {
	if c.Unit == "" {
		return "ops/s"
	}
	return c.Unit + "/s"
}

// AnswerLine states the answer of --slo in one line.
func (c *Capacity) AnswerLine() string {
	a := c.Answer
	if a == nil {
		return ""
	}
	u := c.RateUnit()
	if a.OpsPerSec == 0 {
		return fmt.Sprintf("max rate under the objective %s: none; it did not hold down to %s %s (closed-loop maximum %s %s)",
			c.Objective, ratef(a.High), u, ratef(c.MaxOpsPerSec), u)
	}
	where := fmt.Sprintf("between %s and %s %s", ratef(a.Low), ratef(a.High), u)
	if a.ThreadsBound {
		where = "it held at the closed-loop maximum of these threads: with more it may hold higher"
	}
	return fmt.Sprintf("max rate under the objective %s: %s %s (%s), p99 %s at that rate (%s; closed-loop maximum %s %s)",
		c.Objective, ratef(a.OpsPerSec), u, mibs(a.BytesPerSec), units.FormatLatency(a.Latency.P99), where, ratef(c.MaxOpsPerSec), u)
}

func ratef(v float64) string {
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'g', 3, 64)
}

func mibs(v float64) string { return strconv.FormatFloat(v/(1<<20), 'f', 2, 64) + " MiB/s" }
