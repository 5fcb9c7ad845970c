package cluster

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/fsbench/fsbench/internal/report"
)

// HostResult is one host's part of a run.
type HostResult struct {
	Address string
	Info    Info
	Result  *report.Result // nil if the host returned none
	// Starts holds when each of the host's phases started, by phase name,
	// on the coordinator's clock.
	Starts map[string]time.Time
	Err    string // why the host failed, if it did
	// Left says, in a sentence, what the host left behind when its agent
	// was gone or silent at the clean-up (see Coordinator.Leftover); ""
	// otherwise.
	Left string
}

// Merge combines the hosts' results of one run into base: the first host's
// target and parameters, every host's phases aggregated (counts added,
// latency from the merged histograms, time from the first host's start to
// the last host's end), per-host rows, start skew and the stonewall rate.
// Whether the run was interrupted is the caller's to say: a host stopped
// because another failed says so too. It is a pure function of its
// inputs.
func Merge(base *report.Result, hosts []HostResult) error {
	var first *report.Result
	for i := range hosts {
		h := &hosts[i]
		base.Hosts = append(base.Hosts, report.AgentHost{Address: h.Address, Host: h.Info.Host, Version: h.Info.Version})
		if h.Result == nil {
			continue
		}
		if first == nil {
			first = h.Result
		}
		for _, w := range h.Result.Warnings {
			base.Warnings = append(base.Warnings, h.Address+": "+w)
		}
		if h.Result.Error != "" && base.Error == "" {
			base.Error = h.Address + ": " + h.Result.Error
		}
	}
	if first == nil {
		return fmt.Errorf("no host returned a result")
	}
	base.Target, base.CacheDrop, base.Checks, base.Threads = first.Target, first.CacheDrop, first.Checks, first.Threads
	base.Parameters = append(append(report.Params{}, first.Parameters...),
		report.Param{Key: "hosts", Label: "Hosts", Value: len(hosts), Display: fmt.Sprint(len(hosts))})
	totalRate(base.Parameters, hosts)
	for _, name := range phaseNames(hosts) {
		p, err := mergePhase(name, hosts)
		if err != nil {
			return err
		}
		base.Phases = append(base.Phases, p)
	}
	return nil
}

// phaseNames lists the phases of all hosts, in the order they ran.
// totalRate states an open loop's rate in ps as the total of the hosts'
// parts (each host ran its share of the rate asked).
func totalRate(ps report.Params, hosts []HostResult) {
	i := slices.IndexFunc(ps, func(p report.Param) bool { return p.Key == "rate" })
	if i < 0 {
		return
	}
	sum := 0.0
	for _, h := range hosts {
		if h.Result != nil {
			sum += number(h.Result.Parameters.Get("rate"))
		}
	}
	sum, _ = strconv.ParseFloat(strconv.FormatFloat(sum, 'g', 12, 64), 64) // a split's rounding
	ps[i].Value, ps[i].Display = sum, strconv.FormatFloat(sum, 'g', -1, 64)+"/s"
}

// number is a parameter's numeric value, as decoded from JSON or not.
func number(v any) float64 {
	switch n := v.(type) {
	case float64:
		return n
	case int:
		return float64(n)
	case json.Number:
		f, _ := n.Float64()
		return f
	}
	return 0
}

func phaseNames(hosts []HostResult) []string {
	var names []string
	seen := map[string]bool{}
	for _, h := range hosts {
		if h.Result == nil {
			continue
		}
		for _, p := range h.Result.Phases {
			if !seen[p.Name] {
				seen[p.Name] = true
				names = append(names, p.Name)
			}
		}
	}
	return names
}

// hostPart is one host's measurement of a phase, placed in time.
type hostPart struct {
	addr       string
	p          *report.PhaseResult
	start, end time.Time
	threads    float64
	err        string // why the host failed, on the last phase it ran
}

func mergePhase(name string, hosts []HostResult) (report.PhaseResult, error) {
	var parts []hostPart
	var phases []report.PhaseResult
	for i := range hosts {
		h := &hosts[i]
		if h.Result == nil {
			continue
		}
		p := h.Result.FindPhase(name)
		if p == nil {
			continue
		}
		start := h.Starts[name]
		hp := hostPart{addr: h.Address, p: p, start: start,
			end: start.Add(time.Duration(p.Seconds * float64(time.Second))), threads: float64(h.Result.ThreadCount())}
		if ps := h.Result.Phases; &ps[len(ps)-1] == p {
			hp.err = h.Err
		}
		parts = append(parts, hp)
		phases = append(phases, *p)
	}
	if phases[0].Value.Unit == report.UnitNotSupported {
		return phases[0], nil
	}
	out, err := report.MergePhases(phases)
	if err != nil {
		return out, err
	}
	out.Origin = report.MergeConcurrentOrigins(phases)
	out.LatencyOf = phases[0].LatencyOf
	first, last, firstEnd, lastStart := span(parts)
	if !first.IsZero() {
		out.Seconds = last.Sub(first).Seconds()
		out.StartSkew = lastStart.Sub(first).Seconds()
		out.SetRates()
		out.Stonewall = stonewall(parts, first, firstEnd)
	}
	for _, hp := range parts {
		out.Hosts = append(out.Hosts, hostRow(hp, first))
		for _, r := range hp.p.Ranks {
			r.Host = hp.addr
			out.Ranks = append(out.Ranks, r)
		}
	}
	out.Value, out.Cost, err = measures(&out, parts, phases[0])
	return out, err
}

