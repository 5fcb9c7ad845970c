// Package compare sets two fsbench results side by side: per item old, new
// and the change in percent, for throughput and latency percentiles, and
// marks regressions beyond a threshold. It backs `fsbench compare` and the
// --baseline flag of the benchmark commands. It is pure: results in, a
// Report out, renderers for the Report.
//
// It measures nothing and reads no file: results in, a Report out.
package compare

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/verdict"
)

// SchemaVersion is the version of the JSON layout of a Report.
const SchemaVersion = 2

// ErrMismatch is wrapped when two results cannot be compared (different
// commands).
var ErrMismatch = errors.New("results cannot be compared")

// Kinds of compared figures, in the order rows show them. "throughput" is a
// phase's VALUE (MiB/s, files/s, objects/s); the percentiles are latencies.
var Kinds = []string{"throughput", "p50", "p90", "p99", "p999", "max"}

// Options tune a comparison.
type Options struct {
	// Threshold in percent: a throughput that drops by more, or a latency
	// that grows by more, is a regression. Nil marks no regressions.
	Threshold *float64
	// Kinds restricts the compared figures (see Kinds); nil means all.
	// Error counts are always compared when either side has errors.
	Kinds []string
}

// ParseThreshold reads a threshold such as "10%" or "10" (percent).
func ParseThreshold(s string) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("threshold %q: want a non-negative percentage such as 10%%", s)
	}
	return v, nil
}

// ParseKinds reads a comma-separated list of Kinds, e.g. "throughput,p99".
func ParseKinds(s string) ([]string, error) {
	var out []string
	for _, k := range strings.Split(s, ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		ok := false
		for _, x := range Kinds {
			ok = ok || x == k
		}
		if !ok {
			return nil, fmt.Errorf("unknown metric kind %q (want some of %s)", k, strings.Join(Kinds, ","))
		}
		out = append(out, k)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no metric kinds in %q (want some of %s)", s, strings.Join(Kinds, ","))
	}
	return out, nil
}

// Side describes one of the two results.
type Side struct {
	File      string    `json:"file,omitempty"`
	Version   string    `json:"version"`
	StartedAt time.Time `json:"started_at"`
	Target    string    `json:"target"`
}

// Statuses of an Item. A change is called better, worse or a regression
// only when it can be told from noise (see Compare); otherwise it is Same,
// shown as "~", with Note saying why.
const (
	Same       = "same"
	Better     = "better"
	Worse      = "worse"      // significantly worse, but not surely beyond the threshold (or no threshold)
	Regression = "regression" // significantly worse, its interval wholly beyond the threshold
	Missing    = "missing"    // only in the old result
	Added      = "added"      // only in the new result
	// TooFew marks a latency percentile with too few samples behind it to
	// judge (verdict.MinSamples), and the maximum, which is one sample.
	TooFew = "too few samples"
)

// Item is one compared figure of one phase.
type Item struct {
	// Metric is the --expect name of the figure: "write-big" for the
	// throughput, "write-big.p99" for a latency, "write-big.errors".
	Metric string `json:"metric"`
	Phase  string `json:"phase"`
	Kind   string `json:"kind"` // throughput, p50, p90, p99, p999, max, errors
	Unit   string `json:"unit"` // the throughput's unit, "us" or "errors"
	// Better is "higher" or "lower".
	Better string `json:"better"`
	// Old and New are nil when the phase is only in the other result.
	Old *float64 `json:"old"`
	New *float64 `json:"new"`
	// ChangePct is (new-old)/old in percent; nil when old is 0 or missing.
	ChangePct *float64 `json:"change_pct"`
	Status    string   `json:"status"`
	// OldRuns and NewRuns are how many runs (--repeat) each side holds.
	OldRuns int `json:"old_runs,omitempty"`
	NewRuns int `json:"new_runs,omitempty"`
	// P is the Mann-Whitney U test's p-value over the runs of both sides;
	// nil when either side has fewer than two runs.
	P *float64 `json:"p_value,omitempty"`
	// PAdjusted is P adjusted for the number of figures tested
	// (Benjamini-Hochberg over Report.Tested figures): the change is
	// significant when it is below Alpha.
	PAdjusted *float64 `json:"p_adjusted,omitempty"`
	// PBeyond is, with a threshold, the p-value of the same test of NEW
	// against OLD moved by the threshold (verdict.Beyond): below Alpha
	// when the change's confidence interval lies wholly beyond the
	// threshold; 1 when the change is not beyond it at all. A worse
	// change (PAdjusted below Alpha) is a regression when PBeyond is
	// below Alpha too.
	PBeyond *float64 `json:"p_beyond,omitempty"`
	// Note says why a change is Same or TooFew, or how a single-run
	// change beyond the threshold was judged.
	Note string `json:"note,omitempty"`

	p       float64 // P unrounded, when P is set
	pb      float64 // PBeyond unrounded, when PBeyond is set
	pending bool    // tested over runs: called by Report.call
}

