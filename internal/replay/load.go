package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsbench/fsbench/internal/accesslog"
)

// Formats of the logs Load reads.
const (
	FormatJuiceFS = "juicefs"
	FormatFSBench = "fsbench"
)

// maxLine bounds a line: longer ones are counted as malformed.
const maxLine = 1 << 20

// errOther stands for a recorded failure whose text names no errno: the
// replay then expects any error.
const errOther = 0xFFFF

// errnos maps the texts of errno values, as JuiceFS and fsbench write
// them, to the values.
var errnos = func() map[string]uint16 {
	m := map[string]uint16{}
	for e := syscall.Errno(1); e < 256; e++ {
		if s := e.Error(); s != "" && !strings.HasPrefix(s, "errno ") {
			m[s] = uint16(e)
		}
	}
	return m
}()

// Load reads an access log (JuiceFS's or fsbench's; gzip-compressed or
// plain) into a trace. Lines it does not replay are counted in
// Trace.Skipped; it fails only when the log cannot be read or holds no
// operation to replay.
func Load(r io.Reader) (*Trace, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("read log: %w", err)
	}
	return load(data)
}

// load reads the log in data into a trace.
func load(data []byte) (*Trace, error) { return loadPart(data, 0, 1) }

// loadPart reads part (from 0) of parts of the log in data: the streams
// of the recorded processes or threads that splitStreams gives that part,
// for one host of a replay on many.
func loadPart(data []byte, part, parts int) (*Trace, error) {
	return loadWatched(data, part, parts, nil)
}

// loadWatched is loadPart, keeping in read (when not nil) how many bytes
// of data have been read into the trace so far, for a progress display.
func loadWatched(data []byte, part, parts int, read *atomic.Int64) (*Trace, error) {
	defer raiseGC(loadGC)()
	l := newLoader()
	l.read = read
	if parts > 1 || !l.pipeline(data) {
		// Split across hosts (by the pids' sizes, from the whole log), or
		// out of order: read whole first.
		l = newLoader()
		l.read = read
		l.ordered(data, part, parts)
	}
	if read != nil {
		read.Store(int64(len(data)))
	}
	t := l.b.finish()
	if t.contradiction != "" {
		return nil, errors.New(t.contradiction)
	}
	if t.Ops() == 0 {
		return t, noOps(&t.Skipped)
	}
	return t, nil
}

// loadGC is the collector's percentage while a log loads. What a load
// allocates is nearly all the trace, which it keeps: a collection at each
// doubling of the heap (the default, 100) finds little to free, and cost
// a million-line strace log's load 7% of its time and 9% of its
// processor time, much of it the system's, for pages the runtime gave
// back and faulted in again (benchmarks/records/replay-cost.md).
const loadGC = 400

// raiseGC raises the collector's percentage to p, unless it is higher or
// the collector is off, and returns what puts it back.
func raiseGC(p int) (restore func()) {
	old := debug.SetGCPercent(p)
	if old < 0 || old >= p {
		debug.SetGCPercent(old)
		return func() {}
	}
	return func() { debug.SetGCPercent(old) }
}

// ordered reads part of parts of the log in data, its lines all read
// first, and then built from in order of completion.
func (l *loader) ordered(data []byte, part, parts int) {
	recs, idx := l.order(data)
	if parts > 1 {
		l.part, l.host, l.owner = part, splitStreams(l.b.sizes, parts), map[uint64]int{}
	}
	if idx == nil {
		for i := range recs {
			l.line(data, &recs[i])
		}
	} else {
		for _, i := range idx {
			l.line(data, &recs[i])
		}
	}
}

// Kinds of lines, as the first pass reads them.
const (
	kindEntry     = iota // an entry of JuiceFS's or fsbench's log
	kindStrace           // a line of strace's output
	kindBlank            // a blank or keep-alive line
	kindMalformed        // anything else, a line too long included
	// kindLongEntry is an entry longer than the spans of a rec reach:
	// parsed again by the second pass.
	kindLongEntry
	// kindStraceCall is a complete call of strace's, parsed by the first
	// pass (readStrace): its start in lat, its latency in f[6:8], the
	// spans of its name, arguments and result in f[0:6].
	kindStraceCall
)

