// Package capacity answers "how much load does this storage carry while
// its latency stays acceptable": a latency objective (--slo 'p99<5ms'),
// the search over an open loop's rate for the highest rate at which the
// objective holds, and the latency-throughput curve (--curve) at stated
// fractions of the closed-loop maximum.
//
// It runs nothing itself: the caller gives a Probe, "run the workload at
// this rate (0: flat out) and return the measurement", so the search is
// the same for files, objects and training data, and testable with a
// model of a queue in place of storage. It imports only metrics.
package capacity

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrBadSLO is wrapped by every error of ParseSLO and ParseCurve.
var ErrBadSLO = errors.New("invalid objective")

// Objective is one clause of a latency objective: a percentile or the
// mean of the response time below a bound, or the share of operations
// that failed below a bound.
type Objective struct {
	// Stat is "p99", "p99.9", "mean" or "errors".
	Stat string
	// Q is the quantile of a percentile (0.99 for p99); 0 otherwise.
	Q float64
	// OrEqual makes the bound inclusive (<=).
	OrEqual bool
	// Bound is the latency bound; ErrorPct the error bound in percent.
	Bound    time.Duration
	ErrorPct float64
}

// SLO is a latency objective: every clause must hold.
type SLO []Objective

// ParseSLO reads an objective: clauses such as p99<5ms, p50<=1ms,
// mean<2ms or errors<1%, joined by commas or the word "and". A
// percentile is p followed by a number between 0 and 100 (p99, p99.9,
// p50); a latency bound takes ns, us, ms or s.
func ParseSLO(s string) (SLO, error) {
	text := strings.TrimSpace(s)
	if text == "" {
		return nil, fmt.Errorf("%w: empty: want e.g. p99<5ms or p99<5ms,p50<1ms", ErrBadSLO)
	}
	var out SLO
	for _, part := range splitAnd(text) {
		o, err := parseObjective(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrBadSLO, strings.TrimSpace(part), err)
		}
		out = append(out, o)
	}
	return out, nil
}

// splitAnd splits at commas and at the word "and" (any case, or &&); an
// empty clause stays, for the parser to refuse.
func splitAnd(s string) []string {
	var out []string
	for _, f := range strings.Split(strings.ReplaceAll(s, "&&", ","), ",") {
		cur := ""
		for _, w := range strings.Fields(f) {
			if strings.EqualFold(w, "and") {
				out = append(out, cur)
				cur = ""
				continue
			}
			cur += w
		}
		out = append(out, cur)
	}
	return out
}

func parseObjective(s string) (Objective, error) {
	if s == "" {
		return Objective{}, errors.New("empty clause")
	}
	i := strings.IndexAny(s, "<>=")
	if i <= 0 {
		return Objective{}, errors.New("want STAT<BOUND, e.g. p99<5ms, mean<2ms or errors<1%")
	}
	stat, rest := strings.ToLower(s[:i]), s[i:]
	var o Objective
	switch {
	case strings.HasPrefix(rest, "<="):
		o.OrEqual, rest = true, rest[2:]
	case strings.HasPrefix(rest, "<"):
		rest = rest[1:]
	default:
		return Objective{}, errors.New("an objective is an upper bound: use < or <=")
	}
	rest = strings.TrimSpace(rest)
	if err := o.setStat(stat); err != nil {
		return Objective{}, err
	}
	if o.Stat == "errors" {
		return o, o.setErrorBound(rest)
	}
	d, err := parseLatency(rest)
	if err != nil {
		return Objective{}, err
	}
	if d <= 0 && !o.OrEqual {
		return Objective{}, errors.New("a latency below 0 never holds")
	}
	o.Bound = d
	return o, nil
}

// setStat reads the statistic: pNN, mean or errors.
func (o *Objective) setStat(stat string) error {
	switch {
	case stat == "mean" || stat == "errors":
		o.Stat = stat
		return nil
	case strings.HasPrefix(stat, "p"):
		v, err := strconv.ParseFloat(stat[1:], 64)
		if err != nil || !(v > 0 && v < 100) || strings.ContainsAny(stat[1:], "eE+-") {
			return fmt.Errorf("percentile %q: want p followed by a number above 0 and below 100 (p50, p99, p99.9)", stat)
		}
		o.Stat, o.Q = stat, v/100
		return nil
	}
	return fmt.Errorf("unknown statistic %q (want a percentile such as p99, mean, or errors)", stat)
}

