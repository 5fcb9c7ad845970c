// Package expect parses and evaluates the --expect clauses of fsbench's CI
// smoke mode: NAME OP VALUE, for example "write-big>=200MiB/s",
// "stat.p99<5ms" or "errors==0".
//
// Parsing checks only the syntax and the unit; Check then tells whether the
// metric exists for a command (bench, objbench, ...) and whether the unit
// fits it, so that a mistake is a usage error before anything runs. Eval
// measures a clause against a finished report.Result.
//
// It measures nothing and reads no file, and judges only through package
// verdict, so that a clause and compare agree on what is significant.
package expect

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
)

// ErrSyntax is wrapped by every error of Parse, ParseLines and Check.
var ErrSyntax = errors.New("invalid expectation")

// Op is a comparison operator.
type Op string

// The operators an expectation may use.
const (
	GE Op = ">="
	GT Op = ">"
	LE Op = "<="
	LT Op = "<"
	EQ Op = "=="
)

// Holds reports whether "measured OP want" is true.
func (o Op) Holds(measured, want float64) bool {
	switch o {
	case GE:
		return measured >= want
	case GT:
		return measured > want
	case LE:
		return measured <= want
	case LT:
		return measured < want
	case EQ:
		return measured == want
	}
	return false
}

// Dim is the dimension of a value: what its unit measures.
type Dim int

// Dimensions of values.
const (
	Count    Dim = iota // a plain number, no unit (errors)
	ByteRate            // bytes per second: MiB/s, GiB/s, ...
	ItemRate            // files, objects or samples completed per second
	OpRate              // timed operations per second
	Latency             // a duration: us, ms, s
	Bool                // pass or fail (functional)
	Percent             // a share in percent (from_storage)
)

func (d Dim) String() string {
	switch d {
	case Count:
		return "a count without unit"
	case ByteRate:
		return "a throughput in bytes (KiB/s, MiB/s, GiB/s)"
	case ItemRate:
		return "a rate of files, objects or samples (files/s, objects/s, samples/s)"
	case OpRate:
		return "a rate of operations (ops/s)"
	case Latency:
		return "a latency (us, ms, s)"
	case Bool:
		return "pass"
	case Percent:
		return "a percentage (%)"
	}
	return "unknown"
}

// Unit is a unit an expectation may carry. Factor converts a value in this
// unit to the base unit of its dimension: bytes/s, items/s, ops/s or
// microseconds.
type Unit struct {
	Name   string // canonical spelling, e.g. "MiB/s"
	Dim    Dim
	Factor float64
}

// units lists the accepted units by their lower-case spelling. As with sizes
// on fsbench's command line (and in JuiceFS), KB, MB and GB are binary:
// "MB/s" is the same as "MiB/s".
var units = map[string]Unit{
	"b/s":       {"B/s", ByteRate, 1},
	"kib/s":     {"KiB/s", ByteRate, 1 << 10},
	"mib/s":     {"MiB/s", ByteRate, 1 << 20},
	"gib/s":     {"GiB/s", ByteRate, 1 << 30},
	"tib/s":     {"TiB/s", ByteRate, 1 << 40},
	"kb/s":      {"KiB/s", ByteRate, 1 << 10},
	"mb/s":      {"MiB/s", ByteRate, 1 << 20},
	"gb/s":      {"GiB/s", ByteRate, 1 << 30},
	"tb/s":      {"TiB/s", ByteRate, 1 << 40},
	"files/s":   {"files/s", ItemRate, 1},
	"objects/s": {"objects/s", ItemRate, 1},
	"samples/s": {"samples/s", ItemRate, 1},
	"ops/s":     {"ops/s", OpRate, 1},
	"us":        {"us", Latency, 1},
	"µs":        {"us", Latency, 1},
	"ms":        {"ms", Latency, 1e3},
	"s":         {"s", Latency, 1e6},
	"%":         {"%", Percent, 1},
}

// UnitNames lists the canonical unit spellings, for help texts.
func UnitNames() []string {
	return []string{"B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s", "files/s", "objects/s", "samples/s", "ops/s", "us", "ms", "s", "%"}
}

// Stats are the suffixes that select a latency of a phase, and "errors",
// which selects its error count.
var Stats = []string{"p50", "p90", "p99", "p999", "max"}

// Expr is one parsed expectation.
type Expr struct {
	Text string // as written, trimmed
	// Metric is the full metric name, e.g. "stat.p99"; Name is the phase
	// part ("stat", or "errors", "functional") and Stat the suffix ("p99",
	// "errors", or "" for the phase's throughput).
	Metric string
	Name   string
	Stat   string
	Op     Op
	Value  float64 // in Unit
	Unit   Unit    // Name is "" for a count
}

