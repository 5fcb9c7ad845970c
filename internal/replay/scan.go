package replay

import (
	"bytes"
	"strconv"
	"unsafe"
)

// indexAngle is bytes.Index for a sep that starts with " <": the '<' of
// a line are few (its descriptors' paths, its latency), its spaces many.
func indexAngle(b []byte, sep string) int {
	for from := 0; ; {
		k := bytes.IndexByte(b[from:], '<')
		if k < 0 {
			return -1
		}
		k += from
		if k > 0 && len(b)-(k-1) >= len(sep) && string(b[k-1:k-1+len(sep)]) == sep {
			return k - 1
		}
		from = k + 1
	}
}

// str is the string over b's bytes, without a copy: for the lines of a
// log, which nothing changes while it is read.
func str(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// pow10 are the powers of ten a float64 holds exactly.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// decimal reads a number as strconv.ParseFloat does, to the same value:
// "DIGITS.DIGITS" whose digits make a number below 2^53 with at most 22
// after the point is that number divided, exactly rounded, by a power of
// ten (as ParseFloat computes it); anything else goes to ParseFloat.
func decimal(b []byte) (float64, bool) {
	var m uint64
	digits, frac, dot := 0, 0, false
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9' && digits < 19:
			m = m*10 + uint64(c-'0')
			digits++
			if dot {
				frac++
			}
		case c == '.' && !dot:
			dot = true
		default:
			return parseFloat(b)
		}
	}
	if digits == 0 || frac >= len(pow10) || m >= 1<<53 {
		return parseFloat(b)
	}
	return float64(m) / pow10[frac], true
}

func parseFloat(b []byte) (float64, bool) {
	v, err := strconv.ParseFloat(str(b), 64)
	return v, err == nil
}

// lastIndex is bytes.LastIndex for a short sep: its last byte found from
// the end, then the rest compared.
func lastIndex(b []byte, sep string) int {
	n := len(sep)
	for end := len(b); end >= n; {
		k := bytes.LastIndexByte(b[:end], sep[n-1])
		if k < n-1 {
			return -1
		}
		if string(b[k-n+1:k+1]) == sep {
			return k - n + 1
		}
		end = k
	}
	return -1
}
