package report

import (
	"fmt"
	"io"
	"math"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/units"
)

// Training holds the figures of an emulated training run (fsbench train):
// accelerator utilisation (AU) per rank and epoch, as DLIO defines it, and
// what a search for the largest passing accelerator count tried.
type Training struct {
	Model       string `json:"model"`
	Accelerator string `json:"accelerator"`
	// Accelerators is the number of emulated accelerators (ranks), on all
	// hosts together.
	Accelerators int `json:"accelerators"`
	Epochs       int `json:"epochs"`
	// Steps is the batches each rank computes per epoch; BatchSize the
	// samples of one batch.
	Steps     int   `json:"steps_per_epoch"`
	BatchSize int   `json:"batch_size"`
	Samples   int64 `json:"samples"` // read: Steps x BatchSize x Accelerators x Epochs
	// Dropped is the samples of the dataset no rank reads in an epoch:
	// those not filling a whole batch of a rank (DLIO's drop_last).
	Dropped        int64   `json:"dropped_per_epoch"`
	ComputeSeconds float64 `json:"compute_seconds"` // per step
	// ComputeMeasured is the mean time a measured step's computation (a
	// sleep) took: more than ComputeSeconds when the client is too busy
	// to wake its accelerators on time.
	ComputeMeasured float64 `json:"compute_measured_seconds"`
	Threshold       float64 `json:"au_threshold_pct"`
	// AU is the mean of the epochs' AU, percent; AUStdev their standard
	// deviation. Pass is AU >= Threshold, the figure alone (--find-max
	// searches on it); Verdict judges it with its interval.
	AU      float64 `json:"au_pct"`
	AUStdev float64 `json:"au_stdev_pct"`
	Pass    bool    `json:"pass"`
	// MeasuredSteps counts the steps AU is measured over (each epoch's
	// first excluded) on every rank, host and run; WaitHistogram holds
	// their waits for a batch, encoded as PhaseResult.Histogram, so that hosts
	// and runs merge.
	MeasuredSteps int64  `json:"measured_steps,omitempty"`
	WaitHistogram string `json:"wait_histogram,omitempty"`
	// AULow and AUHigh bound the AU at AUConfidence (verdict.JudgeAU);
	// nil when there are no measured steps to bound it with.
	AULow        *float64 `json:"au_low_pct,omitempty"`
	AUHigh       *float64 `json:"au_high_pct,omitempty"`
	AUConfidence float64  `json:"au_confidence,omitempty"`
	// Verdict is VerdictPass when the interval is at or above Threshold,
	// VerdictFail when it is entirely below, else VerdictTooShort, as it
	// is with too few measured steps; VerdictReason says why.
	Verdict       string      `json:"verdict,omitempty"`
	VerdictReason string      `json:"verdict_reason,omitempty"`
	EpochAU       []EpochAU   `json:"epochs_au,omitempty"`
	Ranks         []RankTrain `json:"ranks,omitempty"`
	// SamplesPerSec and BytesPerSec are over the training phase's time.
	SamplesPerSec float64 `json:"samples_per_sec"`
	BytesPerSec   float64 `json:"bytes_per_sec"`
	DatasetBytes  int64   `json:"dataset_bytes"`
	// MemoryBytes is the memory of the client hosts, added up.
	MemoryBytes int64   `json:"memory_bytes,omitempty"`
	FindMax     []Trial `json:"find_max,omitempty"`
}

// EpochAU is one epoch's AU: the mean and standard deviation over ranks.
type EpochAU struct {
	Epoch   int     `json:"epoch"`
	Mean    float64 `json:"au_pct"`
	Stdev   float64 `json:"au_stdev_pct"`
	Seconds float64 `json:"seconds"`
}

// RankTrain is what one rank measured, per epoch: the time it computed
// and the wall time, both from the end of the epoch's first step.
type RankTrain struct {
	Rank    int         `json:"rank"`
	Host    string      `json:"host,omitempty"`
	Epochs  []RankEpoch `json:"epochs"`
	Samples int64       `json:"samples"`
}

// RankEpoch is one rank's epoch.
type RankEpoch struct {
	Compute float64 `json:"compute_s"`
	Wall    float64 `json:"wall_s"`
	Seconds float64 `json:"seconds"` // the whole epoch, first step included
}

// AU is the epoch's accelerator utilisation, percent; NaN without time.
func (e RankEpoch) AU() float64 {
	if e.Wall <= 0 {
		return math.NaN()
	}
	return 100 * e.Compute / e.Wall
}

// Trial is one accelerator count tried by a search for the maximum.
type Trial struct {
	Accelerators int     `json:"accelerators"`
	AU           float64 `json:"au_pct"`
	Pass         bool    `json:"pass"`
}

// Summarize computes the epochs' AU, the mean, deviation and verdict from
// the ranks' figures.
func (t *Training) Summarize() {
	t.EpochAU = t.EpochAU[:0]
	var means []float64
	for e := 0; e < t.Epochs; e++ {
		var aus []float64
		var secs float64
		for _, r := range t.Ranks {
			if e < len(r.Epochs) && !math.IsNaN(r.Epochs[e].AU()) {
				aus = append(aus, r.Epochs[e].AU())
				secs = max(secs, r.Epochs[e].Seconds)
			}
		}
		if len(aus) == 0 {
			continue
		}
		m, s := MeanStdev(aus)
		t.EpochAU = append(t.EpochAU, EpochAU{Epoch: e + 1, Mean: m, Stdev: s, Seconds: secs})
		means = append(means, m)
	}
	t.AU, t.AUStdev = MeanStdev(means)
	t.ComputeMeasured = t.measuredCompute()
	t.Pass = len(means) > 0 && t.AU >= t.Threshold
}

