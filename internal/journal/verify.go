package journal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// The kinds of Finding.
const (
	Lost       = "lost"       // the file or object is gone, ends before the write, or holds zeros where it was
	Stale      = "stale"      // the range holds what an earlier write put there
	Torn       = "torn"       // part of the write holds its content, part old content or zeros
	Unexpected = "unexpected" // the range holds what was never written there, or a deleted file is back
)

// Finding is one write (or file) that does not hold what the journal says.
type Finding struct {
	Kind    string `json:"kind"`
	Path    string `json:"path"`
	Offset  int64  `json:"offset"`
	Length  int64  `json:"length"`
	Durable bool   `json:"durable"` // an fsync or syncfs covered it: a loss of it counts
	Detail  string `json:"detail"`
	// BadOffset and BadBytes are where the first 4 KiB piece that did not
	// hold starts, and how many bytes did not.
	BadOffset int64 `json:"bad_offset"`
	BadBytes  int64 `json:"bad_bytes"`
}

// Summary is what Verify found.
type Summary struct {
	Verdict        string    `json:"verdict"` // Line, set by WriteJSON
	Root           string    `json:"root"`
	Files          int       `json:"files"`
	Recorded       int       `json:"recorded"` // writes the journal holds
	Writes         int       `json:"writes"`   // of them, those no later write or delete replaced: the ones checked
	Bytes          int64     `json:"bytes"`
	Held           int       `json:"held"`
	Lost           int       `json:"lost"`
	Stale          int       `json:"stale"`
	Torn           int       `json:"torn"`
	Unexpected     int       `json:"unexpected"`
	Unsynced       int       `json:"unsynced"`        // of Writes, those no fsync covered (the unsynced tail)
	UnsyncedFailed int       `json:"unsynced_failed"` // of them, found not to hold: named, not counted
	IgnoredBytes   int64     `json:"journal_ignored_bytes"`
	Findings       []Finding `json:"findings"`
	// Journals are the journals verified, when there were several (one
	// a host of a run on many hosts): each one's own verdict. The
	// counts above are their sums.
	Journals []Part              `json:"journals,omitempty"`
	objects  bool                // the journal's are objects, not files
	sum      func([]byte) uint32 // the journal's Fingerprint
	back     int                 // of Unexpected, deleted objects found there (no write of Writes)
}

// Part is one of several journals verified together.
type Part struct {
	Journal string `json:"journal"` // the file, as given
	Host    string `json:"host"`    // the host its run ran on, as the journal says
	Verdict string `json:"verdict"` // its own verdict line
	Failed  int    `json:"failed"`  // its durable writes that did not hold
	// IgnoredBytes is its torn tail, left out.
	IgnoredBytes int64 `json:"journal_ignored_bytes"`
}

// Add adds o, what Verify found for the journal file (of a run on the
// same root: another host's), to s: the counts summed, the findings
// appended, and o's own verdict kept in Journals.
func (s *Summary) Add(file, host string, o *Summary) {
	s.Journals = append(s.Journals, Part{Journal: file, Host: host, Verdict: o.Line(), Failed: o.Failed(), IgnoredBytes: o.IgnoredBytes})
	s.Root, s.objects = o.Root, o.objects
	s.Files += o.Files
	s.Recorded += o.Recorded
	s.Writes += o.Writes
	s.Bytes += o.Bytes
	s.Held += o.Held
	s.Lost += o.Lost
	s.Stale += o.Stale
	s.Torn += o.Torn
	s.Unexpected += o.Unexpected
	s.Unsynced += o.Unsynced
	s.UnsyncedFailed += o.UnsyncedFailed
	s.IgnoredBytes += o.IgnoredBytes
	s.back += o.back
	s.Findings = append(s.Findings, o.Findings...)
}

// Failed is the count of durable writes that did not hold.
func (s *Summary) Failed() int { return s.Lost + s.Stale + s.Torn + s.Unexpected }

// Target reads back what a journal recorded: files below a directory, or
// objects of a store.
type Target interface {
	// Open opens a file or object for reading; fs.ErrNotExist when it is
	// not there.
	Open(ctx context.Context, path string) (Object, error)
}

// Object is one file or object being read back.
type Object interface {
	io.ReaderAt
	Size() int64
	Close() error
}

// Verify checks every write j records against t.
func Verify(ctx context.Context, j *Journal, t Target) (*Summary, error) {
	m := build(j.Records)
	s := &Summary{Root: j.Header.Root, Recorded: m.writes, IgnoredBytes: j.Ignored, objects: j.Objects(), sum: j.sum}
	for _, path := range m.paths() {
		if err := ctx.Err(); err != nil {
			return s, err
		}
		if err := s.checkFile(ctx, t, path, m.files[path]); err != nil {
			return s, err
		}
	}
	for path := range m.deleted {
		o, err := t.Open(ctx, path)
		if err == nil {
			o.Close()
			// A store's acknowledged delete is durable; a file system's
			// unlink is not (fsbench does not fsync directories).
			s.add(Finding{Kind: Unexpected, Path: path, Detail: "deleted, but there", Durable: s.objects})
			if s.objects {
				s.back++
			}
		}
	}
	return s, nil
}

func (s *Summary) add(f Finding) {
	s.Findings = append(s.Findings, f)
	switch {
	case !f.Durable:
		s.UnsyncedFailed++
	case f.Kind == Lost:
		s.Lost++
	case f.Kind == Stale:
		s.Stale++
	case f.Kind == Torn:
		s.Torn++
	default:
		s.Unexpected++
	}
}

