package journal

import (
	"encoding/binary"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsbench/fsbench/internal/workload"
)

// batch is how many bytes a worker gathers before it appends them to the
// journal file: one write(2) carries hundreds of records.
const batch = 256 << 10

// Writer is a workload.Tracer that appends the acknowledged writes, syncs,
// creations, renames and deletes of a run to a journal. Each worker
// gathers its records in a buffer of its own, which only it touches (no
// lock on the hot path), and appends it whole when it is full or, at its
// next event, when an Interval has passed since it last did; the journal
// is fsynced every Interval. So a writer killed at any point leaves a
// journal torn at worst in its last frame, which ends about an Interval
// before for a worker that was busy (a worker idle since leaves its last
// records to Close: they are then not checked, never wrongly counted).
type Writer struct {
	f     *os.File
	root  string // absolute, with a trailing slash
	start time.Time
	mu    sync.Mutex    // the file's appends
	bufs  []*wbuf       // one per worker; the last one is the run's own, shared (locked)
	epoch atomic.Uint64 // Intervals passed: a worker behind it appends its buffer
	dirty bool          // appended since the last fsync (under mu)
	err   error         // the first failed append or fsync (under mu)
	stop  chan struct{}
	done  chan struct{}
	// aliases are other names of directories below the root, by which
	// events may reach the writer (set by Alias before the run).
	aliases []alias
}

// alias is a directory's other name (with a trailing slash) and its path
// below the root ("" or ending in a slash).
type alias struct{ dir, as string }

type wbuf struct {
	mu    sync.Mutex // the shared buffer's only
	b     []byte
	last  string // the path of the frame's last record (samePath)
	full  string // last as the event gave it, before rel (the same string: compared at once)
	epoch uint64 // Writer.epoch when it last appended
	// The frame's last record when it is a write with its content known
	// (n > 0): where it ended, its length and time. A write right after
	// it of the same length is a Next record.
	end, n int64
	t      uint64
	// pad makes a buffer 128 bytes, two cache lines of its own: workers'
	// buffers side by side in one line made every write of one worker
	// take the line from the other's CPU (8% of a 4 KiB writer on tmpfs).
	_ [32]byte
}

// Interval is how often a Writer appends every buffer and fsyncs.
var Interval = time.Second

// Create makes a new journal at path (which must not exist) for a run of
// workers workers below root, and starts its periodic flush.
func Create(path, root string, workers int, seed uint64) (*Writer, error) {
	return create(path, root, "", workers, seed)
}

// CreateFile is Create on f, a new empty file its caller made (an agent
// makes it beneath a directory it holds, confined to its roots); the
// Writer closes it.
func CreateFile(f *os.File, root string, workers int, seed uint64) (*Writer, error) {
	return start(f, root, "", workers, seed)
}

// create is Create, and for a journal of objects (storage set) root is the
// store's URL and a Store record follows the header.
func create(path, root, storage string, workers int, seed uint64) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return start(f, root, storage, workers, seed)
}

// start writes the journal's header to f and starts its periodic flush.
func start(f *os.File, root, storage string, workers int, seed uint64) (*Writer, error) {
	host, _ := os.Hostname()
	w := &Writer{f: f, root: strings.TrimSuffix(root, "/") + "/", start: time.Now(),
		stop: make(chan struct{}), done: make(chan struct{})}
	for range workers + 1 {
		w.bufs = append(w.bufs, &wbuf{b: make([]byte, frameHead, batch+batch/4)})
	}
	hdr := appendRecord(make([]byte, frameHead), &Record{Type: Header, Root: strings.TrimSuffix(root, "/"), Host: host, Seed: seed, Start: w.start.UnixNano()})
	if storage != "" {
		w.root = ""
		hdr = appendRecord(hdr, &Record{Type: Store, Path: storage})
	}
	if _, err := f.Write(append([]byte(Magic), seal(hdr)...)); err != nil {
		f.Close()
		return nil, err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return nil, err
	}
	go w.flusher()
	return w, nil
}

// Trace records ev if it is an acknowledged event the journal keeps.
func (w *Writer) Trace(worker int, ev workload.Event) {
	b := w.buf(worker)
	w.tick(b)
	if ev.Err != nil {
		return
	}
	var typ byte
	switch ev.Op {
	case "write":
		if ev.Done > 0 {
			w.write(b, ev.Path, ev.Offset, ev.Done, ev.Data, ev.Start.Add(ev.Dur))
		}
		return
	case "fsync":
		w.event(b, Sync, ev.Path, "", ev.Start) // it covers what was acknowledged before it began
		return
	case "syncfs":
		w.event(b, SyncAll, ev.Path, "", ev.Start)
		return
	case "close":
		typ = Close
	case "create":
		typ = Created
	case "unlink":
		typ = Delete
	case "rename":
		typ = Rename
	default:
		return
	}
	w.event(b, typ, ev.Path, ev.To, ev.Start.Add(ev.Dur))
}

// TraceWrite records a write that succeeded whole (workload.WriteTracer):
// Trace of its Event without the Event.
func (w *Writer) TraceWrite(worker int, path string, off int64, data []byte, at time.Time) {
	b := w.buf(worker)
	w.tick(b)
	w.write(b, path, off, int64(len(data)), data, at)
}