// Dim is the dimension the expression's value is in.
func (e Expr) Dim() Dim {
	switch {
	case e.Name == Functional || e.Stat == VsHistory:
		return Bool
	case e.Unit.Name == "":
		return Count
	}
	return e.Unit.Dim
}

// String renders e in canonical form; Parse(e.String()) gives e back
// (except Text).
func (e Expr) String() string {
	if e.Name == Functional {
		return Functional
	}
	if e.Stat == VsHistory {
		return e.Metric
	}
	return e.Metric + string(e.Op) + strconv.FormatFloat(e.Value, 'g', -1, 64) + e.Unit.Name
}

// Names with a meaning of their own.
const (
	// FromStorage is NAME.from_storage: the share of a read phase's bytes
	// that reached the storage under test, in percent (report.Origin).
	FromStorage = "from_storage"
	// Errors is the total error count of a run; NAME.errors is one phase's.
	Errors = "errors"
	// Functional is "every functional check passed" (objbench).
	Functional = "functional"
	// VsHistory is NAME.vs_history: the phase's throughput is not outside
	// what its series in the run's --history allows (fsbench history
	// check). The command evaluates it, not Eval, which needs no history.
	VsHistory = "vs_history"
	// Capacity is the highest open-loop rate at which --slo's latency
	// objective held (report.CapacityAnswer), in ops/s or bytes/s.
	Capacity = "capacity"
)

// Parse reads one expectation: NAME OP VALUE[UNIT], blanks allowed between
// the parts. NAME is a metric name with an optional suffix (.p50, .p90,
// .p99, .p999, .max, .errors, .from_storage); OP is >=, >, <=, < or ==; VALUE is a
// non-negative decimal number. The bare name "functional" (or
// "functional==pass") asks that all functional checks passed.
func Parse(s string) (Expr, error) {
	text := strings.TrimSpace(s)
	e, err := parse(text)
	if err != nil {
		return Expr{}, fmt.Errorf("%w %q: %s", ErrSyntax, text, err)
	}
	return e, nil
}

// functionalUse is how a functional expectation is written.
const functionalUse = "functional can only be tested with functional==pass (or just: functional)"

func parse(text string) (Expr, error) {
	if text == "" {
		return Expr{}, errors.New("empty")
	}
	functional := Expr{Text: text, Metric: Functional, Name: Functional, Op: EQ, Value: 1}
	i := strings.IndexAny(text, "<>=!")
	if i < 0 {
		if text == Functional {
			return functional, nil
		}
		if base, ok := strings.CutSuffix(text, "."+VsHistory); ok {
			return vsHistory(text, base, EQ, "pass")
		}
		return Expr{}, errors.New("want NAME OP VALUE, e.g. write-big>=200MiB/s (operators: >=, >, <=, <, ==)")
	}
	name := strings.TrimSpace(text[:i])
	op, err := parseOp(text[i:])
	if err != nil {
		return Expr{}, err
	}
	rest := strings.TrimSpace(text[i+len(op):])
	if name == "" {
		return Expr{}, fmt.Errorf("no metric name before %s", op)
	}
	metric, base, stat, err := splitName(name)
	if err != nil {
		return Expr{}, err
	}
	if stat == VsHistory {
		return vsHistory(text, base, op, rest)
	}
	if base == Functional {
		switch {
		case stat != "":
			return Expr{}, errors.New("functional takes no suffix")
		case op != EQ || !isPass(rest):
			return Expr{}, errors.New(functionalUse)
		}
		return functional, nil
	}
	e := Expr{Text: text, Metric: metric, Name: base, Stat: stat, Op: op}
	if rest == "" {
		return Expr{}, fmt.Errorf("no value after %s", op)
	}
	if e.Value, e.Unit, err = parseValue(rest); err != nil {
		return Expr{}, err
	}
	return e, nil
}

// vsHistory is NAME.vs_history, bare or "==pass".
func vsHistory(text, base string, op Op, rest string) (Expr, error) {
	if _, _, _, err := splitName(base); err != nil || base == "" {
		return Expr{}, fmt.Errorf("no metric name before .%s", VsHistory)
	}
	if op != EQ || !isPass(rest) {
		return Expr{}, fmt.Errorf("%s can only be tested with %s.%s==pass (or just: %s.%s)", VsHistory, base, VsHistory, base, VsHistory)
	}
	return Expr{Text: text, Metric: base + "." + VsHistory, Name: base, Stat: VsHistory, Op: EQ, Value: 1}, nil
}

