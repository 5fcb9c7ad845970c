// Package journal records every write a benchmark made and the storage
// acknowledged, every fsync and every delete, in an append-only file, so
// that a later pass (Verify) can read it all back and name each block that
// was lost, left stale, torn, or holds what was never written.
//
// The file is a line "fsbench-journal 2" and then frames: a little-endian
// uint32 payload length, the CRC-32C of the payload, and the payload, which
// is records, as many as one worker gathered before it appended them (a
// frame is what one write(2) appends, so it is what a crash tears). A
// record is a type byte, the time of the event in nanoseconds since the
// journal began, the path relative to the run's root (left out when it is
// the frame's previous record's, see samePath), and the type's fields. A
// write holds one fingerprint for each piece of it cut at the absolute
// 4 KiB grid of its file (see Fingerprint), so that content is checked
// without the journal knowing how it was made. A write that continues the
// frame's previous write (Next: the same file, the same length, right
// after it) holds only its time after that write's and its fingerprints:
// a sequential writer's record is 7 bytes, not 17. Version 1, written
// before Next, is read as well. A frame that does
// not check (a tail torn by a crash) ends the journal; Read says how many
// bytes it left.
package journal

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
)

// Magic starts every journal file; magicV1 started those written before
// Next records, which Read still reads.
const (
	Magic   = "fsbench-journal 2\n"
	magicV1 = "fsbench-journal 1\n"
)

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
	// Next is a Write on the path of the frame's previous write, of its
	// length, at its end: the record holds the time after that write's
	// (uvarint) and the sums (always known), and is read as a Write.
	Next = 'X'
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
// --verify checks every byte it reads. Each word is mixed with its place
// on its own and the mixes are summed, so a CPU mixes them side by side
// (5 ns a piece, where one chain through them took 11).
func Fingerprint(b []byte) uint32 {
	if len(b) == Cell {
		return fingerprintCell((*[Cell]byte)(b))
	}
	h := seed(len(b))
	for s := 0; s < len(b); s += 512 {
		h += lane(word(b[s:]), s)
	}
	return finish(h + lane(word(b[max(0, len(b)-8):]), len(b)))
}

// fingerprintCell is Fingerprint of a whole Cell, unrolled.
func fingerprintCell(b *[Cell]byte) uint32 {
	le := binary.LittleEndian
	h := seed(Cell) + lane(le.Uint64(b[0:]), 0) + lane(le.Uint64(b[512:]), 512) +
		lane(le.Uint64(b[1024:]), 1024) + lane(le.Uint64(b[1536:]), 1536) +
		lane(le.Uint64(b[2048:]), 2048) + lane(le.Uint64(b[2560:]), 2560) +
		lane(le.Uint64(b[3072:]), 3072) + lane(le.Uint64(b[3584:]), 3584) +
		lane(le.Uint64(b[Cell-8:]), Cell)
	return finish(h)
}

const golden = 0x9e3779b97f4a7c15

// seed is where the fingerprint of a piece of n bytes starts.
func seed(n int) uint64 { return uint64(n) * golden }

// lane mixes the word sampled at byte s of a piece (Cell: its last word).
func lane(w uint64, s int) uint64 {
	x := (w ^ seed(s+1)) * 0xbf58476d1ce4e5b9
	return x ^ x>>29
}

func finish(h uint64) uint32 {
	h = (h ^ h>>31) * 0x94d049bb133111eb
	return uint32(h ^ h>>32)
}

// fingerprintV1 is Fingerprint in journals of version 1 (magicV1): the
// same words, mixed in one chain.
func fingerprintV1(b []byte) uint32 {
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