func (s *Summary) checkFile(ctx context.Context, t Target, path string, f *fileState) error {
	ws := f.liveWrites()
	s.Files++
	s.Writes += len(ws)
	o, err := t.Open(ctx, path)
	if errors.Is(err, fs.ErrNotExist) {
		for _, w := range ws {
			s.Bytes += w.n
			if !w.durable {
				s.Unsynced++
			}
			s.add(Finding{Kind: Lost, Path: path, Offset: w.off, Length: w.n, Durable: w.durable, Detail: s.noun() + " missing", BadOffset: w.off, BadBytes: w.n})
		}
		return nil
	}
	if err != nil {
		return err
	}
	defer o.Close()
	r := &window{o: o, sum: s.sum}
	for _, w := range ws {
		s.Bytes += w.n
		if !w.durable {
			s.Unsynced++
		}
		f := judge(r, w)
		if f.Kind == "" && s.objects {
			f = longer(o.Size(), w)
		}
		if f.Kind == "" {
			s.Held++
		} else {
			f.Path, f.Offset, f.Length, f.Durable = path, w.off, w.n, w.durable
			f.Detail = strings.Replace(f.Detail, "file", s.noun(), 1)
			s.add(f)
		}
	}
	return r.err
}

// longer names an object that holds the put's content and more after it:
// a put replaces a whole object, so the store holds what was never put.
func longer(size int64, w *write) Finding {
	end := w.off + w.n
	if size <= end {
		return Finding{}
	}
	return Finding{Kind: Unexpected, Detail: fmt.Sprintf("%d bytes where %d were put", size, end), BadOffset: end, BadBytes: size - end}
}

// The states of one piece read back.
const (
	pOK = iota
	pShort
	pZero
	pStale
	pOther
)

// judge reads w's live pieces back and names what is wrong with them
// (Kind "" when they hold), where the first piece that did not hold
// starts and how many bytes did not.
func judge(r *window, w *write) Finding {
	var n [5]int
	f := Finding{BadOffset: -1}
	for _, p := range w.live {
		st := state(r, p)
		n[st]++
		if st != pOK {
			f.BadBytes += p.n
			if f.BadOffset < 0 {
				f.BadOffset = p.off
			}
		}
	}
	f.Kind, f.Detail = classify(n, len(w.live))
	return f
}

func classify(n [5]int, all int) (kind, detail string) {
	switch {
	case n[pOK] == all:
		return "", ""
	case n[pOther] > 0:
		return Unexpected, "content never written there"
	case n[pOK] > 0:
		return Torn, tornDetail(n)
	case n[pStale] == all:
		return Stale, "an earlier write's content"
	case n[pShort] == all:
		return Lost, "file ends before it"
	case n[pZero] == all:
		return Lost, "zeros"
	}
	return Torn, tornDetail(n)
}

func tornDetail(n [5]int) string {
	d := "partly"
	for i, what := range []string{pOK: "new", pShort: "past the end", pZero: "zeros", pStale: "old"} {
		if n[i] > 0 {
			d += " " + what + ","
		}
	}
	return d[:len(d)-1]
}

func state(r *window, p *piece) int {
	if r.err != nil {
		return pOK // reported as the error
	}
	b := r.get(p.off, p.n)
	switch {
	case int64(len(b)) < p.n:
		return pShort
	case !p.known:
		return pOK
	}
	sum := r.sum(b)
	switch {
	case sum == p.sum:
		return pOK
	case isZero(b):
		return pZero
	}
	for _, o := range p.old {
		if o == sum {
			return pStale
		}
	}
	return pOther
}

func isZero(b []byte) bool {
	var z [Cell]byte
	return bytes.Equal(b, z[:len(b)])
}

// window reads a file forward through a buffer of 1 MiB.
type window struct {
	o   Object
	sum func([]byte) uint32 // the journal's Fingerprint
	buf []byte
	at  int64
	err error
}

// get returns the n bytes at off, fewer where the object ends.
func (r *window) get(off, n int64) []byte {
	size := r.o.Size()
	if off >= size {
		return nil
	}
	n = min(n, size-off)
	if off < r.at || off+n > r.at+int64(len(r.buf)) {
		r.fill(off, size)
	}
	if off+n > r.at+int64(len(r.buf)) {
		return r.buf[off-r.at:]
	}
	return r.buf[off-r.at : off-r.at+n]
}

func (r *window) fill(off, size int64) {
	start := off / Cell * Cell
	want := min(1<<20, size-start)
	if cap(r.buf) < 1<<20 {
		r.buf = make([]byte, 1<<20)
	}
	got, err := r.o.ReadAt(r.buf[:want], start)
	if err != nil && err != io.EOF {
		r.err = err
	}
	r.buf, r.at = r.buf[:got], start
}

// Dir is a Target of files below a directory.
type Dir string

// Open opens the file path below d; a path that would lead out of d (a
// journal made up by hand) is an error.
func (d Dir) Open(_ context.Context, path string) (Object, error) {
	if !filepath.IsLocal(path) {
		return nil, fmt.Errorf("journal path %q: not below %s", path, string(d))
	}
	f, err := os.Open(filepath.Join(string(d), path))
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	return &file{File: f, size: st.Size()}, nil
}

type file struct {
	*os.File
	size int64
}

func (f *file) Size() int64 { return f.size }