// Report is the outcome of a comparison.
type Report struct {
	SchemaVersion int    `json:"schema_version"`
	Command       string `json:"command"`
	Old           Side   `json:"old"`
	New           Side   `json:"new"`
	// ThresholdPct is nil when no threshold was given.
	ThresholdPct *float64 `json:"threshold_pct"`
	Items        []Item   `json:"items"`
	Regressions  int      `json:"regressions"`
	Warnings     []string `json:"warnings,omitempty"`
	// OldRuns and NewRuns are the runs each result holds (1 without
	// --repeat); Alpha the significance level of the comparison.
	OldRuns int     `json:"old_runs"`
	NewRuns int     `json:"new_runs"`
	Alpha   float64 `json:"alpha"`
	// Tested is how many figures had runs on both sides and were tested;
	// their p-values are adjusted together (Item.PAdjusted), so that the
	// more figures a comparison judges, the stronger the evidence each
	// change needs.
	Tested int `json:"tested,omitempty"`
	// Verdict is the comparison in one sentence, as the table opens with.
	Verdict string `json:"verdict"`
}

// Compare sets old and new side by side. oldName and newName (file names)
// are only recorded. Results of different commands are an error wrapping
// ErrMismatch.
func Compare(old, new *report.Result, oldName, newName string, o Options) (*Report, error) {
	if old.Command != new.Command {
		return nil, fmt.Errorf("%w: %s is from fsbench %s, %s from fsbench %s", ErrMismatch, name(oldName, "OLD"), old.Command, name(newName, "NEW"), new.Command)
	}
	r := &Report{
		SchemaVersion: SchemaVersion,
		Command:       old.Command,
		Old:           side(old, oldName),
		New:           side(new, newName),
		ThresholdPct:  o.Threshold,
		OldRuns:       runs(old),
		NewRuns:       runs(new),
		Alpha:         verdict.Alpha,
	}
	kinds := o.Kinds
	if kinds == nil {
		kinds = Kinds
	}
	r.Warnings = append(r.Warnings, paramDiffs(old.Parameters, new.Parameters)...)
	if w := loadDiff(old, new); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	if old.Interrupted {
		r.Warnings = append(r.Warnings, "the OLD run was interrupted; its figures are partial")
	}
	if new.Interrupted {
		r.Warnings = append(r.Warnings, "the NEW run was interrupted; its figures are partial")
	}
	type pair struct {
		old, new report.PhaseResult
		from, to int // their items in r.Items
	}
	var pairs []pair
	for _, op := range old.Phases {
		np := new.FindPhase(op.Name)
		if np == nil {
			r.Items = append(r.Items, r.onlyOne(old, op, kinds, true)...)
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s is in OLD but not in NEW", op.Name))
			continue
		}
		for _, x := range []struct {
			label string
			p     report.PhaseResult
		}{{"OLD", op}, {"NEW", *np}} {
			if x.p.Incomplete {
				r.Warnings = append(r.Warnings, fmt.Sprintf("%s did not complete in %s; its figures are partial", op.Name, x.label))
			}
		}
		if w := originDiff(op, *np); w != "" {
			r.Warnings = append(r.Warnings, w)
		}
		items := r.both(figures(old, op, kinds), figures(new, *np, kinds), op, *np)
		pairs = append(pairs, pair{op, *np, len(r.Items), len(r.Items) + len(items)})
		r.Items = append(r.Items, items...)
	}
	r.call()
	var short []shortTime // phases too short for their called changes
	for _, p := range pairs {
		if t, ok := shortTimes(p.old, p.new, r.Items[p.from:p.to]); ok {
			short = append(short, t)
		}
	}
	if len(short) > 0 {
		r.Warnings = append(r.Warnings, shortDiff(short))
	}
	for _, np := range new.Phases {
		if old.FindPhase(np.Name) == nil {
			r.Items = append(r.Items, r.onlyOne(new, np, kinds, false)...)
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s is in NEW but not in OLD", np.Name))
		}
	}
	for _, it := range r.Items {
		if it.Status == Regression {
			r.Regressions++
		}
	}
	r.Verdict = r.verdict()
	return r, nil
}

// runs is how many runs a result holds: 1 without --repeat.
func runs(r *report.Result) int {
	return max(len(r.Runs), 1)
}

func name(file, fallback string) string {
	if file == "" {
		return fallback
	}
	return file
}

func side(r *report.Result, file string) Side {
	t := r.Target.Path
	if t == "" {
		t = r.Target.URL
	}
	return Side{File: file, Version: r.Version, StartedAt: r.StartedAt, Target: t}
}