// measuredCompute is the mean computation of a measured step.
func (t *Training) measuredCompute() float64 {
	var sum float64
	var n int
	for _, r := range t.Ranks {
		for _, e := range r.Epochs {
			sum += e.Compute
			n += t.Steps - 1
		}
	}
	if n <= 0 {
		return 0
	}
	return sum / float64(n)
}

// Overrun is how much longer than asked the accelerators computed, as a
// fraction (0.1: 10% longer); 0 without computation.
func (t *Training) Overrun() float64 {
	if t.ComputeSeconds <= 0 {
		return 0
	}
	return t.ComputeMeasured/t.ComputeSeconds - 1
}

// MeanStdev is the mean and population standard deviation of xs; 0, 0
// for none.
func MeanStdev(xs []float64) (mean, stdev float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	for _, x := range xs {
		stdev += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(stdev / float64(len(xs)))
}

// MergeTraining combines the training figures of the hosts or runs of
// a benchmark: their ranks side by side, their measured waits merged, the
// AU recomputed over all of them. The verdict is left to be judged again
// (verdict.JudgeAU).
func MergeTraining(parts []*Training) (*Training, error) {
	var out *Training
	waits := metrics.NewHistogram()
	for _, t := range parts {
		if t == nil {
			continue
		}
		if out == nil {
			c := *t
			c.Ranks, c.Accelerators, c.Samples, c.MemoryBytes, c.EpochAU, c.MeasuredSteps = nil, 0, 0, 0, nil, 0
			c.AULow, c.AUHigh, c.AUConfidence, c.Verdict, c.VerdictReason = nil, nil, 0, "", ""
			out = &c
		}
		if err := mergeEncoded(waits, t.WaitHistogram, t.MeasuredSteps, "train"); err != nil {
			return nil, fmt.Errorf("waits of the measured steps: %w", err)
		}
		out.Ranks = append(out.Ranks, t.Ranks...)
		out.Accelerators += len(t.Ranks)
		out.Samples += t.Samples
		out.MemoryBytes += t.MemoryBytes
		out.MeasuredSteps += t.MeasuredSteps
	}
	if out == nil {
		return nil, nil
	}
	enc, err := encodeIfAny(waits)
	if err != nil {
		return nil, fmt.Errorf("waits of the measured steps: %w", err)
	}
	out.WaitHistogram = enc
	out.Summarize()
	return out, nil
}

// SetWaits records the measured steps' waits for a batch, h.
func (t *Training) SetWaits(h *metrics.Histogram) error {
	enc, err := encodeIfAny(h)
	if err != nil {
		return fmt.Errorf("waits of the measured steps: %w", err)
	}
	t.MeasuredSteps, t.WaitHistogram = h.Count(), enc
	return nil
}

// Waits decodes the measured steps' waits; nil when none were kept.
func (t *Training) Waits() (*metrics.Histogram, error) {
	if t.WaitHistogram == "" {
		return nil, nil
	}
	h, err := metrics.Decode(t.WaitHistogram)
	if err != nil {
		return nil, fmt.Errorf("waits of the measured steps: %w", err)
	}
	return h, nil
}

// outcome is the AU's verdict as the table shows it, and its colour.
func (t *Training) outcome() (string, Grade) {
	switch {
	case t.Verdict == VerdictTooShort:
		return "TOO SHORT TO JUDGE", Fair
	case t.Verdict == VerdictPass, t.Verdict == "" && t.Pass:
		return "PASS", Good
	}
	return "FAIL", Poor
}

// writeTraining writes the training block of the table.
func writeTraining(w io.Writer, t *Training, o Options) {
	if t == nil {
		return
	}
	fmt.Fprintf(w, "Training: %s on %d emulated %s, %s of %s x %s per accelerator (%d read, %d dropped per epoch)\n",
		t.Model, t.Accelerators, t.Accelerator, units.Count(t.Epochs, "epoch"), units.Count(t.Steps, "step"), units.Count(t.BatchSize, "sample"), t.Samples, t.Dropped)
	interval := ""
	if t.AULow != nil && t.AUHigh != nil {
		interval = fmt.Sprintf("%g%% interval %.2f-%.2f%% over %d measured steps, ", 100*t.AUConfidence, *t.AULow, *t.AUHigh, t.MeasuredSteps)
	}
	verdict, g := t.outcome()
	if t.VerdictReason != "" && verdict != "PASS" {
		verdict += ": " + t.VerdictReason
	}
	fmt.Fprintf(w, "AU: %.2f%% (%sstdev %.2f%% over epochs), threshold %g%%: %s\n", t.AU, interval, t.AUStdev, t.Threshold, paint(o, g, verdict))
	for _, e := range t.EpochAU {
		fmt.Fprintf(w, "  epoch %d: AU %.2f%% (stdev %.2f%% over accelerators), %.2f s\n", e.Epoch, e.Mean, e.Stdev, e.Seconds)
	}
	fmt.Fprintf(w, "Throughput: %.1f samples/s, %.2f MiB/s; compute per step: %s asked, %s measured\n", t.SamplesPerSec,
		t.BytesPerSec/float64(units.MiB), units.FormatLatency(t.ComputeSeconds*1e6), units.FormatLatency(t.ComputeMeasured*1e6))
	for _, tr := range t.FindMax {
		res := "fail"
		if tr.Pass {
			res = "pass"
		}
		fmt.Fprintf(w, "  find-max: %d accelerators: AU %.2f%% %s\n", tr.Accelerators, tr.AU, res)
	}
}