// rec is one line of the log as the first pass read it: where it is in
// the log and, for an entry, its parse, its fields as offsets in the
// line. It holds no pointer, so that a million of them cost the collector
// nothing, and the second pass does not parse the line again. It is 112
// bytes; the records of a few chunks of the log are in memory at once
// (pipeline), written by the first pass and read back by the second.
type rec struct {
	off  int // the line: data[off:off+n]
	time int64
	lat  time.Duration // an entry's latency; a kindStraceCall's start (ns since the epoch)
	n    uint32        // maxLine+1 at most
	pid  uint32
	f    [8]uint16 // op, args, rest and status: start and end in the line (a kindStraceCall: readStrace's)
	// A kindStraceCall's, and a JuiceFS kindEntry's (readArgs): the start
	// and end of its first arguments, and how many it has (noArgs: more
	// than a holds, split by the second pass). call is a kindStraceCall's
	// index in callKinds (0: none, its arguments not read); an, a JuiceFS
	// entry's numbers among its arguments.
	a    [2 * maxArgs]uint16
	args uint8
	call uint8
	kind uint8
	an   argNums
}

// maxSpan is the longest line whose parse a rec holds: longer entries
// are kindLongEntry.
const maxSpan = 1<<16 - 1

// span is where sub, a part of line, is in it.
func span(line, sub []byte) (uint16, uint16) {
	if len(sub) == 0 {
		return 0, 0
	}
	i := cap(line) - cap(sub)
	return uint16(i), uint16(i + len(sub))
}

// entry is the parse of an entry rec made by the first pass.
func (r *rec) entry(line []byte, e *accesslog.Entry) {
	e.Time, e.PID, e.Latency = r.time, r.pid, r.lat
	e.Op, e.Args = line[r.f[0]:r.f[1]], line[r.f[2]:r.f[3]]
	e.Rest, e.Status = line[r.f[4]:r.f[5]], line[r.f[6]:r.f[7]]
}

// read reads one line into r: its kind, and for an entry its parse (p
// and e are the parser's, one per goroutine).
func read(p *accesslog.Parser, e *accesslog.Entry, line []byte, r *rec) {
	if len(line) > maxLine {
		r.kind = kindMalformed
		return
	}
	if pid, start, body, ok := straceHead(line); ok {
		r.pid = pid
		readStrace(line, start, body, r)
		return
	}
	switch err := p.Parse(line, e); {
	case err == nil && len(line) > maxSpan:
		r.kind, r.time, r.pid, r.lat = kindLongEntry, e.Time, e.PID, e.Latency
	case err == nil:
		r.kind, r.time, r.pid, r.lat = kindEntry, e.Time, e.PID, e.Latency
		r.f[0], r.f[1] = span(line, e.Op)
		r.f[2], r.f[3] = span(line, e.Args)
		r.f[4], r.f[5] = span(line, e.Rest)
		r.f[6], r.f[7] = span(line, e.Status)
		r.args = noArgs
		if !isPathArgs(e.Args) {
			readArgs(line, e.Args, r)
		}
	case errors.Is(err, accesslog.ErrBlank) || errors.Is(err, accesslog.ErrKeepAlive):
		r.kind = kindBlank
	default:
		r.kind = kindMalformed
	}
}

// minChunk is the least of a log that one goroutine of readLines reads.
const minChunk = 1 << 20

// readLines splits data into lines and reads each into a rec. The lines
// of a log are independent of one another, so parts pieces of it are
// read at once, one per processor: the processor time is the same, the
// elapsed time shorter.
func readLines(data []byte, parts int) []rec {
	// bounds[i] is where piece i starts, just after a newline.
	bounds := make([]int, parts+1)
	bounds[parts] = len(data)
	for i := 1; i < parts; i++ {
		b := max(bounds[i-1], len(data)*i/parts)
		if k := bytes.IndexByte(data[b:], '\n'); k >= 0 {
			b += k + 1
		} else {
			b = len(data)
		}
		bounds[i] = b
	}
	// first[i] is the index of piece i's first line.
	first := make([]int, parts+1)
	for i := range parts {
		piece := data[bounds[i]:bounds[i+1]]
		n := bytes.Count(piece, []byte{'\n'})
		if len(piece) > 0 && piece[len(piece)-1] != '\n' {
			n++ // the log's last line, without its newline
		}
		first[i+1] = first[i] + n
	}
	recs := make([]rec, first[parts])
	var wg sync.WaitGroup
	panics := make([]any, parts)
	for i := range parts {
		wg.Go(func() { panics[i] = reraise(func() { readPiece(data, recs, bounds[i], bounds[i+1], first[i]) }) })
	}
	wg.Wait()
	for _, p := range panics {
		if p != nil {
			panic(p)
		}
	}
	return recs
}

