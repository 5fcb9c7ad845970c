package journal

import (
	"os"
	"sync"
	"time"
)

// CreateObjects makes a new journal at path (which must not exist) for a
// run of workers workers that puts and deletes objects of the store of
// type storage at url (without credentials: the journal keeps it), and
// starts its periodic flush. Its paths are keys of that store.
func CreateObjects(path, storage, url string, workers int, seed uint64) (*Writer, error) {
	return create(path, url, storage, workers, seed)
}

// CreateObjectsFile is CreateObjects on f, a new empty file its caller
// made (CreateFile).
func CreateObjectsFile(f *os.File, storage, url string, workers int, seed uint64) (*Writer, error) {
	return start(f, url, storage, workers, seed)
}

// pieces are the buffers Put generates a put's content again in.
var pieces = sync.Pool{New: func() any { return new([Cell]byte) }}

// Put records a put the store acknowledged at t: the object key of size
// bytes, whose content fill writes (fill(b, off) puts the bytes from off
// into b). An object store's acknowledgement of a put is its durability
// point, so the put is recorded as written and made durable at once.
func (w *Writer) Put(worker int, key string, size int64, fill func(b []byte, off int64), t time.Time) {
	b := w.buf(worker)
	w.tick(b)
	var sums []uint32
	if size > 0 {
		sums = make([]uint32, 0, countPieces(0, size))
		piece := pieces.Get().(*[Cell]byte) // fill would make one of the stack escape each put
		Pieces(0, size, func(o, l int64) {
			fill(piece[:l], o)
			sums = append(sums, Fingerprint(piece[:l]))
		})
		pieces.Put(piece)
	}
	defer w.lock(b)()
	at := w.since(t)
	b.b = appendRecord(b.b, &Record{Type: Created, T: at, Path: key})
	if size > 0 {
		b.b = appendRecord(b.b, &Record{Type: Write, T: at, Path: key, Len: size, Sums: sums})
	}
	b.b = appendRecord(b.b, &Record{Type: Sync, T: at, Path: key})
	b.last, b.full, b.n = key, key, 0
	w.full(b)
}

// Deleted records a delete of key the store acknowledged at t; one that
// failed (not sure), which the store may or may not have done, makes
// verify check nothing of key.
func (w *Writer) Deleted(worker int, key string, t time.Time, sure bool) {
	b := w.buf(worker)
	w.tick(b)
	typ := byte(Delete)
	if !sure {
		typ = Created // what it held is gone; nothing is known of it now
	}
	w.event(b, typ, key, "", t)
}
