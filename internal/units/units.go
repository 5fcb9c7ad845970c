// Package units parses and formats the sizes, rates and durations that
// fsbench accepts on its command line and prints in its results.
//
// It imports no package of fsbench's and does no I/O.
package units

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Binary size multiples.
const (
	KiB int64 = 1 << 10
	MiB int64 = 1 << 20
	GiB int64 = 1 << 30
	TiB int64 = 1 << 40
	PiB int64 = 1 << 50
)

// ErrSyntax is wrapped by every parse error of this package.
var ErrSyntax = errors.New("invalid size")

var sizeSuffixes = []struct {
	suffix string
	mult   int64
}{
	// Longest first, so "KiB" is tried before "K" and "B".
	{"kib", KiB}, {"mib", MiB}, {"gib", GiB}, {"tib", TiB}, {"pib", PiB},
	{"kb", KiB}, {"mb", MiB}, {"gb", GiB}, {"tb", TiB}, {"pb", PiB},
	{"k", KiB}, {"m", MiB}, {"g", GiB}, {"t", TiB}, {"p", PiB},
	{"b", 1},
}

// ParseSize parses a byte count such as "4096", "128K", "1M", "1GiB" or
// "1.5G". As in JuiceFS and most storage tools, K, KB and KiB all mean 1024
// bytes. A bare number is a count of bytes. Negative, fractional-byte and
// overflowing values are errors.
func ParseSize(s string) (int64, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("%w %q: empty", ErrSyntax, s)
	}
	lower := strings.ToLower(in)
	mult := int64(1)
	num := lower
	for _, sf := range sizeSuffixes {
		if strings.HasSuffix(lower, sf.suffix) {
			mult = sf.mult
			num = strings.TrimSpace(lower[:len(lower)-len(sf.suffix)])
			break
		}
	}
	if num == "" {
		return 0, fmt.Errorf("%w %q: no number", ErrSyntax, s)
	}
	if strings.HasPrefix(num, "-") {
		return 0, fmt.Errorf("%w %q: negative", ErrSyntax, s)
	}
	if n, err := strconv.ParseUint(num, 10, 63); err == nil {
		if mult > 1 && n > uint64(math.MaxInt64/mult) {
			return 0, fmt.Errorf("%w %q: too large", ErrSyntax, s)
		}
		return int64(n) * mult, nil
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) || f < 0 {
		return 0, fmt.Errorf("%w %q: want a number with an optional unit (K, M, G, T, KiB, MiB, ...)", ErrSyntax, s)
	}
	v := f * float64(mult)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("%w %q: too large", ErrSyntax, s)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("%w %q: not a whole number of bytes", ErrSyntax, s)
	}
	return int64(v), nil
}

// FormatBytes renders n bytes with a binary unit: "512 B", "128 KiB",
// "1.50 GiB". Whole multiples are printed without decimals.
func FormatBytes(n int64) string {
	units := []struct {
		name string
		mult int64
	}{{"PiB", PiB}, {"TiB", TiB}, {"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}}
	for _, u := range units {
		if n >= u.mult {
			if n%u.mult == 0 {
				return fmt.Sprintf("%d %s", n/u.mult, u.name)
			}
			return fmt.Sprintf("%.2f %s", float64(n)/float64(u.mult), u.name)
		}
	}
	return fmt.Sprintf("%d B", n)
}

// FormatLatency renders a latency given in microseconds with a unit that
// keeps three significant digits: "87us", "1.23ms", "12.3ms", "2.50s".
func FormatLatency(us float64) string {
	switch {
	case us <= 0:
		return "0"
	case us < 10:
		return strconv.FormatFloat(us, 'f', 1, 64) + "us"
	case us < 1000:
		return strconv.FormatFloat(us, 'f', 0, 64) + "us"
	case us < 10_000:
		return strconv.FormatFloat(us/1e3, 'f', 2, 64) + "ms"
	case us < 100_000:
		return strconv.FormatFloat(us/1e3, 'f', 1, 64) + "ms"
	case us < 1_000_000:
		return strconv.FormatFloat(us/1e3, 'f', 0, 64) + "ms"
	default:
		return strconv.FormatFloat(us/1e6, 'f', 2, 64) + "s"
	}
}

// maxSeconds bounds a duration given as a number of seconds (about 31
// years), far inside what time.Duration holds.
const maxSeconds = 1e9

// ParseDuration reads a duration: Go's form (90s, 1m30s, 500ms) or a bare
// number of seconds, as vdbench's elapsed= and interval= take. Negative
// durations are errors.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if f, err := strconv.ParseFloat(s, 64); err == nil {
		if math.IsNaN(f) || f < 0 || f > maxSeconds {
			return 0, fmt.Errorf("duration %q out of range", s)
		}
		return time.Duration(f * float64(time.Second)), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: want e.g. 30s, 2m, 500ms or a number of seconds", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return d, nil
}

// Count is n with its noun in the right number: "1 thread", "2 threads",
// "0 threads". The plural adds "s"; CountOf takes nouns that do otherwise.
func Count(n int, noun string) string {
	return CountOf(n, noun, noun+"s")
}

// CountOf is Count with the plural given: CountOf(n, "directory",
// "directories").
func CountOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// CountGrouped is Count with the thousands of n separated: "1 file",
// "12,000 files".
func CountGrouped(n int, noun string) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if n != 1 {
		noun += "s"
	}
	return s + " " + noun
}

// ErrBare is wrapped by ParseSizeIn's error for a bare number where no unit
// is implied: 4 could be bytes, KiB or MiB, and each tool reads it otherwise.
var ErrBare = errors.New("a bare number is ambiguous")

// ParseSizeIn parses a size as ParseSize does, except a bare number (one
// that ends in a digit): that is a count of unit, as JuiceFS reads its
// flags (--block-size 4 is 4 MiB in juicefs bench), fractions truncated to
// whole bytes as JuiceFS does. With unit 0, a bare number other than 0 is
// refused (ErrBare), never taken as bytes in silence.
func ParseSizeIn(s string, unit int64) (int64, error) {
	t := strings.TrimSpace(s)
	if t == "" || t[len(t)-1] < '0' || t[len(t)-1] > '9' {
		return ParseSize(s)
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || f <= 0 {
		return ParseSize(s) // 0, or its error
	}
	if unit == 0 {
		return 0, fmt.Errorf("%w; write %sK, %sM or %sB", ErrBare, t, t, t)
	}
	v := f * float64(unit)
	if math.IsInf(v, 0) || math.IsNaN(v) || v >= math.MaxInt64 {
		return 0, fmt.Errorf("%w %q: too large", ErrSyntax, s)
	}
	return int64(v), nil
}
