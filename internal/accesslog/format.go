package accesslog

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// TimeLayout is the layout of an access log's timestamps, in local time.
const TimeLayout = "2006.01.02 15:04:05.000000"

// Record is one line to write.
type Record struct {
	Time          time.Time // completion time; written in its own location
	UID, GID, PID uint32
	Op            string // lower-case letters, digits and _
	Args          string // the arguments without parentheses, e.g. `1,name`
	Result        string // optional, written after "): ", e.g. a byte count
	Status        string // "" or "OK" for success, else the error text
	Latency       time.Duration
}

// AppendRecord appends r as one line, newline included. The status is
// cleaned of control characters, angle brackets and " - " so that it
// cannot break the line; the
// arguments are written as given (build them with AppendName).
func AppendRecord(dst []byte, r *Record) []byte {
	dst = r.Time.AppendFormat(dst, TimeLayout)
	dst = appendIDs(dst, r.UID, r.GID, r.PID)
	dst = append(dst, r.Op...)
	dst = append(dst, " ("...)
	dst = append(dst, r.Args...)
	dst = append(dst, ')')
	if r.Result != "" {
		dst = append(dst, ": "...)
		dst = append(dst, r.Result...)
	}
	dst = appendStatus(dst, r.Status)
	return appendLatency(dst, r.Latency)
}

func appendIDs(dst []byte, uid, gid, pid uint32) []byte {
	dst = append(dst, " [uid:"...)
	dst = strconv.AppendUint(dst, uint64(uid), 10)
	dst = append(dst, ",gid:"...)
	dst = strconv.AppendUint(dst, uint64(gid), 10)
	dst = append(dst, ",pid:"...)
	dst = strconv.AppendUint(dst, uint64(pid), 10)
	return append(dst, "] "...)
}

// appendStatus appends " - STATUS".
func appendStatus(dst []byte, status string) []byte {
	dst = append(dst, " - "...)
	if status == "" {
		return append(dst, "OK"...)
	}
	for i := 0; i < len(status); {
		c := status[i]
		if c < utf8.RuneSelf {
			c = statusByte(c)
			// " - " separates the status from what precedes it: the
			// status must not hold one.
			if c == '-' && dst[len(dst)-1] == ' ' && (i+1 == len(status) || statusByte(status[i+1]) == ' ') {
				c = '_'
			}
			dst = append(dst, c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(status[i:])
		if r == utf8.RuneError {
			dst = append(dst, '?')
		} else {
			dst = append(dst, status[i:i+n]...)
		}
		i += n
	}
	return dst
}

// statusByte replaces the ASCII bytes a status cannot hold by a space.
func statusByte(c byte) byte {
	if c < ' ' || c == 0x7f || c == '<' || c == '>' {
		return ' '
	}
	return c
}

// appendLatency appends " <S.UUUUUU>\n", rounded to the microsecond.
func appendLatency(dst []byte, d time.Duration) []byte {
	if d < 0 {
		d = 0
	}
	us := (int64(d) + 500) / 1000
	dst = append(dst, " <"...)
	dst = strconv.AppendInt(dst, us/1e6, 10)
	dst = append(dst, '.')
	dst = appendPadded(dst, us%1e6, 6)
	return append(dst, ">\n"...)
}

func appendPadded(dst []byte, v int64, width int) []byte {
	var b [20]byte
	i := len(b)
	for ; width > 0 || v > 0; width-- {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
	}
	return append(dst, b[i:]...)
}

// AppendName appends a file name or path as an argument: as it is when it
// is printable ASCII without parentheses, commas, quotes, backslashes or
// spaces, otherwise quoted in Go syntax (ASCII only), which the parser
// skips over as one name.
func AppendName(dst []byte, name string) []byte {
	for i := 0; i < len(name); i++ {
		if mustQuote[name[i]] {
			return strconv.AppendQuoteToASCII(dst, name)
		}
	}
	return append(dst, name...)
}

// mustQuote lists the bytes that make AppendName quote a name.
var mustQuote = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c <= ' ' || c >= 0x7f || strings.IndexByte(`(),"\[<>`, byte(c)) >= 0
	}
	return t
}()
