package prom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fsbench/fsbench/internal/report"
)

// Round results, the values of fsbench_probe_rounds_total's result label.
const (
	RoundPass  = "pass"  // the round ran and every expectation held
	RoundFail  = "fail"  // the round ran and an expectation failed
	RoundError = "error" // the round did not run to its end
)

// Probe holds the metrics of a probe's rounds: how many ended how, and the
// figures and verdicts of the last one. Every series of the last round is
// replaced at each round, so a phase or expectation that is gone does not
// linger, and the number of series stays bounded however long it runs.
type Probe struct {
	rounds     *prometheus.CounterVec
	pushErrors prometheus.Counter
	success    prometheus.Gauge
	when       prometheus.Gauge
	took       prometheus.Gauge
	bytes      *prometheus.GaugeVec
	ops        *prometheus.GaugeVec
	errs       *prometheus.GaugeVec
	latency    *prometheus.GaugeVec
	expect     *prometheus.GaugeVec
}

// NewProbe makes the probe's metrics, every round result at zero, each
// series labelled with host.
func NewProbe(host string) *Probe {
	h := prometheus.Labels{"host": host}
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: h}, labels)
	}
	p := &Probe{
		rounds: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "fsbench_probe_rounds_total", ConstLabels: h,
			Help: "Probe rounds by result: pass, fail (an expectation failed) or error (the round did not complete)."}, []string{"result"}),
		pushErrors: prometheus.NewCounter(prometheus.CounterOpts{Name: "fsbench_probe_push_failures_total", ConstLabels: h,
			Help: "Rounds whose metrics the pushgateway did not accept."}),
		success: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fsbench_probe_last_round_success", ConstLabels: h,
			Help: "1 if the last round passed, 0 if it failed or did not complete."}),
		when: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fsbench_probe_last_round_timestamp_seconds", ConstLabels: h,
			Help: "When the last round ended, in seconds since the epoch."}),
		took: prometheus.NewGauge(prometheus.GaugeOpts{Name: "fsbench_probe_last_round_duration_seconds", ConstLabels: h,
			Help: "How long the last round took, clean-up included."}),
		bytes: gauge("fsbench_probe_phase_bytes_per_second", "Throughput of each operation (result row) of the last round.", "op"),
		ops:   gauge("fsbench_probe_phase_operations_per_second", "Operations per second of each operation of the last round.", "op"),
		errs:  gauge("fsbench_probe_phase_errors", "Failed operations of each operation of the last round.", "op"),
		latency: gauge("fsbench_probe_phase_latency_seconds",
			"Latency percentiles (p50, p90, p99, max) of each operation of the last round, exact (HdrHistogram).", "op", "percentile"),
		expect: gauge("fsbench_probe_expectation_pass",
			"1 if the expectation held in the last round, 0 if it failed; absent when the round was too short to judge it or did not complete.", "expectation"),
	}
	for _, r := range []string{RoundPass, RoundFail, RoundError} {
		p.rounds.WithLabelValues(r)
	}
	return p
}

// Collectors are the probe's metrics, to register.
func (p *Probe) Collectors() []prometheus.Collector {
	return []prometheus.Collector{p.rounds, p.pushErrors, p.success, p.when, p.took, p.bytes, p.ops, p.errs, p.latency, p.expect}
}

// Round records a round that ended at end after took, with its result
// (RoundPass, ...), and its measurements when it has some.
func (p *Probe) Round(result string, end time.Time, took time.Duration, res *report.Result) {
	p.rounds.WithLabelValues(result).Inc()
	p.when.Set(float64(end.UnixNano()) / 1e9)
	p.took.Set(took.Seconds())
	p.success.Set(0)
	if result == RoundPass {
		p.success.Set(1)
	}
	for _, v := range []*prometheus.GaugeVec{p.bytes, p.ops, p.errs, p.latency, p.expect} {
		v.Reset()
	}
	if res == nil {
		return
	}
	for i := range res.Phases {
		ph := &res.Phases[i]
		p.bytes.WithLabelValues(ph.Name).Set(ph.BytesPerSec)
		p.ops.WithLabelValues(ph.Name).Set(ph.OpsPerSec)
		p.errs.WithLabelValues(ph.Name).Set(float64(ph.Errors))
		if ph.Latency.Count == 0 {
			continue
		}
		for _, q := range []struct {
			label string
			us    float64
		}{{"p50", ph.Latency.P50}, {"p90", ph.Latency.P90}, {"p99", ph.Latency.P99}, {"max", ph.Latency.Max}} {
			p.latency.WithLabelValues(ph.Name, q.label).Set(q.us / 1e6)
		}
	}
	for _, e := range res.Expectations {
		switch e.Verdict {
		case report.VerdictPass:
			p.expect.WithLabelValues(e.Expr).Set(1)
		case report.VerdictFail:
			p.expect.WithLabelValues(e.Expr).Set(0)
		}
	}
}

// PushFailed counts a round whose push failed.
func (p *Probe) PushFailed() { p.pushErrors.Inc() }