// paramDiffs lists the parameters whose values differ, in the old order.
func paramDiffs(old, new report.Params) []string {
	var out []string
	for _, k := range paramKeys(old, new) {
		out = append(out, fmt.Sprintf("parameter %s differs: %s (OLD) vs %s (NEW)", k, showParam(old.Get(k)), showParam(new.Get(k))))
	}
	return out
}

// figure is one comparable number of a phase: its summary value and, for a
// repeated benchmark, each run's value.
type figure struct {
	kind, unit, better string
	ok                 bool
	v                  float64
	runs               []float64
	count              int64 // latency samples behind v
}

// figures are the compared numbers of phase p of result r, in kinds' order.
func figures(r *report.Result, p report.PhaseResult, kinds []string) []figure {
	var out []figure
	if p.Value.Unit == report.UnitNotSupported {
		return nil // an optional capability the store lacks: nothing measured
	}
	runs := runPhases(r, p.Name)
	for _, k := range kinds {
		f := figure{kind: k, unit: "us", better: "lower", ok: p.Latency.Count > 0, v: latency(p, k), count: p.Latency.Count}
		if k == "throughput" {
			f = figure{kind: k, unit: string(p.Value.Unit), better: "higher", ok: true, v: p.Value.Value}
		}
		for _, rp := range runs {
			if k == "throughput" {
				f.runs = append(f.runs, rp.Value.Value)
			} else if rp.Latency.Count > 0 {
				f.runs = append(f.runs, latency(rp, k))
			}
		}
		if len(f.runs) == 0 {
			f.runs = []float64{f.v}
		}
		out = append(out, f)
	}
	return out
}

func latency(p report.PhaseResult, kind string) float64 {
	l := p.Latency
	return map[string]float64{"p50": l.P50, "p90": l.P90, "p99": l.P99, "p999": l.P999, "max": l.Max}[kind]
}

// runPhases is phase name in each run of a repeated result; nil for a
// result of one run.
func runPhases(r *report.Result, name string) []report.PhaseResult {
	var out []report.PhaseResult
	for _, run := range r.Runs {
		for _, p := range run.Phases {
			if p.Name == name {
				out = append(out, p)
			}
		}
	}
	return out
}

func metricName(phase, kind string) string {
	if kind == "throughput" {
		return phase
	}
	return phase + "." + kind
}

func ptr(v float64) *float64 { return &v }

func (r *Report) onlyOne(res *report.Result, p report.PhaseResult, kinds []string, inOld bool) []Item {
	var out []Item
	for _, f := range figures(res, p, kinds) {
		if !f.ok {
			continue
		}
		it := Item{Metric: metricName(p.Name, f.kind), Phase: p.Name, Kind: f.kind, Unit: f.unit, Better: f.better, Status: Added}
		if inOld {
			it.Old, it.Status = ptr(f.v), Missing
		} else {
			it.New = ptr(f.v)
		}
		out = append(out, it)
	}
	return out
}

func (r *Report) both(of, nf []figure, op, np report.PhaseResult) []Item {
	var out []Item
	if len(of) != len(nf) {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s is supported in only one of the results, not compared", op.Name))
		return nil
	}
	for i := range of {
		a, b := of[i], nf[i]
		if !a.ok || !b.ok {
			continue // no latency samples on one side
		}
		if a.unit != b.unit {
			r.Warnings = append(r.Warnings, fmt.Sprintf("%s: unit %s (OLD) vs %s (NEW), not compared", op.Name, a.unit, b.unit))
			continue
		}
		out = append(out, r.judge(metricName(op.Name, a.kind), op.Name, a, b))
	}
	if op.Errors > 0 || np.Errors > 0 {
		out = append(out, r.errorsItem(op, np))
	}
	return out
}

// judge compares one figure of a phase. A change is called only when it
// can be told from noise: with runs on both sides (--repeat), when a
// Mann-Whitney U test over them is significant at verdict.Alpha after the
// p-values of all figures tested are adjusted together (Report.call), and
// with a threshold it is a regression when its change (of the medians) is
// also beyond it; with one run on a side nothing separates a change from
// noise, so only a change beyond the threshold is called. A latency
// percentile with too few samples, and the maximum, are never judged.
func (r *Report) judge(metric, phase string, a, b figure) Item {
	it := Item{Metric: metric, Phase: phase, Kind: a.kind, Unit: a.unit, Better: a.better, Old: ptr(a.v), New: ptr(b.v),
		Status: Same, OldRuns: len(a.runs), NewRuns: len(b.runs)}
	if a.v != 0 {
		it.ChangePct = ptr(round((b.v - a.v) / a.v * 100))
	}
	if a.kind != "throughput" && !verdict.Judgeable(a.kind, min(a.count, b.count)) {
		it.Status, it.Note = TooFew, tooFewNote(a.kind, min(a.count, b.count))
		return it
	}
	t := verdict.Compare(a.runs, b.runs)
	if !math.IsNaN(t.P) {
		it.P, it.p = ptr(round3(t.P)), t.P
		if r.ThresholdPct != nil {
			it.pb = verdict.Beyond(a.runs, b.runs, *r.ThresholdPct, a.better == "higher")
			it.PBeyond = ptr(round3(it.pb))
		}
	}
	switch {
	case a.v == b.v:
		return it
	case len(a.runs) >= 2 && len(b.runs) >= 2:
		it.pending = true
		return it
	case !r.beyond(it):
		it.Note = "one run a side: cannot be told from noise (--repeat)"
		return it
	}
	it.Note = "one run a side: beyond the threshold, noise unknown (--repeat)"
	it.Status = r.status(it)
	return it
}

