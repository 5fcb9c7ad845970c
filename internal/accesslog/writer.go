package accesslog

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/fsbench/fsbench/internal/workload"
)

// Buffering of the Writer: each worker appends lines to its own buffer and
// hands it to the writing goroutine when it holds bufSize bytes or its
// oldest line is maxAge old, so the file stays nearly in time order and
// the workers never wait on the disk (unless it falls queueLen buffers
// behind, when they do rather than grow memory without bound).
const (
	bufSize  = 64 << 10
	maxAge   = int64(200 * time.Millisecond)
	queueLen = 64
)

// Writer is a workload.Tracer that writes one access-log line per file
// operation. Trace appends to a buffer owned by the calling worker: no lock,
// no system call and no allocation on the hot path. Close must be called
// after the last Trace to write what is buffered.
type Writer struct {
	out    io.Writer
	closer io.Closer
	path   string
	ids    []byte // " [uid:U,gid:G,pid:P] "

	slots []slot // slots[0] is the run itself (worker -1), slots[i+1] worker i
	mu    sync.Mutex
	extra slot // workers beyond the number given to New, under mu

	full chan []byte
	free chan []byte
	done chan struct{}
	err  error // the first write error, set by the writing goroutine
	once sync.Once
}

type slot struct {
	buf   []byte
	first int64    // completion time of the buffer's first line (ns)
	sec   int64    // the second stamp holds
	stamp [19]byte // "2006.01.02 15:04:05" of sec
	path  string   // the last path logged, and
	name  []byte   // its AppendName form
	_     [64]byte // keep workers' slots on separate cache lines
}

// New returns a Writer that writes to w for a run of the given number of
// workers (more are accepted, at the cost of a lock). The uid, gid and pid
// of every line are this process's.
func New(w io.Writer, workers int) *Writer {
	if workers < 0 {
		workers = 0
	}
	lw := &Writer{
		out:   w,
		ids:   appendIDs(nil, uint32(os.Getuid()), uint32(os.Getgid()), uint32(os.Getpid())),
		slots: make([]slot, workers+1),
		full:  make(chan []byte, queueLen),
		free:  make(chan []byte, queueLen),
		done:  make(chan struct{}),
	}
	for i := range lw.slots {
		lw.slots[i].sec = -1
	}
	lw.extra.sec = -1
	go lw.drain()
	return lw
}

// Create creates (or truncates) the file at path and returns a Writer to
// it; Close closes the file.
func Create(path string, workers int) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("access log: %w", err)
	}
	w := New(f, workers)
	w.closer = f
	w.path = path
	return w, nil
}

func (w *Writer) drain() {
	defer close(w.done)
	for b := range w.full {
		if w.err == nil {
			if _, err := w.out.Write(b); err != nil {
				w.err = err
			}
		}
		select {
		case w.free <- b[:0]:
		default:
		}
	}
}

// Trace logs one operation. Worker i's lines are buffered apart from the
// others'; calls for one worker must come from one goroutine at a time.
func (w *Writer) Trace(worker int, ev workload.Event) {
	i := worker + 1
	if i < 0 || i >= len(w.slots) {
		w.mu.Lock()
		w.add(&w.extra, ev)
		w.mu.Unlock()
		return
	}
	w.add(&w.slots[i], ev)
}

func (w *Writer) add(s *slot, ev workload.Event) {
	end := ev.Start.Add(ev.Dur)
	ns := end.UnixNano()
	if len(s.buf) == 0 {
		if cap(s.buf) == 0 {
			s.buf = w.buffer()
		}
		s.first = ns
	}
	s.buf = w.appendEvent(s.buf, s, end, &ev)
	if len(s.buf) >= bufSize-512 || ns-s.first >= maxAge {
		w.full <- s.buf
		s.buf = w.buffer()
	}
}

func (w *Writer) buffer() []byte {
	select {
	case b := <-w.free:
		return b
	default:
		return make([]byte, 0, bufSize)
	}
}

func (w *Writer) appendEvent(dst []byte, s *slot, t time.Time, ev *workload.Event) []byte {
	if sec := t.Unix(); sec != s.sec {
		copy(s.stamp[:], t.AppendFormat(s.stamp[:0], "2006.01.02 15:04:05"))
		s.sec = sec
	}
	dst = append(dst, s.stamp[:]...)
	dst = append(dst, '.')
	dst = appendPadded(dst, int64(t.Nanosecond()/1000), 6)
	dst = append(dst, w.ids...)
	dst = append(dst, ev.Op...)
	dst = append(dst, " ("...)
	if ev.Path != s.path || s.name == nil {
		s.path = ev.Path
		s.name = AppendName(s.name[:0], ev.Path)
	}
	dst = append(dst, s.name...)
	switch ev.Op {
	case "read", "write":
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, ev.Size, 10)
		dst = append(dst, ',')
		dst = strconv.AppendInt(dst, ev.Offset, 10)
		dst = append(dst, "): "...)
		dst = strconv.AppendInt(dst, ev.Done, 10)
	case "rename":
		// JuiceFS logs rename (parent,name,newparent,newname); fsbench
		// has paths: rename (old,new).
		if ev.To != "" {
			dst = append(dst, ',')
			dst = AppendName(dst, ev.To)
		}
		dst = append(dst, ')')
	default:
		dst = append(dst, ')')
	}
	dst = appendStatus(dst, statusOf(ev.Err))
	return appendLatency(dst, ev.Dur)
}

// statusOf is the status text of an operation's error: "OK" for none (and
// for the end of a file, which ends a read without failing it), the errno's
// text as JuiceFS writes it, or the error's message.
func statusOf(err error) string {
	if err == nil || errors.Is(err, io.EOF) {
		return "OK"
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// Close writes what is buffered, stops the writing goroutine and closes
// the file if Create opened it. It returns the first write error.
func (w *Writer) Close() error {
	var err error
	w.once.Do(func() {
		for i := range w.slots {
			if len(w.slots[i].buf) > 0 {
				w.full <- w.slots[i].buf
			}
			w.slots[i].buf = nil
		}
		w.mu.Lock()
		if len(w.extra.buf) > 0 {
			w.full <- w.extra.buf
		}
		w.extra.buf = nil
		w.mu.Unlock()
		close(w.full)
		<-w.done
		err = w.err
		if w.closer != nil {
			if cerr := w.closer.Close(); err == nil {
				err = cerr
			}
		}
		if err != nil && w.path != "" {
			err = fmt.Errorf("access log %s: %w", w.path, err)
		} else if err != nil {
			err = fmt.Errorf("access log: %w", err)
		}
	})
	return err
}