// tick appends a worker's buffer at its first event after an Interval.
func (w *Writer) tick(b *wbuf) {
	if b != w.shared() {
		if e := w.epoch.Load(); b.epoch != e {
			b.epoch = e
			w.append(b)
		}
	}
}

func (w *Writer) buf(worker int) *wbuf {
	if worker < 0 || worker >= len(w.bufs)-1 {
		return w.shared()
	}
	return w.bufs[worker]
}

// shared is the buffer of the run's own events (and of workers beyond
// those the journal was made for), which is locked.
func (w *Writer) shared() *wbuf { return w.bufs[len(w.bufs)-1] }

// lock locks b if it is the shared buffer, and returns its unlock.
func (w *Writer) lock(b *wbuf) func() {
	if b != w.shared() {
		return func() {}
	}
	b.mu.Lock()
	return b.mu.Unlock
}

func (w *Writer) rel(path string) string {
	for _, a := range w.aliases {
		if rest, ok := strings.CutPrefix(path, a.dir); ok {
			return a.as + rest
		}
	}
	return strings.TrimPrefix(path, w.root)
}

// Alias records the events of paths below dir as below as, a directory
// relative to the root ("" for the root itself): a run that reaches its
// directory by another name (an agent's /proc/self/fd/N, opened beneath
// its allowed root) journals its paths as verify finds them below the
// root. Call it before the run traces its first event.
func (w *Writer) Alias(dir, as string) {
	if dir == "" {
		return
	}
	if as != "" {
		as = strings.TrimSuffix(as, "/") + "/"
	}
	w.aliases = append(w.aliases, alias{dir: strings.TrimSuffix(dir, "/") + "/", as: as})
}

func (w *Writer) since(t time.Time) int64 {
	if t.IsZero() {
		t = time.Now()
	}
	return int64(t.Sub(w.start))
}

func (w *Writer) event(b *wbuf, typ byte, path, to string, at time.Time) {
	defer w.lock(b)()
	b.last, b.full, b.n = w.rel(path), path, 0
	b.b = appendRecord(b.b, &Record{Type: typ, T: w.since(at), Path: b.last, To: w.rel(to)})
	w.full(b)
}

// write records the acknowledged write of done bytes at off of path,
// acknowledged at at; data, when it holds them, gives the pieces' sums.
func (w *Writer) write(b *wbuf, path string, off, done int64, data []byte, at time.Time) {
	if b == w.shared() {
		defer w.lock(b)()
	}
	t := uint64(max(int64(at.Sub(w.start)), 0))
	known := int64(len(data)) >= done
	same := path == b.full && b.last != ""
	next := same && known && b.n == done && b.end == off && t >= b.t
	p := b.b
	switch {
	case next:
		p = binary.AppendUvarint(append(p, Next), t-b.t)
	case same:
		p = binary.AppendUvarint(append(p, Write|samePath), t)
	default:
		b.last, b.full = w.rel(path), path
		p = appendString(binary.AppendUvarint(append(p, Write), t), b.last)
	}
	if !next {
		p = binary.AppendUvarint(p, uint64(off))
		p = binary.AppendUvarint(p, uint64(done))
		n := 0
		if known {
			n = countPieces(off, done)
		}
		p = binary.AppendUvarint(p, uint64(n))
	}
	b.b, b.end, b.t, b.n = p, off+done, t, 0
	if known {
		b.b, b.n = appendSums(p, data[:done], off), done
	}
	w.full(b)
}

// appendSums appends the fingerprints of the pieces of data written at
// off (the loop of Pieces, without its call per piece).
func appendSums(p, data []byte, off int64) []byte {
	for len(data) > 0 {
		l := min(int64(len(data)), (off/Cell+1)*Cell-off)
		p = binary.LittleEndian.AppendUint32(p, Fingerprint(data[:l]))
		data, off = data[l:], off+l
	}
	return p
}

// full appends b's records to the file once it holds a batch.
func (w *Writer) full(b *wbuf) {
	if len(b.b) >= batch {
		w.append(b)
	}
}

func (w *Writer) append(b *wbuf) {
	if len(b.b) == frameHead {
		return
	}
	w.mu.Lock()
	if _, err := w.f.Write(seal(b.b)); err != nil && w.err == nil {
		w.err = err
	}
	w.dirty = true
	w.mu.Unlock()
	b.b, b.last, b.full, b.n = b.b[:frameHead], "", "", 0
}

// Flush appends every buffer and fsyncs the journal. It must not run
// while the workers trace: Close calls it once they are done.
func (w *Writer) Flush() error {
	for _, b := range w.bufs {
		unlock := w.lock(b)
		w.append(b)
		unlock()
	}
	return w.sync()
}

// sync fsyncs the journal if anything was appended since it last did.
func (w *Writer) sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dirty {
		w.dirty = false
		if err := w.f.Sync(); err != nil && w.err == nil {
			w.err = err
		}
	}
	return w.err
}

func (w *Writer) flusher() {
	defer close(w.done)
	t := time.NewTicker(Interval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
			w.epoch.Add(1)
			s := w.shared()
			s.mu.Lock()
			w.append(s)
			s.mu.Unlock()
			_ = w.sync()
		}
	}
}

// Close flushes and closes the journal; its error is the first the
// journal met, which leaves it incomplete.
func (w *Writer) Close() error {
	close(w.stop)
	<-w.done
	err := w.Flush()
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("journal %s: %w", w.f.Name(), err)
	}
	return nil
}
