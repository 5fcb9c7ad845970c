package replay

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// grow is s with room for more: when the log is read while it is
// parsed, as many again as its share of the log read so far projects for
// the rest (an eighth more, so that it is seldom copied twice), the
// memory past them untouched until used; at most sixteen times its length
// more, so that what a log does only at its start (a first listing of a
// tree) is not projected over the whole log. It serves a stream's
// operations and the builder's other long slices: append's own growth, a
// quarter at a time past 256, would copy them many times over, each copy
// in memory touched for the first time.
func grow[T any](b *builder, s []T) []T {
	c := len(s)
	more := c/4 + 256
	if b.read > 0 && b.size > b.read {
		est := int(int64(c) * (b.size - b.read) / b.read)
		more = max(more, min(est+est/8, 16*c))
	}
	grown := make([]T, c, c+more)
	hugePages(grown[:cap(grown)])
	copy(grown, s)
	return grown
}

// hugePage is the size of the system's huge pages on x86-64 and arm64
// with 4 KiB pages.
const hugePage = 2 << 20

// hugePages asks the system to back s, a new slice not yet touched, with
// huge pages where they fit in it whole. A million-line log's trace
// takes some hundred megabytes, every page of which faults once when the
// builder first writes it: a fault for each 2 MiB rather than each 4 KiB
// took a million-line strace log's load from 282 to 215 ns a line
// (docs/replay.md). Where transparent huge pages are off, nothing
// changes.
func hugePages[T any](s []T) {
	var z T
	n := uintptr(len(s)) * unsafe.Sizeof(z)
	if n < hugePage {
		return
	}
	start := unsafe.Pointer(unsafe.SliceData(s))
	p := uintptr(start)
	lo := (p+hugePage-1)&^(hugePage-1) - p
	hi := (p+n)&^(hugePage-1) - p
	if hi <= lo {
		return
	}
	_ = unix.Madvise(unsafe.Slice((*byte)(unsafe.Add(start, lo)), hi-lo), unix.MADV_HUGEPAGE)
}

// push appends v to s, grown by grow when full.
func push[T any](b *builder, s []T, v T) []T {
	if len(s) == cap(s) {
		s = grow(b, s)
	}
	return append(s, v)
}