// readPiece reads the lines of data[off:end] into recs from k on.
func readPiece(data []byte, recs []rec, off, end, k int) {
	p, e := accesslog.NewParser(nil), &accesslog.Entry{}
	for ; off < end; k++ {
		n, next := lineAt(data, off, end)
		r := &recs[k]
		r.off, r.n = off, uint32(min(n, maxLine+1))
		read(p, e, data[off:off+n:len(data)], r)
		off = next
	}
}

// lineAt is the length of the line of data that starts at off, before
// end, without the '\n' that ends it or a '\r' before that (a log whose
// lines end in CRLF, as a copy made on Windows has), and where the next
// line starts.
func lineAt(data []byte, off, end int) (n, next int) {
	n = bytes.IndexByte(data[off:end], '\n')
	if next = off + n + 1; n < 0 {
		n, next = end-off, end
	}
	if n > 0 && data[off+n-1] == '\r' {
		n--
	}
	return n, next
}

// order reads the lines of data and returns them with the order to take
// them in (nil: as they are): by completion time, as the operations
// completed. JuiceFS writes its log in that order; fsbench writes each
// worker's operations in batches, so its log is only nearly in order.
// Lines that are not entries keep their place. It counts each pid's lines
// in sizes.
func (l *loader) order(data []byte) ([]rec, []int) {
	recs := readLines(data, min(runtime.GOMAXPROCS(0), max(1, len(data)/minChunk)))
	sorted, last := true, int64(math.MinInt64)
	base := int64(math.MaxInt64) // the first entry's start
	// count counts the lines of a pid in sizes, a run of one pid's lines
	// at a time.
	pid, run := uint32(0), int32(0)
	count := func(p uint32) {
		if p != pid && run > 0 {
			l.b.sizes[pid] += run
			run = 0
		}
		pid = p
		run++
	}
	for i := range recs {
		r := &recs[i]
		switch r.kind {
		case kindStrace, kindStraceCall:
			count(r.pid)
			r.time = last
		case kindEntry, kindLongEntry:
			count(r.pid)
			if r.time < last {
				sorted = false
			}
			last = r.time
			base = min(base, r.time-int64(r.lat))
		default:
			r.time = last
		}
	}
	if run > 0 {
		l.b.sizes[pid] += run
	}
	if base != math.MaxInt64 {
		l.b.base, l.b.hasBase = base, true
	}
	if sorted {
		return recs, nil
	}
	idx := make([]int, len(recs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return recs[idx[a]].time < recs[idx[b]].time })
	return recs, idx
}

// loader holds the state of one Load.
type loader struct {
	p     *accesslog.Parser
	e     accesslog.Entry
	b     *builder
	jfs   *jfs
	fsb   *fsb
	st    *strc
	names map[string]string // interned operation names
	// lastName is intern's last answer.
	lastName string
	f        jargs // the fields of the line in progress
	// host, when the log is split across hosts, gives each recorded pid
	// its host; part is this one.
	host  map[uint32]int
	part  int
	owner map[uint64]int // a recorded handle's number -> the host that opened it
	// read, when not nil, is told every 1024 lines how far into the log
	// the lines built so far reach (loadWatched).
	read *atomic.Int64
}

// splitStreams gives each recorded pid of a log (sizes: its lines) one
// of parts hosts: the largest first, each to the host with the fewest
// lines so far, so that the hosts replay about as much. Pid 0 (the
// kernel's, in JuiceFS's log: the releases of handles) is no stream of
// its own: its lines go where the handle they use was opened.
func splitStreams(sizes map[uint32]int32, parts int) map[uint32]int {
	pids := make([]uint32, 0, len(sizes))
	for pid := range sizes {
		if pid != 0 {
			pids = append(pids, pid)
		}
	}
	sort.Slice(pids, func(i, j int) bool {
		a, b := sizes[pids[i]], sizes[pids[j]]
		return a > b || a == b && pids[i] < pids[j]
	})
	load := make([]int64, parts)
	out := make(map[uint32]int, len(pids))
	for _, pid := range pids {
		h := 0
		for i := range load {
			if load[i] < load[h] {
				h = i
			}
		}
		out[pid] = h
		load[h] += int64(sizes[pid])
	}
	return out
}

// SplitStreams counts the streams a log can be split into, one host or
// more each: its recorded processes or threads, less JuiceFS's pid 0.
func (t *Trace) SplitStreams() int {
	n := 0
	for _, s := range t.Streams {
		if s.ID != 0 {
			n++
		}
	}
	return n
}

