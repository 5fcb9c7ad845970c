package profile

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsbench/fsbench/internal/juicefs"
	"github.com/fsbench/fsbench/internal/sysio"
)

// AccessLogFiles are the virtual files a JuiceFS mount streams its access
// log through, in the order they are tried (as juicefs profile does).
var AccessLogFiles = []string{".jfs.accesslog", ".accesslog"}

// ErrNotJuiceFS is returned by MountLog for a directory that is not the
// mount point of a JuiceFS file system.
var ErrNotJuiceFS = errors.New("not a JuiceFS mount point")

// MountLog returns the access-log file of the JuiceFS mount at dir.
func MountLog(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	m, err := sysio.FindMount(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", dir, err)
	}
	if !juicefs.IsJuiceFS(m.FSType) {
		return "", fmt.Errorf("%s is on a mount of type %s: %w", dir, m.FSType, ErrNotJuiceFS)
	}
	if m.MountPoint != abs {
		return "", fmt.Errorf("%s is inside the JuiceFS mount %s; the access log is at the mount point: %w", dir, m.MountPoint, ErrNotJuiceFS)
	}
	for _, name := range AccessLogFiles {
		p := filepath.Join(abs, name)
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("JuiceFS mount %s has no %s or %s", abs, AccessLogFiles[0], AccessLogFiles[1])
}

// readBufSize is how much is read at a time.
const readBufSize = 256 << 10

// Decompress returns a reader of r's content, gunzipped when it starts
// with the gzip magic number (whatever the file is called).
func Decompress(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, readBufSize)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		return zr, nil
	}
	return br, nil
}

// follower reads a growing file as `tail -f` does: from the end it had
// when opened, waiting for more at its end, starting over when the file is
// truncated and switching to the new file when it is replaced (rotated).
type follower struct {
	ctx  context.Context
	path string
	f    *os.File
	off  int64
	poll time.Duration
}

// Follow opens path for reading what is appended to it from now on.
// Reads block until there is data or ctx is done.
func Follow(ctx context.Context, path string, poll time.Duration) (io.ReadCloser, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	off, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("follow %s: %w", path, err)
	}
	return &follower{ctx: ctx, path: path, f: f, off: off, poll: poll}, nil
}

func (t *follower) Read(p []byte) (int, error) {
	for {
		n, err := t.f.Read(p)
		t.off += int64(n)
		if n > 0 {
			return n, nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return 0, fmt.Errorf("read %s: %w", t.path, err)
		}
		if err := t.reopen(); err != nil {
			return 0, err
		}
		select {
		case <-t.ctx.Done():
			return 0, t.ctx.Err()
		case <-time.After(t.poll):
		}
	}
}

// reopen starts over after truncation, or on the file now at path after a
// rotation once the old one is read to its end.
func (t *follower) reopen() error {
	st, err := t.f.Stat()
	if err != nil {
		return fmt.Errorf("follow %s: %w", t.path, err)
	}
	if st.Size() < t.off {
		if _, err := t.f.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("follow %s: %w", t.path, err)
		}
		t.off = 0
		return nil
	}
	cur, err := os.Stat(t.path)
	if err != nil {
		return nil // moved away, not yet replaced: keep waiting
	}
	a, ok1 := st.Sys().(*syscall.Stat_t)
	b, ok2 := cur.Sys().(*syscall.Stat_t)
	if ok1 && ok2 && (a.Ino != b.Ino || a.Dev != b.Dev) {
		f, err := os.Open(t.path)
		if err != nil {
			return nil
		}
		t.f.Close()
		t.f, t.off = f, 0
	}
	return nil
}

func (t *follower) Close() error { return t.f.Close() }

// maxLine bounds a line; longer ones are skipped as malformed, so that a
// file without newlines cannot exhaust memory.
const maxLine = 1 << 20

// splitter cuts a stream of chunks into lines. Complete lines inside a
// chunk are handed on without copying; only a line that spans two chunks
// is assembled in pending.
type splitter struct {
	pending []byte
	skip    bool // discarding the rest of a line longer than maxLine
	long    func()
}

// feed calls fn for each complete line of chunk (without the newline).
func (s *splitter) feed(chunk []byte, fn func([]byte)) {
	if len(s.pending) > 0 || s.skip {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			s.hold(chunk)
			return
		}
		s.hold(chunk[:i])
		if !s.skip {
			fn(s.pending)
		}
		s.pending = s.pending[:0]
		s.skip = false
		chunk = chunk[i+1:]
	}
	for {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			break
		}
		fn(chunk[:i])
		chunk = chunk[i+1:]
	}
	s.hold(chunk)
}

func (s *splitter) hold(b []byte) {
	if s.skip || len(b) == 0 {
		return
	}
	if len(s.pending)+len(b) > maxLine {
		s.pending = s.pending[:0]
		s.skip = true
		s.long()
		return
	}
	s.pending = append(s.pending, b...)
}

// flush hands on the last line if the stream did not end with a newline.
func (s *splitter) flush(fn func([]byte)) {
	if len(s.pending) > 0 && !s.skip {
		fn(s.pending)
	}
	s.pending = s.pending[:0]
	s.skip = false
}
