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

// Buffering of the Writer: each worker appends its events (a copy of a
// small struct, no formatting) to its own batch and hands the batch to the
// writing goroutine when it holds batchLen events or its oldest is maxAge
// old, so the file stays nearly in time order. The writing goroutine
// formats and writes; the workers never wait on it unless it falls
// queueLen batches behind, when they do rather than grow memory without
// bound.
const (
	batchLen = 1024
	maxAge   = int64(200 * time.Millisecond)
	queueLen = 64
)

// Writer is a workload.Tracer that writes one access-log line per file
// operation. Trace only copies the event into a batch owned by the calling
// worker: no lock, no system call, no formatting and no allocation on the
// hot path. Close must be called after the last Trace to write what is
// batched.
type Writer struct {
	out    io.Writer
	closer io.Closer
	path   string

	slots []slot // slots[0] is the run itself (worker -1), slots[i+1] worker i
	mu    sync.Mutex
	extra slot // workers beyond the number given to New, under mu

	full chan []workload.Event
	free chan []workload.Event
	done chan struct{}
	err  error // the first write error, set by the writing goroutine
	once sync.Once

	// The writing goroutine's state.
	f   formatter
	buf []byte
}

type slot struct {
	evs   []workload.Event
	first int64    // completion time of the batch's first event (ns)
	_     [64]byte // keep workers' slots on separate cache lines
}

// formatter turns events into lines, remembering what repeats from one
// line to the next.
type formatter struct {
	ids   []byte   // " [uid:U,gid:G,pid:P] "
	sec   int64    // the second stamp holds
	stamp [19]byte // "2006.01.02 15:04:05" of sec
	path  string   // the last path logged, and
	name  []byte   // its AppendName form
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
		slots: make([]slot, workers+1),
		full:  make(chan []workload.Event, queueLen),
		free:  make(chan []workload.Event, queueLen),
		done:  make(chan struct{}),
		f:     formatter{ids: appendIDs(nil, uint32(os.Getuid()), uint32(os.Getgid()), uint32(os.Getpid())), sec: -1},
		buf:   make([]byte, 0, batchLen*160),
	}
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
	for evs := range w.full {
		if w.err == nil {
			w.buf = w.buf[:0]
			for i := range evs {
				w.buf = w.f.appendEvent(w.buf, &evs[i])
			}
			if _, err := w.out.Write(w.buf); err != nil {
				w.err = err
			}
		}
		clear(evs) // drop the references to paths and errors
		select {
		case w.free <- evs[:0]:
		default:
		}
	}
}

// Trace logs one operation. Worker i's events are batched apart from the
// others'; calls for one worker must come from one goroutine at a time.
func (w *Writer) Trace(worker int, ev workload.Event) {
	i := worker + 1
	if i < 0 || i >= len(w.slots) {
		w.mu.Lock()
		w.add(&w.extra, &ev)
		w.mu.Unlock()
		return
	}
	w.add(&w.slots[i], &ev)
}

func (w *Writer) add(s *slot, ev *workload.Event) {
	ns := ev.Start.UnixNano() + int64(ev.Dur)
	// A batch that has grown old (its worker was idle, say between two
	// phases) goes out before the new event, which starts the next batch:
	// so the other workers' events of that time are not left behind it.
	if len(s.evs) > 0 && ns-s.first >= maxAge {
		w.full <- s.evs
		s.evs = w.batch()
	}
	if len(s.evs) == 0 {
		if cap(s.evs) == 0 {
			s.evs = w.batch()
		}
		s.first = ns
	}
	s.evs = append(s.evs, *ev)
	if len(s.evs) == cap(s.evs) {
		w.full <- s.evs
		s.evs = w.batch()
	}
}

func (w *Writer) batch() []workload.Event {
	select {
	case b := <-w.free:
		return b
	default:
		return make([]workload.Event, 0, batchLen)
	}
}

// appendEvent appends ev as a line: the completion time, the ids, the
// operation and its path (plus size and offset, and the bytes done, for
// read and write; the new path for rename), the status and the latency.
func (f *formatter) appendEvent(dst []byte, ev *workload.Event) []byte {
	t := ev.Start.Add(ev.Dur)
	if sec := t.Unix(); sec != f.sec {
		copy(f.stamp[:], t.AppendFormat(f.stamp[:0], "2006.01.02 15:04:05"))
		f.sec = sec
	}
	dst = append(dst, f.stamp[:]...)
	dst = append(dst, '.')
	dst = appendPadded(dst, int64(t.Nanosecond()/1000), 6)
	dst = append(dst, f.ids...)
	dst = append(dst, ev.Op...)
	dst = append(dst, " ("...)
	if ev.Path != f.path || f.name == nil {
		f.path = ev.Path
		f.name = AppendName(f.name[:0], ev.Path)
	}
	dst = append(dst, f.name...)
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
			if len(w.slots[i].evs) > 0 {
				w.full <- w.slots[i].evs
			}
			w.slots[i].evs = nil
		}
		w.mu.Lock()
		if len(w.extra.evs) > 0 {
			w.full <- w.extra.evs
		}
		w.extra.evs = nil
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
