package replay

import (
	"errors"
	"os"
	"runtime/debug"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// mapLog maps a plain log read-only, its pages filled from the page cache
// at once: the log is parsed where the page cache holds it, rather than
// copied into a buffer of its size that is zeroed, faulted in page by
// page and collected after. ok is false when f cannot be mapped (a
// compressed log, not a regular file, an empty one, or a refusal): the
// caller then reads it.
func mapLog(f *os.File) (data []byte, ok bool) {
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() <= 0 || int64(int(st.Size())) != st.Size() {
		return nil, false
	}
	var magic [2]byte
	if n, _ := f.ReadAt(magic[:], 0); n == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		return nil, false // gzip
	}
	data, err = unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_POPULATE)
	if err != nil {
		return nil, false
	}
	return data, true
}

// errChanged is the error of a mapped log cut short while it was read.
var errChanged = errors.New("truncated while it was read")

// loadMapped reads part of parts of a log, mapped by mapLog or read. A
// mapped log cut short by another program while it is read makes the
// pages past its new end fault: that is an error, not a crash. What the trace keeps of the
// log's text is copied (TestLoadKeepsNoText), so the caller unmaps data
// once this returns.
func loadMapped(data []byte, part, parts int, read *atomic.Int64) (t *Trace, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			t, err = nil, errChanged
		}
	}()
	return loadWatched(data, part, parts, read)
}

// reraise runs f, returning what it panicked with instead of panicking,
// with faults on memory made panics (see loadMapped): the goroutines that
// read a log's pieces hand their panic to the one that waits for them.
func reraise(f func()) (p any) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { p = recover() }()
	f()
	return nil
}