// span is the first start, the last end, the first end and the last start
// of the parts; zero when the hosts' start times are unknown.
func span(parts []hostPart) (first, last, firstEnd, lastStart time.Time) {
	for i, hp := range parts {
		if hp.start.IsZero() {
			return time.Time{}, time.Time{}, time.Time{}, time.Time{}
		}
		if i == 0 || hp.start.Before(first) {
			first = hp.start
		}
		if i == 0 || hp.end.After(last) {
			last = hp.end
		}
		if i == 0 || hp.end.Before(firstEnd) {
			firstEnd = hp.end
		}
		if i == 0 || hp.start.After(lastStart) {
			lastStart = hp.start
		}
	}
	return first, last, firstEnd, lastStart
}

func hostRow(hp hostPart, first time.Time) report.HostPhase {
	p := hp.p
	row := report.HostPhase{Address: hp.addr, Ops: p.Ops, Items: p.Items, Bytes: p.Bytes, Errors: p.Errors,
		Seconds: p.Seconds, BytesPerSec: p.BytesPerSec, OpsPerSec: p.OpsPerSec,
		Latency: p.Latency, Histogram: p.Histogram, Incomplete: p.Incomplete, Error: hp.err}
	if !first.IsZero() {
		row.StartOffset = hp.start.Sub(first).Seconds()
	}
	return row
}

// stonewall is the aggregate rate while every host was still running: up
// to the first host's end, each host's bytes and operations by then (from
// its interval series, or pro rata without one).
func stonewall(parts []hostPart, first, firstEnd time.Time) *report.Stonewall {
	window := firstEnd.Sub(first).Seconds()
	if window <= 0 {
		return nil
	}
	sw := &report.Stonewall{Seconds: window}
	for _, hp := range parts {
		t := firstEnd.Sub(hp.start).Seconds()
		b, o := doneBy(hp.p, t)
		sw.Bytes += b
		sw.Ops += o
	}
	sw.BytesPerSec = float64(sw.Bytes) / window
	sw.OpsPerSec = float64(sw.Ops) / window
	return sw
}

// doneBy is how many bytes and operations a phase had done t seconds
// after its start.
func doneBy(p *report.PhaseResult, t float64) (bytes, ops int64) {
	if t <= 0 {
		return 0, 0
	}
	if t >= p.Seconds {
		return p.Bytes, p.Ops
	}
	if len(p.Series) == 0 {
		f := t / p.Seconds
		return int64(math.Round(float64(p.Bytes) * f)), int64(math.Round(float64(p.Ops) * f))
	}
	var b, o float64
	for _, s := range p.Series {
		end := s.Start + s.Seconds
		switch {
		case end <= t:
			b += float64(s.Bytes)
			o += float64(s.Ops)
		case s.Start < t && s.Seconds > 0:
			f := (t - s.Start) / s.Seconds
			b += float64(s.Bytes) * f
			o += float64(s.Ops) * f
		}
	}
	return int64(math.Round(b)), int64(math.Round(o))
}

// measures recomputes the table's value and cost of an aggregate phase in
// the units of one host's: rates over the aggregate time, and the time per
// file or object by the latencies of all hosts' operations. A unit
// without a rule is an error, never a figure of 0.
func measures(p *report.PhaseResult, parts []hostPart, like report.PhaseResult) (v, c report.Measure, err error) {
	v, c = report.Measure{Unit: like.Value.Unit}, report.Measure{Unit: like.Cost.Unit}
	if v.Value, err = figure(p, v.Unit, func() float64 { return hostsMean(parts, valueOf) }); err != nil {
		return v, c, err
	}
	c.Value, err = figure(p, c.Unit, func() float64 { return hostsMean(parts, costOf) })
	return v, c, err
}

func valueOf(p *report.PhaseResult) float64 { return p.Value.Value }
func costOf(p *report.PhaseResult) float64  { return p.Cost.Value }

// figure is aggregate phase p's figure in unit u, from its counts, time
// and latencies; mean is the hosts' own figures' mean, by threads. Every unit of report.Units has a case here
// (TestEveryUnitMerges).
func figure(p *report.PhaseResult, u report.Unit, mean func() float64) (float64, error) {
	if r, ok := u.Rate(p.Bytes, p.Items, p.Ops, p.Seconds); ok {
		return r, nil
	}
	switch u {
	case report.UnitSecondsPerFile:
		return p.PerUnit(p.Items), nil
	case report.UnitMsPerFile:
		return 1000 * p.PerUnit(p.Items), nil
	case report.UnitMsPerObject, report.UnitMsPerList:
		return 1000 * p.PerUnit(p.Ops), nil
	case report.UnitMsPerOp:
		return p.Latency.Mean / 1e3, nil
	case report.UnitSeconds: // checkpoint: the slowest rank's time
		return p.Seconds, nil
	case report.UnitOperations:
		return float64(p.Ops), nil
	case report.UnitAUPercent: // train recomputes it from all ranks (cli's mergeTraining)
		return mean(), nil
	case report.UnitNotSupported:
		return 0, nil
	}
	return 0, fmt.Errorf("phase %s: no rule merges figures in %q across hosts: give the unit a case in cluster's figure", p.Name, u)
}

// hostsMean is the mean of the hosts' own figures of a phase, each
// weighted by its threads.
func hostsMean(parts []hostPart, of func(*report.PhaseResult) float64) float64 {
	var sum, weight float64
	for _, hp := range parts {
		sum += of(hp.p) * hp.threads
		weight += hp.threads
	}
	if weight == 0 {
		return 0
	}
	return sum / weight
}