func isPass(s string) bool {
	switch strings.ToLower(s) {
	case "pass", "true", "1":
		return true
	}
	return false
}

// parseOp reads the operator that starts rest.
func parseOp(rest string) (Op, error) {
	switch {
	case strings.HasPrefix(rest, ">="):
		return GE, nil
	case strings.HasPrefix(rest, "<="):
		return LE, nil
	case strings.HasPrefix(rest, "=="):
		return EQ, nil
	case strings.HasPrefix(rest, "!="):
		return "", errors.New("!= is not supported; use >=, >, <=, < or ==")
	case strings.HasPrefix(rest, "=>"), strings.HasPrefix(rest, "=<"):
		return "", fmt.Errorf("write %c= instead of =%c", rest[1], rest[1])
	case rest[0] == '=':
		return "", errors.New("use == to test equality")
	case rest[0] == '>':
		return GT, nil
	case rest[0] == '<':
		return LT, nil
	}
	return "", nil
}

// parseValue reads VALUE[UNIT].
func parseValue(rest string) (float64, Unit, error) {
	n := numberPrefix(rest)
	if n == 0 {
		return 0, Unit{}, fmt.Errorf("value %q is not a number", rest)
	}
	v, err := strconv.ParseFloat(rest[:n], 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, Unit{}, fmt.Errorf("value %q is not a number", rest[:n])
	}
	unitText := strings.TrimSpace(rest[n:])
	if unitText == "" {
		return v, Unit{}, nil
	}
	if bitRate(unitText) {
		return 0, Unit{}, fmt.Errorf("unit %q is in bits; fsbench measures bytes: write KiB/s, MiB/s or GiB/s", unitText)
	}
	u, ok := units[strings.ToLower(unitText)]
	if !ok {
		return 0, Unit{}, fmt.Errorf("unknown unit %q (want one of %s)", unitText, strings.Join(UnitNames(), ", "))
	}
	return v, u, nil
}

// splitName checks a metric name and splits it into base and suffix. A
// name may hold dots itself (workload phases such as "seq.read"): only a
// last segment that is a known suffix is split off.
func splitName(name string) (metric, base, stat string, err error) {
	for _, r := range name {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_'
		if !ok {
			if r >= 'A' && r <= 'Z' {
				return "", "", "", fmt.Errorf("metric names are lower case (%q)", name)
			}
			return "", "", "", fmt.Errorf("metric name %q may only hold a-z, 0-9, '-', '_' and '.'", name)
		}
	}
	base = name
	if i := strings.LastIndexByte(name, '.'); i >= 0 && knownStat(name[i+1:]) {
		base, stat = name[:i], name[i+1:]
		if base == "" {
			return "", "", "", fmt.Errorf("no metric name before .%s", stat)
		}
		if base == Errors {
			return "", "", "", fmt.Errorf("errors takes no suffix")
		}
	}
	if strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".") || strings.Contains(base, "..") {
		return "", "", "", fmt.Errorf("metric name %q has an empty part", name)
	}
	return name, base, stat, nil
}

func knownStat(s string) bool {
	if s == Errors || s == FromStorage || s == VsHistory {
		return true
	}
	for _, x := range Stats {
		if s == x {
			return true
		}
	}
	return false
}

// numberPrefix returns the length of the decimal number s begins with:
// digits, an optional fraction and an optional exponent. Signs, hex, inf and
// nan are not numbers here.
func numberPrefix(s string) int {
	i, digits := 0, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

// bitRate recognises units in bits: Mb/s, Gbit/s, Mbps. A lower-case b
// after an upper-case prefix is a bit; all lower case ("mb/s") is taken as
// bytes, as people type it.
func bitRate(u string) bool {
	l := strings.ToLower(u)
	if strings.Contains(l, "bit") || strings.HasSuffix(l, "bps") {
		return true
	}
	return len(u) >= 2 && strings.ContainsRune("KMGT", rune(u[0])) && u[1] == 'b'
}

// ParseLines reads one expectation per line from r, as --expect-file does.
// A # starts a comment that runs to the end of the line; blank lines are
// skipped. Errors name the line: "NAME:LINE: ...".
func ParseLines(r io.Reader, name string) ([]Expr, error) {
	var out []Expr
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		s := sc.Text()
		if i := strings.IndexByte(s, '#'); i >= 0 {
			s = s[:i]
		}
		if strings.TrimSpace(s) == "" {
			continue
		}
		e, err := Parse(s)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, line, err)
		}
		out = append(out, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return out, nil
}