// beyond reports whether it changed by more than the threshold.
func (r *Report) beyond(it Item) bool {
	return r.ThresholdPct != nil && (it.ChangePct == nil || math.Abs(*it.ChangePct) > *r.ThresholdPct)
}

// status is the status of a change of it that was called: better, worse,
// or a regression when worse beyond the threshold.
func (r *Report) status(it Item) string {
	switch {
	case (*it.New < *it.Old) != (it.Better == "higher"):
		return Better
	case r.beyond(it):
		return Regression
	}
	return Worse
}

// call adjusts the p-values of every figure tested over runs together
// (verdict.AdjustBH) and calls the changes whose adjusted p-value is
// below verdict.Alpha: judged one by one at 5%, one of 15 unchanged
// figures would be called about every second comparison. With a
// threshold, a worse change is a regression only when its test against
// the threshold (PBeyond) is below verdict.Alpha too: when its confidence
// interval lies wholly beyond the threshold, not merely its point
// estimate. Runs of one job drift together (the machine's load, a
// server's pace), and a drift of about the threshold's size is what an
// interval reaching back within the threshold leaves uncalled.
func (r *Report) call() {
	var idx []int
	var ps []float64
	for i, it := range r.Items {
		if it.P != nil {
			idx, ps = append(idx, i), append(ps, it.p)
		}
	}
	r.Tested = len(idx)
	for k, q := range verdict.AdjustBH(ps) {
		it := &r.Items[idx[k]]
		it.PAdjusted = ptr(round3(q))
		switch {
		case !it.pending:
			continue
		case q < verdict.Alpha:
			it.Status = r.status(*it)
			if it.Status == Regression && !(it.pb < verdict.Alpha) {
				it.Status = Worse
				it.Note = fmt.Sprintf("its %g%% interval reaches within %s%%: p=%.2f against the threshold", 100-verdict.Alpha*100, fmtPct(*r.ThresholdPct), it.pb)
			}
			continue
		}
		it.Note = r.sameNote(*it, q, len(idx))
	}
}

// sameNote says why a change tested over runs was not called: its
// p-value, adjusted for the n figures tested (q).
func (r *Report) sameNote(it Item, q float64, n int) string {
	note := fmt.Sprintf("p=%.2f", it.p)
	if n > 1 {
		note += fmt.Sprintf(", %.2f adjusted for %d figures", q, n)
	}
	if minRuns := verdict.Compare(nil, nil).MinRuns; it.OldRuns < minRuns || it.NewRuns < minRuns {
		note += fmt.Sprintf(": %d runs a side are needed to tell a change at %g%%", minRuns, verdict.Alpha*100)
	}
	return note
}

// tooFewNote says why a latency figure is not judged.
func tooFewNote(kind string, count int64) string {
	if kind == "max" {
		return "the maximum is one operation"
	}
	return fmt.Sprintf("%s needs %d samples, has %d", kind, verdict.MinSamples(kind), count)
}

// errorsItem compares the error counts: errors are counted, not
// estimated, so any rise is worse, and with a threshold a regression when
// beyond it (a rise from none always is).
func (r *Report) errorsItem(op, np report.PhaseResult) Item {
	old, new := float64(op.Errors), float64(np.Errors)
	it := Item{Metric: op.Name + ".errors", Phase: op.Name, Kind: "errors", Unit: "errors", Better: "lower",
		Old: ptr(old), New: ptr(new), Status: Same}
	if old != 0 {
		it.ChangePct = ptr(round((new - old) / old * 100))
	}
	switch {
	case new < old:
		it.Status = Better
	case new > old:
		it.Status = Worse
		// The change is judged as shown (to 0.01%), so that float noise
		// cannot make exactly 10% worse a regression at 10%.
		if t := r.ThresholdPct; t != nil && (it.ChangePct == nil || math.Abs(*it.ChangePct) > *t) {
			it.Status = Regression
		}
	}
	return it
}

func round(v float64) float64 { return math.Round(v*100) / 100 }

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }
