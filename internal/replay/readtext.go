package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/fsbench/fsbench/internal/profile"
	"github.com/fsbench/fsbench/internal/units"
)

// Default limits of a log's text: far above any log a replay can hold in
// memory with its trace, far below what fills a machine's memory.
const (
	DefaultMaxLogSize  = 4 << 30
	DefaultMaxLineSize = 1 << 20
)

// Limits bound what a log's load reads: its text, blank lines left out,
// and each line.
type Limits struct {
	Size int64 // --max-log-size; 0: DefaultMaxLogSize
	Line int   // --max-line-size; 0: DefaultMaxLineSize
}

func (l Limits) size() int64 {
	if l.Size <= 0 {
		return DefaultMaxLogSize
	}
	return l.Size
}

func (l Limits) line() int {
	if l.Line <= 0 {
		return DefaultMaxLineSize
	}
	return l.Line
}

// errTooLarge is the error of a log over a limit.
type errTooLarge struct {
	what  string
	limit int64
	flag  string
}

func (e *errTooLarge) Error() string {
	return fmt.Sprintf("%s more than %s (%s raises the limit)", e.what, units.FormatBytes(e.limit), e.flag)
}

func (l Limits) tooLarge() error {
	return &errTooLarge{"holds", l.size(), "--max-log-size"}
}

func (l Limits) tooLong(line int) error {
	return &errTooLarge{fmt.Sprintf("line %d holds", line), int64(l.line()), "--max-line-size"}
}

// check applies the limits to a log mapped whole: its size, and each
// line's.
func (l Limits) check(data []byte) error {
	if int64(len(data)) > l.size() {
		return l.tooLarge()
	}
	max := l.line()
	for n := 1; len(data) > 0; n++ {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			i = len(data)
		}
		if i > max {
			return l.tooLong(n)
		}
		data = data[min(i+1, len(data)):]
	}
	return nil
}

// readText reads the log r gives, decompressed, into memory, leaving out
// its blank lines (which take neither memory nor a place in the
// limits), within lim; it returns as soon as ctx is done, with its
// error, even while a read waits (a pipe, a FIFO whose writer is
// silent). hint is the log's size, when known, for the first buffer.
func readText(ctx context.Context, open func() (io.Reader, error), hint int64, lim Limits) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	done := make(chan result, 1)
	go func() {
		r, err := open()
		if err == nil {
			var d []byte
			d, err = copyText(ctx, r, hint, lim)
			if c, ok := r.(io.Closer); ok {
				c.Close()
			}
			done <- result{d, err}
			return
		}
		done <- result{nil, err}
	}()
	select {
	case r := <-done:
		return r.data, r.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// openLog is what readText opens: r decompressed.
func openLog(r io.Reader) func() (io.Reader, error) {
	return func() (io.Reader, error) { return profile.Decompress(r) }
}

// openStream is what readText opens for a log that is no regular file (a
// FIFO, whose open waits for a writer; a device): the file, decompressed,
// closed with the reader.
func openStream(path string) func() (io.Reader, error) {
	return func() (io.Reader, error) {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		r, err := profile.Decompress(f)
		if err != nil {
			f.Close()
			return nil, err
		}
		return struct {
			io.Reader
			io.Closer
		}{r, f}, nil
	}
}

// copyText is readText's reading.
func copyText(ctx context.Context, r io.Reader, hint int64, lim Limits) ([]byte, error) {
	maxSize, maxLine := lim.size(), lim.line()
	buf := make([]byte, 0, min(max(hint, 64<<10), maxSize)+1)
	chunk := make([]byte, 1<<20)
	line, lines := 0, 1 // bytes of the line being read, and its number
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		n, err := r.Read(chunk)
		for b := chunk[:n]; len(b) > 0; {
			seg := b
			if i := bytes.IndexByte(b, '\n'); i >= 0 {
				seg = b[:i+1]
			}
			b = b[len(seg):]
			end := seg[len(seg)-1] == '\n'
			if end {
				lines++
			}
			if line == 0 && len(seg) == 1 && end {
				continue // a blank line
			}
			if line += len(seg); line-int(btoi(end)) > maxLine {
				return nil, lim.tooLong(lines - btoi(end))
			}
			if int64(len(buf)+len(seg)) > maxSize {
				return nil, lim.tooLarge()
			}
			buf = append(buf, seg...)
			if end {
				line = 0
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return buf, nil
		case profile.Damaged(err):
			return nil, fmt.Errorf("%w: the compressed log is cut short or damaged", err)
		case err != nil:
			return nil, err
		}
	}
}
