package replay

import (
	"bufio"
	"errors"
	"fmt"
	"io"
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
	l := newLoader()
	br := bufio.NewReaderSize(r, 256<<10)
	for {
		line, err := readLine(br)
		if len(line) > 0 || err == nil {
			l.line(line)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read log: %w", err)
		}
	}
	t := l.b.finish()
	if t.Ops() == 0 {
		return t, errors.New("the log holds no operation to replay")
	}
	return t, nil
}

// readLine returns the next line without its newline; a line longer
// than maxLine comes back as one too long to be an entry.
func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		for err == bufio.ErrBufferFull {
			_, err = br.ReadSlice('\n')
		}
		return make([]byte, maxLine+1), err
	}
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	return line, err
}

// loader holds the state of one Load.
type loader struct {
	p     *accesslog.Parser
	e     accesslog.Entry
	b     *builder
	jfs   *jfs
	fsb   *fsb
	names map[string]string // interned operation names
}

func newLoader() *loader {
	b := newBuilder("")
	return &loader{p: accesslog.NewParser(nil), b: b, jfs: newJFS(b), fsb: newFSB(b), names: map[string]string{}}
}

// line reads one line of the log.
func (l *loader) line(line []byte) {
	sk := &l.b.t.Skipped
	sk.Lines++
	if len(line) > maxLine {
		sk.Malformed++
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
	name, ok := l.names[string(e.Op)]
	if !ok {
		name = string(e.Op)
		l.names[name] = name
	}
	p := pending{op: Op{handle: -1, prep: -1, RecLatency: e.Latency}, pid: e.PID, name: name, end: e.Time}
	if !e.OK() {
		p.failed = true
		p.op.errno = errOther
		if v, ok := errnos[string(e.Status)]; ok {
			p.op.errno = v
		}
	}
	var added bool
	switch {
	case isPathArgs(e.Args):
		l.setFormat(FormatFSBench)
		added = l.fsb.add(e, &p)
	case virtual(fields(e.Args), name):
		sk.Virtual++
		return
	default:
		l.setFormat(FormatJuiceFS)
		added = l.jfs.add(e, &p)
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
