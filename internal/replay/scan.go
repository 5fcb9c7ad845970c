package replay

import (
	"bytes"
	"math"
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

// maxSeconds is the most seconds whose nanoseconds an int64 holds.
const maxSeconds = math.MaxInt64 / 1_000_000_000

// nanos reads "SECONDS.FRACTION" (strace's times and latencies: digits,
// a point, digits) as nanoseconds, exactly: the digits of the fraction
// past the ninth are dropped. ok is false for anything else, and for a
// value past an int64's nanoseconds.
func nanos(b []byte) (ns int64, ok bool) {
	var sec, frac int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if sec > maxSeconds/10 {
			return 0, false
		}
		sec = sec*10 + int64(b[i]-'0')
	}
	if i == 0 || i >= len(b)-1 || b[i] != '.' || sec > maxSeconds {
		return 0, false
	}
	k := 0 // digits of the fraction kept
	for i++; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if k < 9 {
			frac, k = frac*10+int64(c-'0'), k+1
		}
	}
	ns = sec*1e9 + frac*pow10i[9-k]
	return ns, ns >= 0
}

// pow10i are the powers of ten to a billion.
var pow10i = [...]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

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