// elsewhere reports whether a line of pid belongs to another host's part
// of a split log; f are the fields of a JuiceFS line, to follow pid 0's
// lines to the host that opened their handle (rest: the line's result,
// which holds the handle an open returned).
func (l *loader) elsewhere(pid uint32, name string, f *jargs, rest []byte) bool {
	if l.host == nil {
		return false
	}
	h, ok := l.host[pid]
	if ok && (name == "create" || name == "open") {
		if v, ok := fh(rest); ok {
			l.owner[v] = h // JuiceFS reuses a handle's number once released
		}
	}
	if ok || pid != 0 {
		return h != l.part
	}
	if v, ok := fhOf(name, f); ok {
		if h, ok := l.owner[v]; ok {
			return h != l.part
		}
	}
	return l.part != 0
}

func newLoader() *loader {
	b := newBuilder("")
	f := newFSB(b)
	return &loader{b: b, jfs: newJFS(b), fsb: f, st: newStrace(f), names: map[string]string{}}
}

// line reads one line of the log, as the first pass read it into r.
func (l *loader) line(data []byte, r *rec) {
	sk := &l.b.t.Skipped
	sk.Lines++
	l.b.abandon() // nothing of an earlier line that added no operation
	line := data[r.off : r.off+int(r.n)]
	l.b.read = int64(r.off) + int64(r.n) // for grow
	if l.read != nil && sk.Lines%1024 == 0 && l.b.read > l.read.Load() {
		l.read.Store(l.b.read) // the lines of an ordered load come nearly in order
	}
	switch r.kind {
	case kindMalformed:
		sk.Malformed++
		return
	case kindBlank:
		sk.Blank++
		return
	case kindStrace, kindStraceCall:
		if l.elsewhere(r.pid, "", nil, nil) {
			sk.Elsewhere++
			return
		}
		l.strace(line, r)
		return
	}
	e := &l.e
	if r.kind == kindLongEntry {
		if l.p == nil {
			l.p = accesslog.NewParser(nil)
		}
		_ = l.p.Parse(line, e) // as the first pass did
	} else {
		r.entry(line, e)
	}
	name := l.intern(e.Op)
	var p pending // set field by field: a literal is built aside and copied
	p.op.handle, p.lat = -1, e.Latency
	p.pid, p.name, p.end = e.PID, name, e.Time
	if !e.OK() {
		p.failed = true
		p.op.errno = errOther
		if v, ok := errnos[string(e.Status)]; ok {
			p.op.errno = v
		}
	}
	var added bool
	if isPathArgs(e.Args) {
		if l.elsewhere(e.PID, name, nil, nil) {
			sk.Elsewhere++
			return
		}
		l.setFormat(FormatFSBench)
		added = l.fsb.add(e, &p)
	} else {
		f := &l.f
		f.of(line, e.Args, r)
		if virtual(f, name) {
			sk.Virtual++
			return
		}
		if l.elsewhere(e.PID, name, f, e.Rest) {
			sk.Elsewhere++
			return
		}
		l.setFormat(FormatJuiceFS)
		added = l.jfs.add(e, f, &p)
	}
	if !added {
		l.b.abandon()
		sk.Unsupported[name]++
	}
}

func (l *loader) setFormat(f string) {
	if l.b.t.Format == "" {
		l.b.t.Format = f
	}
}

func (l *loader) intern(b []byte) string {
	if string(b) == l.lastName {
		return l.lastName // a log's lines often repeat an operation
	}
	if k := knownOp(b); k >= 0 {
		l.lastName = knownOps[k]
		return l.lastName
	}
	name, ok := l.names[string(b)]
	if !ok {
		name = string(b)
		l.names[name] = name
	}
	l.lastName = name
	return name
}

// strace reads one line of strace's output, as the first pass read it
// into r.
func (l *loader) strace(line []byte, r *rec) {
	sk := &l.b.t.Skipped
	l.setFormat(FormatStrace)
	var c call
	ok, bad := true, false
	if r.kind == kindStraceCall {
		l.st.callOf(line, r, &c)
	} else {
		c, ok, bad = l.st.parseStrace(line)
	}
	switch {
	case bad:
		sk.Malformed++
		return
	case !ok:
		sk.Blank++ // an exit, a signal, or the first half of a call
		return
	}
	name := c.name // interned by fill
	var p pending
	p.op.handle, p.lat, p.op.errno = -1, c.lat, c.errno
	p.pid, p.name, p.end, p.failed = c.pid, name, c.start+int64(c.lat), c.errno != 0
	added, virtual := l.st.add(&c, &p)
	switch {
	case virtual:
		sk.Virtual++
	case !added:
		l.b.abandon()
		sk.Unsupported[name]++
	}
}
