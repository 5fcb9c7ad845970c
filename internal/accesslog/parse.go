// Package accesslog reads and writes file-operation logs in the line format
// of JuiceFS's access log (the .accesslog file of a JuiceFS mount):
//
//	2026.11.21 21:03:17.175294 [uid:0,gid:0,pid:22645] lookup (1,name): - no such file or directory <0.000161>
//
// that is: the completion time (local time, microseconds), the caller's
// uid, gid and pid, the operation, its arguments in parentheses, an
// optional result, " - ", the status ("OK" or the error text) and the
// latency in seconds in angle brackets. Older JuiceFS versions write the
// status after "): " instead of " - "; both are read.
//
// The parser works on byte slices and does not allocate; the Writer is a
// workload.Tracer that logs every operation of a benchmark in this format,
// buffered per worker, off the benchmark's hot path.
//
// It knows the line format and nothing else: it runs none of the operations
// it reads (package replay does), and imports no package of fsbench's but
// workload.
package accesslog

import (
	"bytes"
	"encoding/binary"
	"errors"
	"time"
	"unicode/utf8"
)

// Entry is one parsed line. Its byte slices point into the line passed to
// Parse and are valid only as long as the line is.
type Entry struct {
	// Time is when the operation completed, in nanoseconds since the Unix
	// epoch.
	Time          int64
	UID, GID, PID uint32
	Op            []byte // e.g. "lookup"
	Args          []byte // the arguments, with their parentheses: "(1,name)"
	// Rest is what follows the arguments before the status: a result
	// (": 512", ": (2,[...])") and a file handle (" [fh:7]"), either
	// or both or none, as written.
	Rest    []byte
	Status  []byte // "OK" or the error, e.g. "no such file or directory"
	Latency time.Duration
}

// OK reports whether the operation succeeded.
func (e *Entry) OK() bool {
	s := e.Status
	return len(s) >= 2 && s[0] == 'O' && s[1] == 'K' && (len(s) == 2 || s[2] == ' ')
}

// Reasons a line is not an entry. Blank lines and keep-alives ("#" alone,
// which a JuiceFS mount writes when it has nothing to say) are expected;
// the others are malformed lines. Every error Parse returns is one of
// these or a *SyntaxError.
var (
	ErrBlank     = errors.New("blank line")
	ErrKeepAlive = errors.New("keep-alive line")
	ErrNotUTF8   = errors.New("line is not valid UTF-8")
)

// SyntaxError says which field of a malformed line could not be read.
type SyntaxError struct {
	Field  string // timestamp, ids, operation, arguments, status, latency, line
	Reason string
}

func (e *SyntaxError) Error() string { return "access log: bad " + e.Field + ": " + e.Reason }

// The syntax errors are fixed values so that skipping a malformed line
// does not allocate.
var (
	errShort       = &SyntaxError{"line", "too short"}
	errTimestamp   = &SyntaxError{"timestamp", `want "YYYY.MM.DD hh:mm:ss.uuuuuu"`}
	errDate        = &SyntaxError{"timestamp", "no such date or time"}
	errIDs         = &SyntaxError{"ids", `want "[uid:N,gid:N,pid:N]"`}
	errOp          = &SyntaxError{"operation", "want lower-case letters, digits or _"}
	errLatency     = &SyntaxError{"latency", `want "<seconds>" at the end of the line`}
	errArgs        = &SyntaxError{"arguments", `want "(...)" after the operation`}
	errUnbalanced  = &SyntaxError{"arguments", "no closing parenthesis"}
	errQuote       = &SyntaxError{"arguments", "unterminated quoted name"}
	errStatus      = &SyntaxError{"status", `want " - STATUS" or "): STATUS"`}
	errRunTogether = &SyntaxError{"line", "two lines run together"}
)

// MaxOpLen bounds the length of an operation name.
const MaxOpLen = 32

// Parser parses lines. It remembers the last date and hour it saw so that
// the timestamps of a log, which change hour rarely, are cheap to convert.
// A Parser is not safe for concurrent use; its zero value reads times in
// UTC.
type Parser struct {
	loc      *time.Location
	key1     uint64 // "YYYY.MM." of hourBase,
	key2     uint64 // and ".DD hh"
	hourBase int64  // Unix nanoseconds at the start of that hour
	haveHour bool
}

// NewParser returns a parser that reads timestamps as local time in loc
// (JuiceFS writes the mount host's local time); nil means UTC.
func NewParser(loc *time.Location) *Parser {
	return &Parser{loc: loc}
}

const tsLen = len("2006.01.02 15:04:05.000000")

