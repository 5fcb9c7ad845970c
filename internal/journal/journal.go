// Package journal records every write a benchmark made and the storage
// acknowledged, every fsync and every delete, in an append-only file, so
// that a later pass (Verify) can read it all back and name each block that
// was lost, left stale, torn, or holds what was never written.
//
// The file is a line "fsbench-journal 1" and then frames: a little-endian
// uint32 payload length, the CRC-32C of the payload, and the payload, which
// is records, as many as one worker gathered before it appended them (a
// frame is what one write(2) appends, so it is what a crash tears). A
// record is a type byte, the time of the event in nanoseconds since the
// journal began, the path relative to the run's root (left out when it is
// the frame's previous record's, see samePath), and the type's fields. A write holds one fingerprint for each piece of it cut at the
// absolute 4 KiB grid of its file (see Fingerprint), so that content is
// checked without the journal knowing how it was made. A frame that does
// not check (a tail torn by a crash) ends the journal; Read says how many
// bytes it left.
package journal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// Magic starts every journal file.
const Magic = "fsbench-journal 1\n"

// Cell is the grid a write is cut at for its checksums.
const Cell = 4096

// Record types.
const (
	Header  = 'H' // Root, Seed, Host: the run's root and where it ran
	Write   = 'W' // Path, Off, Len, Sums: an acknowledged write
	Sync    = 'S' // Path: an fsync that returned; the file's writes before it are durable
	SyncAll = 'A' // Path: a syncfs that returned; every write before it is durable
	Close   = 'C' // Path: a close that returned
	Created = 'N' // Path: a file created (or truncated): what it held before is gone
	Delete  = 'D' // Path: an unlink that returned
	Rename  = 'R' // Path, To: a rename that returned
	// Store follows the header of a journal of objects: Path is the
	// storage type (s3, minio, ...) of the store the header's Root (its
	// URL, without credentials) names; paths are keys in it.
	Store    = 'O'
	maxFrame = 1 << 26
	// maxWrite and maxOffset bound a write record's length and offset, so
	// that a journal made up by hand cannot make Verify cut a write into
	// pieces without end.
	maxWrite  = 1 << 32
	maxOffset = 1 << 50
	// samePath, set in a record's type byte, stands for the path of the
	// frame's record before it, which the record then leaves out.
	samePath = 0x80
)

// ErrNotJournal marks a file that does not start as a journal.
var ErrNotJournal = errors.New("not an fsbench journal")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameSum is the checksum of a frame's payload.
func frameSum(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// Fingerprint is what the journal keeps of a piece of a write (at most
// Cell bytes): a hash of its length, of the first 8 bytes of each of its
// 512-byte sectors and of its last 8 bytes. Every failure the journal is
// for changes those words (a block lost, zeroed, left with earlier content
// or torn at a sector), and reading them costs the writer 9 loads per
// 4 KiB where a checksum of every byte would cost a pass over the data
// (about a fifth of a 4 KiB write to the page cache). A change inside a
// sector that leaves its first 8 bytes alone goes unseen: fsbench bench
// --verify checks every byte it reads.
func Fingerprint(b []byte) uint32 {
	h := uint64(len(b))*0x9e3779b97f4a7c15 + 1
	for s := 0; s < len(b); s += 512 {
		h = (h^word(b[s:]))*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
		h ^= h >> 29
	}
	h = (h^word(b[max(0, len(b)-8):]))*0xbf58476d1ce4e5b9 + 0x94d049bb133111eb
	return uint32(h ^ h>>32)
}

// word is the first 8 bytes of b, little-endian, or fewer when b is short.
func word(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.LittleEndian.Uint64(b)
	}
	var w uint64
	for i, c := range b {
		w |= uint64(c) << (8 * i)
	}
	return w
}

// Record is one event of a journal.
type Record struct {
	Type byte
	T    int64 // nanoseconds since the journal began
	Path string
	To   string // Rename: the new path
	Off  int64
	Len  int64
	Sums []uint32 // Write: one per piece (Pieces); none when the content was not known
	// Header only.
	Root, Host string
	Seed       uint64
	Start      int64 // Unix nanoseconds
}

// Pieces calls f for each piece of the range [off, off+n) cut at the
// absolute Cell grid: its offset and length.
func Pieces(off, n int64, f func(o, l int64)) {
	for end := off + n; off < end; {
		l := min(end, (off/Cell+1)*Cell) - off
		f(off, l)
		off += l
	}
}

// countPieces is how many pieces Pieces cuts [off, off+n) into.
func countPieces(off, n int64) int {
	if n <= 0 {
		return 0
	}
	return int((off+n-1)/Cell - off/Cell + 1)
}

// appendRecord appends r to b.
func appendRecord(b []byte, r *Record) []byte {
	b = append(b, r.Type)
	b = binary.AppendUvarint(b, uint64(max(r.T, 0)))
	b = appendString(b, r.Path)
	switch r.Type {
	case Header:
		b = appendString(b, r.Root)
		b = appendString(b, r.Host)
		b = binary.AppendUvarint(b, r.Seed)
		b = binary.AppendVarint(b, r.Start)
	case Write:
		b = binary.AppendUvarint(b, uint64(r.Off))
		b = binary.AppendUvarint(b, uint64(r.Len))
		b = binary.AppendUvarint(b, uint64(len(r.Sums)))
		for _, s := range r.Sums {
			b = binary.LittleEndian.AppendUint32(b, s)
		}
	case Rename:
		b = appendString(b, r.To)
	}
	return b
}

// frameHead is the room a frame's length and checksum take before its
// records.
const frameHead = 8

// seal fills in the head of the frame b, whose records follow its first
// frameHead bytes.
func seal(b []byte) []byte {
	p := b[frameHead:]
	binary.LittleEndian.PutUint32(b, uint32(len(p)))
	binary.LittleEndian.PutUint32(b[4:], frameSum(p))
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}
