package fiojob

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// parseSize reads one of fio's sizes: a whole number (0x for hex) with an
// optional unit prefix and an optional b. With kb_base=1024, fio's
// default, k, m, g, t and p are powers of 1024 and ki, mi, ... powers of
// 1000 (fio keeps old scripts working); kb_base=1000 swaps them.
func parseSize(s string, kbBase int64) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	hex := strings.HasPrefix(t, "0x")
	if hex {
		i = 2
	}
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || hex && t[i] >= 'a' && t[i] <= 'f') {
		i++
	}
	num, suffix := t[:i], strings.TrimSpace(t[i:])
	var n uint64
	var err error
	if hex {
		n, err = strconv.ParseUint(num[2:], 16, 63)
	} else {
		n, err = strconv.ParseUint(num, 10, 63)
	}
	if err != nil || num == "" {
		return 0, fmt.Errorf("want a size such as 4k, 1m or 1g, got %q", s)
	}
	suffix = strings.TrimSuffix(suffix, "b")
	if suffix == "" {
		return int64(n), nil
	}
	other := int64(1000)
	if kbBase == 1000 {
		other = 1024
	}
	base := kbBase
	if strings.HasSuffix(suffix, "i") && len(suffix) == 2 {
		base, suffix = other, suffix[:1]
	}
	exp := strings.Index("kmgtp", suffix)
	if len(suffix) != 1 || exp < 0 {
		return 0, fmt.Errorf("want a size such as 4k, 1m or 1g, got %q", s)
	}
	mult := int64(1)
	for range exp + 1 {
		mult *= base
	}
	if n > uint64(math.MaxInt64/mult) {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(n) * mult, nil
}

// parseTime reads one of fio's times: seconds unless a unit (d, h, m, s,
// ms or msec, us or usec) says otherwise. def is the unit of a bare
// number.
func parseTime(s string, def time.Duration) (time.Duration, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("want a time such as 30 (seconds), 30s, 5m or 500ms, got %q", s)
	}
	unit := def
	switch strings.TrimSpace(t[i:]) {
	case "":
	case "d":
		unit = 24 * time.Hour
	case "h":
		unit = time.Hour
	case "m", "min":
		unit = time.Minute
	case "s", "sec":
		unit = time.Second
	case "ms", "msec":
		unit = time.Millisecond
	case "us", "usec":
		unit = time.Microsecond
	default:
		return 0, fmt.Errorf("want a time such as 30 (seconds), 30s, 5m or 500ms, got %q", s)
	}
	if n > int64(math.MaxInt64/unit) {
		return 0, fmt.Errorf("time %q is too long", s)
	}
	return time.Duration(n) * unit, nil
}

// parseBool reads fio's booleans: 1 or 0 (also true/false, on/off, yes/no).
func parseBool(s string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "on", "yes":
		return true, nil
	case "0", "false", "off", "no":
		return false, nil
	}
	return false, fmt.Errorf("want 1 or 0, got %q", s)
}

// parseInt reads a whole number in lo..hi.
func parseInt(s string, lo, hi int) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("want a whole number, got %q", s)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is not in %d..%d", n, lo, hi)
	}
	return n, nil
}