// setErrorBound reads an error bound: a percentage (1%), or 0.
func (o *Objective) setErrorBound(v string) error {
	num := strings.TrimSuffix(v, "%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	switch {
	case err != nil || math.IsNaN(f) || math.IsInf(f, 0):
		return fmt.Errorf("error bound %q: want a percentage such as 1%%", v)
	case num == v && f != 0:
		return fmt.Errorf("error bound %q: give a percentage (%g%%)", v, f)
	case f < 0 || f > 100:
		return fmt.Errorf("error bound %q: want a percentage between 0 and 100", v)
	case f == 0 && !o.OrEqual:
		return errors.New("errors<0% never holds: write errors<=0% for no errors at all")
	}
	o.ErrorPct = f
	return nil
}

// parseLatency reads a non-negative duration with its unit.
func parseLatency(v string) (time.Duration, error) {
	i := 0
	for i < len(v) && (v[i] >= '0' && v[i] <= '9' || v[i] == '.') {
		i++
	}
	f, err := strconv.ParseFloat(v[:i], 64)
	if i == 0 || err != nil {
		return 0, fmt.Errorf("bound %q is not a latency such as 5ms", v)
	}
	scale := map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}[strings.ToLower(strings.TrimSpace(v[i:]))]
	switch {
	case strings.TrimSpace(v[i:]) == "":
		return 0, fmt.Errorf("bound %q needs a unit: ns, us, ms or s", v)
	case scale == 0:
		return 0, fmt.Errorf("bound %q: unknown unit %q (want ns, us, ms or s)", v, v[i:])
	case f*scale > float64(time.Hour):
		return 0, fmt.Errorf("bound %q is above an hour", v)
	}
	return time.Duration(math.Round(f * scale)), nil
}

// formatLatency writes d in the largest unit it fills (1.5s, 500µs) and that
// parseLatency reads back to the same nanosecond, so 100s stays 100s where
// time.Duration would say 1m40s.
func formatLatency(d time.Duration) string {
	for _, u := range []struct {
		name string
		ns   time.Duration
	}{{"s", time.Second}, {"ms", time.Millisecond}, {"µs", time.Microsecond}} {
		if d < u.ns {
			continue
		}
		v := float64(d) / float64(u.ns)
		if time.Duration(math.Round(v*float64(u.ns))) == d {
			return strconv.FormatFloat(v, 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// String is the clause in canonical form: p99<5ms, errors<=0%.
func (o Objective) String() string {
	op := "<"
	if o.OrEqual {
		op = "<="
	}
	if o.Stat == "errors" {
		return o.Stat + op + strconv.FormatFloat(o.ErrorPct, 'g', -1, 64) + "%"
	}
	return o.Stat + op + formatLatency(o.Bound)
}

// String is the objective in canonical form, clauses joined by commas.
func (s SLO) String() string {
	parts := make([]string, len(s))
	for i, o := range s {
		parts[i] = o.String()
	}
	return strings.Join(parts, ",")
}

// MinOps is the number of operations a probe needs for every clause to be
// judged: ten beyond the percentile (1000 for p99, 10000 for p99.9), as
// package verdict asks, and at least 100.
func (s SLO) MinOps() int64 {
	n := int64(100)
	for _, o := range s {
		if o.Q > 0 {
			n = max(n, int64(math.Ceil(10/(1-o.Q)-1e-6)))
		}
	}
	return n
}

// DefaultCurve is vdbench's curve: these percents of the maximum.
var DefaultCurve = []float64{10, 50, 70, 80, 90, 100}

// ParseCurve reads --curve's percents of the maximum rate, e.g.
// 10,50,70,80,90,95,100 (a trailing % is allowed); each above 0 and at
// most 100.
func ParseCurve(s string) ([]float64, error) {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		t := strings.TrimSuffix(strings.TrimSpace(f), "%")
		v, err := strconv.ParseFloat(t, 64)
		if err != nil || !(v > 0 && v <= 100) {
			return nil, fmt.Errorf("curve %q: %q is not a percent of the maximum rate above 0 and at most 100 (e.g. 10,50,70,80,90,100)", s, strings.TrimSpace(f))
		}
		out = append(out, v)
	}
	return out, nil
}
