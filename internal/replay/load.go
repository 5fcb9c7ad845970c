package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"syscall"

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
	l := newLoader()
	idx := l.order(data)
	if parts > 1 {
		l.part, l.host, l.owner = part, splitStreams(l.b.sizes, parts), map[uint64]int{}
	}
	for _, i := range idx {
		l.line(l.lines[i])
	}
	t := l.b.finish()
	if t.Ops() == 0 {
		return t, errors.New("the log holds no operation to replay")
	}
	return t, nil
}

// order splits data into lines and returns the order to read them in:
// by completion time, as the operations completed. JuiceFS writes its log
// in that order; fsbench writes each worker's operations in batches, so
// its log is only nearly in order.
func (l *loader) order(data []byte) []int {
	lines := bytes.Count(data, []byte{'\n'}) + 1
	times := make([]int64, 0, lines)
	l.lines = make([][]byte, 0, lines)
	sorted := true
	for len(data) > 0 {
		line := data
		if k := bytes.IndexByte(data, '\n'); k >= 0 {
			line, data = data[:k], data[k+1:]
		} else {
			data = nil
		}
		t := int64(math.MinInt64) // lines that are not entries keep their place
		switch {
		case len(line) > maxLine:
		case isStrace(line):
			pid, _ := num(line[:bytes.IndexByte(line, ' ')])
			l.b.sizes[uint32(pid)]++
		case l.p.Parse(line, &l.e) == nil:
			t = l.e.Time
			l.b.sizes[l.e.PID]++
		}
		if n := len(times); t == math.MinInt64 && n > 0 {
			t = times[n-1]
		}
		if n := len(times); n > 0 && t < times[n-1] {
			sorted = false
		}
		l.lines = append(l.lines, line)
		times = append(times, t)
	}
	idx := make([]int, len(l.lines))
	for i := range idx {
		idx[i] = i
	}
	if !sorted {
		sort.SliceStable(idx, func(a, b int) bool { return times[idx[a]] < times[idx[b]] })
	}
	return idx
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
	lines [][]byte
	f     [][]byte // the fields of the line in progress
	// host, when the log is split across hosts, gives each recorded pid
	// its host; part is this one.
	host  map[uint32]int
	part  int
	owner map[uint64]int // a recorded handle's number -> the host that opened it
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
func (l *loader) elsewhere(pid uint32, name string, f [][]byte, rest []byte) bool {
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
	return &loader{p: accesslog.NewParser(nil), b: b, jfs: newJFS(b), fsb: f, st: newStrace(f), names: map[string]string{}}
}

// line reads one line of the log.
func (l *loader) line(line []byte) {
	sk := &l.b.t.Skipped
	sk.Lines++
	if len(line) > maxLine {
		sk.Malformed++
		return
	}
	if isStrace(line) {
		if pid, _ := num(line[:bytes.IndexByte(line, ' ')]); l.elsewhere(uint32(pid), "", nil, nil) {
			sk.Elsewhere++
			return
		}
		l.strace(line)
		return
	}
	e := &l.e
	if err := l.p.Parse(line, e); err != nil {
		if errors.Is(err, accesslog.ErrBlank) || errors.Is(err, accesslog.ErrKeepAlive) {
			sk.Blank++
		} else {
			sk.Malformed++
		}
		return
	}
	name := l.intern(e.Op)
	p := pending{op: Op{handle: -1, prep: -1, RecLatency: e.Latency}, pid: e.PID, name: name, end: e.Time}
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
		l.f = fields(l.f, e.Args)
		f := l.f
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
		clear(l.b.deps)
		sk.Unsupported[name]++
	}
}

func (l *loader) setFormat(f string) {
	if l.b.t.Format == "" {
		l.b.t.Format = f
	}
}

func (l *loader) intern(b []byte) string {
	name, ok := l.names[string(b)]
	if !ok {
		name = string(b)
		l.names[name] = name
	}
	return name
}

// strace reads one line of strace's output.
func (l *loader) strace(line []byte) {
	sk := &l.b.t.Skipped
	l.setFormat(FormatStrace)
	c, ok, bad := l.st.parseStrace(line)
	switch {
	case bad:
		sk.Malformed++
		return
	case !ok:
		sk.Blank++ // an exit, a signal, or the first half of a call
		return
	}
	name := l.intern([]byte(c.name))
	p := pending{op: Op{handle: -1, prep: -1, RecLatency: c.lat, errno: c.errno}, pid: c.pid, name: name,
		end: c.start + int64(c.lat), failed: c.errno != 0}
	added, virtual := l.st.add(&c, &p)
	switch {
	case virtual:
		sk.Virtual++
	case !added:
		clear(l.b.deps)
		sk.Unsupported[name]++
	}
}
