package journal

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
)

// Journal is what a journal file holds.
type Journal struct {
	Header  Record
	Records []Record // in the order of their times
	// Storage is the storage type of a journal of objects (see Store);
	// "" for one of files.
	Storage string
	// Ignored is the bytes at the end that did not make whole records
	// (a tail torn when the writer stopped), which Read leaves out.
	Ignored int64
	// v1 marks a journal of version 1, whose sums are fingerprintV1's.
	v1 bool
}

// sum is the fingerprint of a piece as j's writer made it.
func (j *Journal) sum(b []byte) uint32 {
	if j.v1 {
		return fingerprintV1(b)
	}
	return Fingerprint(b)
}

// Objects tells whether j records objects of a store rather than files.
func (j *Journal) Objects() bool { return j.Storage != "" }

// ReadFile reads the journal at path.
func ReadFile(path string) (*Journal, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	j, err := Read(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return j, nil
}

// Read reads a journal: its header, then records up to the first frame
// that does not check.
func Read(r io.Reader) (*Journal, error) {
	m := make([]byte, len(Magic))
	if _, err := io.ReadFull(r, m); err != nil || (string(m) != Magic && string(m) != magicV1) {
		return nil, ErrNotJournal
	}
	j := &Journal{v1: string(m) == magicV1}
	for {
		recs, n, err := next(r)
		if err == io.EOF {
			break
		}
		if err != nil {
			j.Ignored = n + drain(r)
			break
		}
		j.Records = append(j.Records, recs...)
	}
	if len(j.Records) == 0 || j.Records[0].Type != Header {
		return nil, fmt.Errorf("%w: no header", ErrNotJournal)
	}
	j.Header, j.Records = j.Records[0], j.Records[1:]
	if len(j.Records) > 0 && j.Records[0].Type == Store {
		j.Storage, j.Records = j.Records[0].Path, j.Records[1:]
	}
	sort.SliceStable(j.Records, func(a, b int) bool { return j.Records[a].T < j.Records[b].T })
	return j, nil
}

func drain(r io.Reader) int64 {
	n, _ := io.Copy(io.Discard, r)
	return n
}

var errTorn = errors.New("torn frame")

// next reads one frame's records; on a frame that does not check it
// returns errTorn and the bytes it consumed.
func next(r io.Reader) ([]Record, int64, error) {
	var h [frameHead]byte
	n, err := io.ReadFull(r, h[:])
	if err == io.EOF {
		return nil, 0, io.EOF
	}
	if err != nil {
		return nil, int64(n), errTorn
	}
	size := binary.LittleEndian.Uint32(h[:])
	if size == 0 || size > maxFrame {
		return nil, frameHead, errTorn
	}
	p := make([]byte, size)
	m, err := io.ReadFull(r, p)
	if err != nil || frameSum(p) != binary.LittleEndian.Uint32(h[4:]) {
		return nil, frameHead + int64(m), errTorn
	}
	var recs []Record
	for d := (&decoder{p: p}); len(d.p) > 0; {
		rec, ok := d.record()
		if !ok {
			return nil, frameHead + int64(m), errTorn
		}
		recs = append(recs, rec)
	}
	return recs, frameHead + int64(m), nil
}

// decoder reads the fields of one payload; a short or bad one sets bad.
type decoder struct {
	p    []byte
	bad  bool
	last string // the path of the frame's last record
	prev Record // the frame's last write, when no other record followed it (Next; Len 0: none)
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.p)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.p)
	if n <= 0 {
		d.bad = true
		return 0
	}
	d.p = d.p[n:]
	return v
}

func (d *decoder) str() string {
	n := d.uvarint()
	if d.bad || n > uint64(len(d.p)) {
		d.bad = true
		return ""
	}
	s := string(d.p[:n])
	d.p = d.p[n:]
	return s
}

// record decodes the next record.
func (d *decoder) record() (Record, bool) {
	if d.p[0] == Next {
		return d.next()
	}
	r := Record{Type: d.p[0] &^ samePath}
	same := d.p[0]&samePath != 0
	d.p = d.p[1:]
	r.T = int64(d.uvarint())
	if same {
		r.Path = d.last
	} else {
		r.Path = d.str()
	}
	d.last = r.Path
	switch r.Type {
	case Header:
		r.Root, r.Host, r.Seed, r.Start = d.str(), d.str(), d.uvarint(), d.varint()
	case Write:
		d.write(&r)
		if !d.bad {
			d.prev = r
		}
	case Rename:
		r.To = d.str()
	case Sync, SyncAll, Close, Created, Delete, Store:
	default:
		return r, false
	}
	if r.Type != Write {
		d.prev = Record{}
	}
	return r, !d.bad && r.T >= 0
}

// next decodes a Next record: a Write after the frame's last one.
func (d *decoder) next() (Record, bool) {
	d.p = d.p[1:]
	prev := d.prev
	if prev.Len == 0 {
		return Record{}, false
	}
	r := Record{Type: Write, Path: prev.Path, Off: prev.Off + prev.Len, Len: prev.Len}
	dt := d.uvarint()
	r.T = prev.T + int64(dt)
	d.sums(&r, uint64(countPieces(r.Off, r.Len)))
	if d.bad || dt > maxOffset || r.Off > maxOffset || r.T < 0 {
		return r, false
	}
	d.prev = r
	return r, true
}

func (d *decoder) write(r *Record) {
	r.Off, r.Len = int64(d.uvarint()), int64(d.uvarint())
	n := d.uvarint()
	if d.bad || r.Off < 0 || r.Off > maxOffset || r.Len <= 0 || r.Len > maxWrite ||
		(n != 0 && n != uint64(countPieces(r.Off, r.Len))) {
		d.bad = true
		return
	}
	d.sums(r, n)
}

// sums reads n sums of a write.
func (d *decoder) sums(r *Record, n uint64) {
	if d.bad || n*4 > uint64(len(d.p)) {
		d.bad = true
		return
	}
	r.Sums = make([]uint32, n)
	for i := range r.Sums {
		r.Sums[i] = binary.LittleEndian.Uint32(d.p[4*i:])
	}
	d.p = d.p[4*n:]
}
