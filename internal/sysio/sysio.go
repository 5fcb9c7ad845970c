// Package sysio wraps the system calls fsbench needs to measure storage
// honestly: aligned buffers and O_DIRECT, dropping the kernel's caches,
// resource usage of the process, and the mount table.
//
// It imports no package of fsbench's and knows nothing of benchmarks: each
// function is one system-level step and its error.
package sysio

import (
	"errors"
	"fmt"
)

// DefaultAlign is the direct-I/O alignment assumed when the kernel does not
// report one.
const DefaultAlign = 4096

// HugePage is the size and alignment of a transparent huge page on the
// platforms fsbench runs on (x86-64, arm64 with 4 KiB pages); see
// AdviseHuge.
const HugePage = 2 << 20

// ErrDirectUnsupported is returned when a file system refuses O_DIRECT.
var ErrDirectUnsupported = errors.New("file system does not support O_DIRECT")

// AlignedBuffer returns a zeroed buffer of size bytes whose first byte sits
// on an align boundary (align must be a power of two).
func AlignedBuffer(size, align int) []byte {
	if align <= 1 {
		return make([]byte, size)
	}
	raw := make([]byte, size+align)
	off := 0
	if rem := int(addrOf(raw) & uintptr(align-1)); rem != 0 {
		off = align - rem
	}
	return raw[off : off+size : off+size]
}

// Touch writes a zero into every 4 KiB page that b spans, so that the
// kernel maps them now and not at the first read into b. A buffer fresh from the
// operating system is mapped a page at a time as it is first written,
// and a read's copy into it then takes a page fault for each page,
// inside whatever is being timed: io500's ior-easy-write set up a 2 MiB
// buffer its stream left untouched, and ior-easy-read, the first to read
// into it, took its 512 faults.
func Touch(b []byte) {
	for i := 0; i < len(b); i += 4096 {
		b[i] = 0
	}
	if len(b) > 0 {
		b[len(b)-1] = 0 // the last page, when b does not start on one
	}
}

// HugeBuffer returns a zeroed buffer of size bytes that starts on a huge
// page boundary and is advised for huge pages to the end of its last huge
// page (AdviseHuge), so that no part of it is left on small pages.
func HugeBuffer(size int) []byte {
	buf := AlignedBuffer((size+HugePage-1)&^(HugePage-1), HugePage)
	AdviseHuge(buf)
	return buf[:size] // its capacity reaches the end of the last huge page
}

// HugeArena hands out I/O buffers that all sit in transparent huge pages:
// it carves them from HugeBuffer chunks, so buffers smaller than a huge
// page share one instead of each rounding up to its own. O_DIRECT moves
// data straight between the device and these pages; on the virtual disk
// benchmarks/records/fio.md describes, 1 MiB direct reads into huge pages ran 1.5
// times as fast as into small ones, and direct writes 5% faster. The cost
// is at most one partly used huge page per chunk. Not safe for concurrent
// use.
type HugeArena struct{ free []byte }

// Buffer returns a zeroed buffer of size bytes whose first byte sits on an
// align boundary, and at least on a 4 KiB one.
func (a *HugeArena) Buffer(size, align int) []byte {
	align = max(align, 4096)
	if align > HugePage {
		return AlignedBuffer(size, align)
	}
	skip := int(-addrOf(a.free) & uintptr(align-1))
	if len(a.free) < skip+size {
		chunk := HugeBuffer(size)
		chunk = chunk[:cap(chunk)]
		if len(chunk)-size < len(a.free) {
			// The old chunk has more left for later buffers.
			return chunk[:size:size]
		}
		a.free, skip = chunk, 0
	}
	buf := a.free[skip : skip+size : skip+size]
	a.free = a.free[skip+size:]
	return buf
}

// Alignment is what O_DIRECT requires of buffers and offsets.
type Alignment struct {
	Mem    int    // buffer address alignment
	Offset int    // file offset and length alignment
	Source string // "statx" or "default"
}

// CheckAligned returns an error naming the first of sizes (block size, file
// sizes) that is not a multiple of the offset alignment.
func (a Alignment) CheckAligned(names []string, sizes []int64) error {
	for i, s := range sizes {
		if s%int64(a.Offset) != 0 {
			return fmt.Errorf("%s %d is not a multiple of the direct I/O alignment %d (from %s)", names[i], s, a.Offset, a.Source)
		}
	}
	return nil
}

// Usage is the CPU time and peak memory of this process so far.
type Usage struct {
	UserSec, SysSec float64
	MaxRSSBytes     int64
}
