package replay

import (
	"unsafe"

	"github.com/fsbench/fsbench/internal/sysio"
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
	grown := makeHuge[T](c, c+more)
	copy(grown, s)
	return grown
}

// makeHuge is make([]T, n, capacity), backed by huge pages when it takes
// one or more. A million-line log's trace takes some hundred megabytes,
// every page of which faults once when the builder first writes it, on
// its one processor: a fault for each 2 MiB rather than each 4 KiB took a
// million-line strace log's load from 268 to 232 ns a line, and
// JuiceFS's from 244 to 201 (benchmarks/records/replay-cost.md). The slice starts at a huge page's boundary and its
// whole huge pages are advised (sysio.AdviseHuge), so that all of it can
// be: the allocation is up to two huge pages longer, memory that is never
// touched. Where transparent huge pages are off, nothing changes.
func makeHuge[T any](n, capacity int) []T {
	size := unsafe.Sizeof(*new(T))
	if size == 0 || uintptr(capacity)*size < sysio.HugePage {
		return make([]T, n, capacity)
	}
	// Room for a head before the first boundary and for the slice in
	// whole huge pages after it.
	whole := (uintptr(capacity)*size + sysio.HugePage - 1) &^ (sysio.HugePage - 1)
	raw := make([]T, (sysio.HugePage+whole+size-1)/size)
	start := unsafe.Pointer(unsafe.SliceData(raw))
	bytes := unsafe.Slice((*byte)(start), uintptr(len(raw))*size) // for the advice only
	lo := (uintptr(start)+sysio.HugePage-1)&^(sysio.HugePage-1) - uintptr(start)
	sysio.AdviseHuge(bytes[lo : lo+whole])
	head := int((lo + size - 1) / size) // the elements before the boundary
	return raw[head : head+n : head+capacity]
}

// push appends v to s, grown by grow when full.
func push[T any](b *builder, s []T, v T) []T {
	if len(s) == cap(s) {
		s = grow(b, s)
	}
	return append(s, v)
}
