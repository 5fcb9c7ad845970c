package replay

import (
	"bytes"
	"time"
)

// The first pass's part of reading strace's output: which lines are
// strace's, and the parse of a complete call into its line's rec.

// isStrace reports whether a line is strace's: "PID SECONDS.MICROS call(".
func isStrace(line []byte) bool {
	i := bytes.IndexByte(line, ' ')
	if i <= 0 || !allDigits(line[:i]) {
		return false
	}
	rest := bytes.TrimLeft(line[i:], " ")
	j := bytes.IndexByte(rest, ' ')
	if j < 0 {
		return false
	}
	ts := rest[:j]
	dot := bytes.IndexByte(ts, '.')
	return dot > 0 && allDigits(ts[:dot]) && allDigits(ts[dot+1:])
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(b) > 0
}

// readStrace is the first pass's read of strace's line, its pid in r: a
// complete call is parsed into r (kindStraceCall), so that the second
// pass, which builds the trace in order, only takes it from there.
// Anything else (an unfinished call or its resumption, an exit, a signal,
// a line that does not parse, or one longer than a rec's spans reach) is
// left to the second pass (kindStrace), which reads it as parseStrace
// does.
func readStrace(line []byte, r *rec) {
	r.kind = kindStrace
	if len(line) > maxSpan {
		return
	}
	rest := bytes.TrimLeft(line[bytes.IndexByte(line, ' '):], " ")
	j := bytes.IndexByte(rest, ' ')
	sec, ok := decimal(rest[:j])
	if !ok {
		return
	}
	body := rest[j+1:]
	if bytes.HasPrefix(body, []byte("+++")) || bytes.HasPrefix(body, []byte("---")) ||
		bytes.HasPrefix(body, []byte("<... ")) || indexAngle(body, " <unfinished ...>") >= 0 {
		return
	}
	open, eq, lt, lat, ok := callSpans(body)
	if !ok || lat >= 1<<32 {
		return
	}
	r.kind, r.lat = kindStraceCall, time.Duration(int64(sec*1e9))
	r.f[0], r.f[1] = span(line, body[:open])
	r.f[2], r.f[3] = span(line, body[open+1:eq])
	r.f[4], r.f[5] = span(line, body[eq+4:lt])
	r.f[6], r.f[7] = uint16(lat), uint16(lat>>16)
}

// callOf is the call the first pass parsed into r (kindStraceCall).
func (s *strc) callOf(line []byte, r *rec) call {
	c := call{pid: r.pid, start: int64(r.lat)}
	lat := time.Duration(uint32(r.f[6]) | uint32(r.f[7])<<16)
	s.fill(&c, line[r.f[0]:r.f[1]], line[r.f[2]:r.f[3]], line[r.f[4]:r.f[5]], lat)
	return c
}