// Parse reads one line (without its newline; a trailing "\r" is allowed)
// into e. It returns ErrBlank, ErrKeepAlive, ErrNotUTF8 or a *SyntaxError
// when the line is not an entry, and never panics, whatever the input.
func (p *Parser) Parse(line []byte, e *Entry) error {
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if err := notEntry(line); err != nil {
		return err
	}
	rest, err := p.header(line, e)
	if err != nil {
		return err
	}
	if rest, err = operation(rest, e); err != nil {
		return err
	}
	body, err := latency(rest, e)
	if err != nil {
		return err
	}
	// A line that lost its end and ran into the next one holds a second
	// header.
	if hasHeader(body) {
		return errRunTogether
	}
	return argsAndStatus(body, e)
}

// notEntry tells the lines that are not entries at all: blank, keep-alive
// and not UTF-8.
func notEntry(line []byte) error {
	if len(line) == 0 || line[0] < '0' || line[0] > '9' {
		trimmed := bytes.TrimSpace(line)
		if len(trimmed) == 0 {
			return ErrBlank
		}
		if len(trimmed) == 1 && trimmed[0] == '#' {
			return ErrKeepAlive
		}
	}
	if !utf8.Valid(line) {
		return ErrNotUTF8
	}
	return nil
}

// header reads the timestamp and "[uid:N,gid:N,pid:N] " and returns the
// rest of the line.
func (p *Parser) header(line []byte, e *Entry) ([]byte, error) {
	if len(line) < tsLen+1 {
		return nil, errShort
	}
	t, err := p.timestamp(line[:tsLen])
	if err != nil {
		return nil, err
	}
	e.Time = t
	rest := line[tsLen:]
	if len(rest) < 2 || rest[0] != ' ' {
		return nil, errTimestamp
	}
	rest = rest[1:]
	var ok bool
	if rest, ok = skipPrefix(rest, "[uid:"); !ok {
		return nil, errIDs
	}
	if e.UID, rest, ok = number(rest); !ok {
		return nil, errIDs
	}
	if rest, ok = skipPrefix(rest, ",gid:"); !ok {
		return nil, errIDs
	}
	if e.GID, rest, ok = number(rest); !ok {
		return nil, errIDs
	}
	if rest, ok = skipPrefix(rest, ",pid:"); !ok {
		return nil, errIDs
	}
	if e.PID, rest, ok = number(rest); !ok {
		return nil, errIDs
	}
	if rest, ok = skipPrefix(rest, "] "); !ok {
		return nil, errIDs
	}
	return rest, nil
}

// operation reads the operation's name and the space after it.
func operation(rest []byte, e *Entry) ([]byte, error) {
	i := 0
	for i < len(rest) && i <= MaxOpLen && isOpByte(rest[i]) {
		i++
	}
	if i == 0 || i > MaxOpLen || i >= len(rest) || rest[i] != ' ' {
		return nil, errOp
	}
	e.Op = rest[:i]
	return rest[i+1:], nil
}

// latency reads the latency that closes the line, " <0.000161>", and
// returns what comes before it.
func latency(rest []byte, e *Entry) ([]byte, error) {
	n := len(rest)
	if n < 3 || rest[n-1] != '>' {
		return nil, errLatency
	}
	lt := bytes.LastIndexByte(rest, '<')
	if lt < 1 || rest[lt-1] != ' ' {
		return nil, errLatency
	}
	var ok bool
	if e.Latency, ok = seconds(rest[lt+1 : n-1]); !ok {
		return nil, errLatency
	}
	return rest[:lt-1], nil
}

// argsAndStatus reads the arguments, then the status after the last " - "
// (current format) or after "): " (older format).
func argsAndStatus(body []byte, e *Entry) error {
	if len(body) == 0 || body[0] != '(' {
		return errArgs
	}
	pre := body
	dash := lastDash(body)
	if dash >= 0 {
		pre = body[:dash]
		e.Status = body[dash+3:]
	}
	end, err := argsEnd(pre)
	if err != nil {
		return err
	}
	e.Args = pre[:end+1]
	e.Rest = pre[end+1:]
	if dash < 0 {
		e.Rest = nil
		after := pre[end+1:]
		if len(after) < 3 || after[0] != ':' || after[1] != ' ' {
			return errStatus
		}
		e.Status = after[2:]
	}
	if len(e.Status) == 0 {
		return errStatus
	}
	return nil
}

// argsEnd returns the index of the parenthesis that closes the arguments
// opened at s[0]: the first ')' outside a quoted name that ends s or is
// followed by ":" (a result or an old-style status) or " [" (a file
// handle). Names may hold parentheses, commas and spaces; names fsbench
// writes are quoted (Go syntax) when they do.
func argsEnd(s []byte) (int, error) {
	quoted := bytes.IndexByte(s, '"') >= 0
	for j := 1; j < len(s); j++ {
		if !quoted {
			k := bytes.IndexByte(s[j:], ')')
			if k < 0 {
				break
			}
			j += k
		}
		switch s[j] {
		case '"':
			k := j + 1
			for ; k < len(s); k++ {
				if s[k] == '\\' {
					k++
					continue
				}
				if s[k] == '"' {
					break
				}
			}
			if k >= len(s) {
				return 0, errQuote
			}
			j = k
		case ')':
			rest := s[j+1:]
			if len(rest) == 0 || rest[0] == ':' && (len(rest) == 1 || rest[1] == ' ') || len(rest) > 1 && rest[0] == ' ' && rest[1] == '[' {
				return j, nil
			}
		}
	}
	return 0, errUnbalanced
}

