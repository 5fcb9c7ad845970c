package replay

import (
	"bytes"
	"math"
	"time"
)

// The first pass's part of reading strace's output: which lines are
// strace's, and the parse of a complete call into its line's rec.

// straceHead reads the head of strace's line, "PID  SECONDS.MICROS ": the
// thread id, the start in nanoseconds since the epoch and where the call
// begins. ok is false for a line that is not strace's.
func straceHead(line []byte) (pid uint32, start int64, body int, ok bool) {
	i := 0
	var id uint64
	for ; i < len(line) && line[i] >= '0' && line[i] <= '9'; i++ {
		if id = id*10 + uint64(line[i]-'0'); id > math.MaxUint32 {
			return 0, 0, 0, false
		}
	}
	if i == 0 || i == len(line) || line[i] != ' ' {
		return 0, 0, 0, false
	}
	for i < len(line) && line[i] == ' ' {
		i++
	}
	j := i
	for j < len(line) && line[j] != ' ' {
		j++
	}
	if j == len(line) {
		return 0, 0, 0, false
	}
	start, ok = nanos(line[i:j])
	return uint32(id), start, j + 1, ok
}

// readStrace is the first pass's read of strace's line, whose call
// begins at body: a complete call is parsed into r (kindStraceCall), so
// that the second pass, which builds the trace in order, only takes it
// from there. Anything else (an unfinished call or its resumption, an
// exit, a signal, a line that does not parse, or one longer than a rec's
// spans reach) is left to the second pass (kindStrace), which reads it as
// parseStrace does.
func readStrace(line []byte, start int64, body int, r *rec) {
	r.kind = kindStrace
	if len(line) > maxSpan {
		return
	}
	b := line[body:]
	if notCall(b) {
		return
	}
	open, eq, ret, lt, lat, ok := callSpans(b)
	if !ok || lat >= 1<<32 {
		return
	}
	r.kind, r.lat = kindStraceCall, time.Duration(start)
	r.f[0], r.f[1] = uint16(body), uint16(body+open)
	r.f[2], r.f[3] = span(line, b[open+1:eq])
	r.f[4], r.f[5] = span(line, b[ret:lt])
	r.f[6], r.f[7] = uint16(lat), uint16(lat>>16)
	r.call, r.args = knownCalls[string(b[:open])], 0
	if r.call > 0 {
		r.args = argSpans(line[:body+eq], body+open+1, &r.a)
	}
}

// maxArgs is how many arguments of a call the first pass finds: those
// the replay reads of the calls it replays, but renameat2's flags and
// statx's last three.
const maxArgs = 4

// noArgs is the count of arguments of a call with more than maxArgs.
const noArgs = 0xff

// argSpans finds the arguments of a call, s[i:] in its line s: where
// each starts and ends in a, and how many there are (noArgs: more than a
// holds).
func argSpans(s []byte, i int, a *[2 * maxArgs]uint16) uint8 {
	for k := 0; ; k++ {
		start, end, next := nextArg(s, i)
		if next < 0 && end == start && k == 0 {
			return 0 // no argument
		}
		if k == maxArgs {
			return noArgs
		}
		a[2*k], a[2*k+1] = uint16(start), uint16(end)
		if next < 0 {
			return uint8(k + 1)
		}
		i = next
	}
}

// notCall reports whether the call part of a line is not a whole call: an
// exit or a signal ("+++", "---"), the first half of a call (which strace
// ends with " <unfinished ...>") or its second ("<... name resumed>").
func notCall(body []byte) bool {
	return bytes.HasPrefix(body, []byte("+++")) || bytes.HasPrefix(body, []byte("---")) ||
		bytes.HasPrefix(body, []byte("<... ")) || bytes.HasSuffix(body, []byte(unfinished))
}

// unfinished ends the first half of a call another thread interrupted.
const unfinished = " <unfinished ...>"

// callOf sets c to the call the first pass parsed into r
// (kindStraceCall).
func (s *strc) callOf(line []byte, r *rec, c *call) {
	*c = call{pid: r.pid, start: int64(r.lat)}
	lat := time.Duration(uint32(r.f[6]) | uint32(r.f[7])<<16)
	if r.call > 0 {
		s.last = callKinds[r.call] // where kind finds it
	}
	s.fill(c, line[r.f[0]:r.f[1]], line[r.f[4]:r.f[5]], lat)
	switch {
	case !c.kind.args:
	case r.args == noArgs:
		s.args = splitArgs(s.args[:0], str(line[r.f[2]:r.f[3]]))
		c.args = s.args
	default:
		s.args = s.args[:0]
		for k := range int(r.args) {
			s.args = append(s.args, str(line[r.a[2*k]:r.a[2*k+1]]))
		}
		c.args = s.args
	}
}
