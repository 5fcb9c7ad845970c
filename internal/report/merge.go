package report

import (
	"errors"
	"fmt"

	"github.com/fsbench/fsbench/internal/metrics"
)

// SetLatency fills a phase's latency summary and stored histogram from h.
func SetLatency(p *PhaseResult, h *metrics.Histogram) error {
	p.Latency = h.Summary()
	enc, err := encodeIfAny(h)
	p.Histogram = enc
	return err
}

// SetTTFB fills a phase's time-to-first-byte summary and histogram, if h
// holds any sample.
func SetTTFB(p *PhaseResult, h *metrics.Histogram) error {
	if h == nil || h.Count() == 0 {
		return nil
	}
	s := h.Summary()
	p.TTFB = &s
	enc, err := h.Encode()
	p.TTFBHistogram = enc
	return err
}

// SetService fills an open-loop phase's service-time summary and histogram.
func SetService(p *PhaseResult, h *metrics.Histogram) error {
	if h == nil {
		return nil
	}
	s := h.Summary()
	p.ServiceTime = &s
	enc, err := encodeIfAny(h)
	p.ServiceHistogram = enc
	return err
}

func encodeIfAny(h *metrics.Histogram) (string, error) {
	if h.Count() == 0 {
		return "", nil
	}
	return h.Encode()
}

// LatencyHistogram decodes a phase's stored latency histogram; nil without
// error when the phase has none (a version-1 result, or no operation).
func (p *PhaseResult) LatencyHistogram() (*metrics.Histogram, error) {
	if p.Histogram == "" {
		return nil, nil
	}
	h, err := metrics.Decode(p.Histogram)
	if err != nil {
		return nil, fmt.Errorf("phase %s: %w", p.Name, err)
	}
	return h, nil
}

// ErrNoHistogram is returned when results without stored histograms (schema
// version 1) are merged: percentiles cannot be combined without them.
var ErrNoHistogram = errors.New("a phase has operations but no stored histogram (written by an older fsbench)")

// MergePhases combines measurements of one phase made at the same time (by
// the workers of many hosts, say) into one: counts add up, the time is the
// longest, rates follow from those, and the latency percentiles come from
// the merged histograms, never from averaging percentiles.
func MergePhases(parts []PhaseResult) (PhaseResult, error) {
	if len(parts) == 0 {
		return PhaseResult{}, errors.New("nothing to merge")
	}
	out := PhaseResult{Name: parts[0].Name, Title: parts[0].Title, LatencyOf: parts[0].LatencyOf,
		Value: Measure{Unit: parts[0].Value.Unit}, Cost: Measure{Unit: parts[0].Cost.Unit}}
	lat, ttfb, svc := metrics.NewHistogram(), metrics.NewHistogram(), metrics.NewHistogram()
	hasTTFB, hasSvc := false, false
	for i := range parts {
		p := &parts[i]
		if p.Name != out.Name {
			return PhaseResult{}, fmt.Errorf("cannot merge phase %s with phase %s", p.Name, out.Name)
		}
		out.Ops += p.Ops
		out.Items += p.Items
		out.Bytes += p.Bytes
		out.Errors += p.Errors
		out.Throttled += p.Throttled
		out.Missed += p.Missed
		out.Seconds = max(out.Seconds, p.Seconds)
		out.Incomplete = out.Incomplete || p.Incomplete
		for _, s := range p.ErrorSamples {
			if len(out.ErrorSamples) < 5 {
				out.ErrorSamples = append(out.ErrorSamples, s)
			}
		}
		if err := mergeEncoded(lat, p.Histogram, p.Latency.Count, p.Name); err != nil {
			return PhaseResult{}, err
		}
		if p.TTFB != nil {
			hasTTFB = true
			if err := mergeEncoded(ttfb, p.TTFBHistogram, p.TTFB.Count, p.Name); err != nil {
				return PhaseResult{}, err
			}
		}
		if p.ServiceTime != nil {
			hasSvc = true
			if err := mergeEncoded(svc, p.ServiceHistogram, p.ServiceTime.Count, p.Name); err != nil {
				return PhaseResult{}, err
			}
		}
	}
	out.SetRates()
	out.Origin = MergeOrigins(parts)
	out.Access = MergeAccess(parts)
	if err := SetLatency(&out, lat); err != nil {
		return PhaseResult{}, err
	}
	if hasTTFB {
		if err := SetTTFB(&out, ttfb); err != nil {
			return PhaseResult{}, err
		}
	}
	if hasSvc {
		if err := SetService(&out, svc); err != nil {
			return PhaseResult{}, err
		}
	}
	return out, nil
}

func mergeEncoded(into *metrics.Histogram, enc string, count int64, phase string) error {
	if enc == "" {
		if count > 0 {
			return fmt.Errorf("phase %s: %w", phase, ErrNoHistogram)
		}
		return nil
	}
	h, err := metrics.Decode(enc)
	if err != nil {
		return fmt.Errorf("phase %s: %w", phase, err)
	}
	into.Merge(h)
	return nil
}

// SetRates derives the throughput fields from the counters and Seconds.
func (p *PhaseResult) SetRates() {
	p.BytesPerSec, p.OpsPerSec, p.ItemsPerSec = 0, 0, 0
	if s := p.Seconds; s > 0 {
		p.BytesPerSec = float64(p.Bytes) / s
		p.OpsPerSec = float64(p.Ops) / s
		p.ItemsPerSec = float64(p.Items) / s
	}
}

// Shortfall says how far an open-loop phase fell behind its rate: the
// operations it scheduled and never began before its end; "" when it kept
// up.
func (p *PhaseResult) Shortfall() string {
	if p.Missed == 0 {
		return ""
	}
	return fmt.Sprintf("the rate was not kept: %d operations done, %d more scheduled before the end were not begun", p.Ops, p.Missed)
}