// lastDash returns the index of the last " - " in b, or -1.
func lastDash(b []byte) int {
	for end := len(b); ; {
		i := bytes.LastIndexByte(b[:end], '-')
		if i < 1 {
			return -1
		}
		if i+1 < len(b) && b[i-1] == ' ' && b[i+1] == ' ' {
			return i - 1
		}
		end = i
	}
}

// hasHeader reports whether b holds "[uid:", the start of a line's ids.
func hasHeader(b []byte) bool {
	for {
		i := bytes.IndexByte(b, '[')
		if i < 0 {
			return false
		}
		b = b[i+1:]
		if len(b) >= 4 && b[0] == 'u' && b[1] == 'i' && b[2] == 'd' && b[3] == ':' {
			return true
		}
	}
}

func isOpByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_'
}

func skipPrefix(b []byte, prefix string) ([]byte, bool) {
	if len(b) < len(prefix) || string(b[:len(prefix)]) != prefix {
		return b, false
	}
	return b[len(prefix):], true
}

// number reads a decimal uint32 at the start of b.
func number(b []byte) (uint32, []byte, bool) {
	var v uint64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		v = v*10 + uint64(b[i]-'0')
		if v > 1<<32-1 {
			return 0, b, false
		}
	}
	if i == 0 {
		return 0, b, false
	}
	return uint32(v), b[i:], true
}

// seconds reads "S[.FFFFFFFFF]" as a duration.
func seconds(b []byte) (time.Duration, bool) {
	var sec, frac int64
	i := 0
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		if i >= 9 { // more than 31 years: not a latency
			return 0, false
		}
		sec = sec*10 + int64(b[i]-'0')
	}
	if i == 0 {
		return 0, false
	}
	if i == len(b) {
		return time.Duration(sec) * time.Second, true
	}
	if b[i] != '.' || i+1 == len(b) {
		return 0, false
	}
	// The fraction's first nine digits, then scaled once: no division
	// per digit. Digits past the ninth (below a nanosecond) are checked
	// and dropped.
	digits := 0
	for i++; i < len(b); i++ {
		c := b[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		if digits < 9 {
			frac = frac*10 + int64(c-'0')
			digits++
		}
	}
	return time.Duration(sec*1e9 + frac*pow10[9-digits]), true
}

// pow10 scales a fraction of n digits (9-n here) to nanoseconds.
var pow10 = [10]int64{1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9}

func digits2(b []byte) (int, bool) {
	if b[0] < '0' || b[0] > '9' || b[1] < '0' || b[1] > '9' {
		return 0, false
	}
	return int(b[0]-'0')*10 + int(b[1]-'0'), true
}

// timestamp reads "2006.01.02 15:04:05.000000".
func (p *Parser) timestamp(b []byte) (int64, error) {
	if b[4] != '.' || b[7] != '.' || b[10] != ' ' || b[13] != ':' || b[16] != ':' || b[19] != '.' {
		return 0, errTimestamp
	}
	k1, k2 := binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[5:13])
	if !p.haveHour || k1 != p.key1 || k2 != p.key2 {
		y1, ok1 := digits2(b[0:2])
		y2, ok2 := digits2(b[2:4])
		mo, ok3 := digits2(b[5:7])
		d, ok4 := digits2(b[8:10])
		h, ok5 := digits2(b[11:13])
		if !(ok1 && ok2 && ok3 && ok4 && ok5) {
			return 0, errTimestamp
		}
		y := y1*100 + y2
		if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 {
			return 0, errDate
		}
		loc := p.loc
		if loc == nil {
			loc = time.UTC
		}
		t := time.Date(y, time.Month(mo), d, h, 0, 0, 0, loc)
		if t.Day() != d { // 2026.02.30
			return 0, errDate
		}
		p.key1, p.key2 = k1, k2
		// Within the hour, minutes and seconds are added to the hour's
		// start; the repeated hour of a DST change reads as its first pass.
		p.hourBase = t.UnixNano()
		p.haveHour = true
	}
	mi, ok1 := digits2(b[14:16])
	s, ok2 := digits2(b[17:19])
	if !ok1 || !ok2 {
		return 0, errTimestamp
	}
	if mi > 59 || s > 60 {
		return 0, errDate
	}
	var us int64
	for _, c := range b[20:26] {
		if c < '0' || c > '9' {
			return 0, errTimestamp
		}
		us = us*10 + int64(c-'0')
	}
	return p.hourBase + int64(mi)*int64(time.Minute) + int64(s)*int64(time.Second) + us*int64(time.Microsecond), nil
}
