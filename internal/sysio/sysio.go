// Package sysio wraps the system calls fsbench needs to measure storage
// honestly: aligned buffers and O_DIRECT, dropping the kernel's caches,
// resource usage of the process, and the mount table.
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
