package sysio

import (
	"os"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/testenv"
)

func TestAdviseHuge(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		testenv.Unavailable(t, "this kernel has no transparent huge pages")
	}
	// Fresh mappings, not the Go heap: the heap reuses memory advised
	// before, by an earlier run of this test too.
	region, err := unix.Mmap(-1, 0, 8<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(region)
	at := toHuge(region)
	buf := region[at : at+5<<20]
	AdviseHuge(buf)
	for _, c := range []struct {
		off  int
		huge bool
	}{{0, true}, {4<<20 - 1, true}, {4 << 20, false}, {5<<20 - 1, false}} {
		if got := advised(t, buf[c.off:]); got != c.huge {
			t.Errorf("byte %d of a 5 MiB buffer on a huge page boundary: advised %v, want %v", c.off, got, c.huge)
		}
	}

	// A buffer holding no whole huge page is left as it is.
	small, err := unix.Mmap(-1, 0, 4<<20, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(small)
	at = toHuge(small)
	AdviseHuge(small[at+1 : at+HugePage])
	if advised(t, small[at+1:]) {
		t.Error("a buffer smaller than a huge page was advised")
	}
}

// TestHugeBuffer: a buffer that ends part way into a huge page is advised
// to its very last byte, not only over the whole huge pages inside it, and
// starts on a huge page boundary. (The buffer comes from the Go heap, which
// nothing else in this package's tests advises.)
func TestHugeBuffer(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		testenv.Unavailable(t, "this kernel has no transparent huge pages")
	}
	size := 4<<20 + 1<<20 + 1
	buf := HugeBuffer(size)
	if len(buf) != size || addrOf(buf)%HugePage != 0 {
		t.Fatalf("HugeBuffer(%d): %d bytes at %#x, want %d on a %d boundary", size, len(buf), addrOf(buf), size, HugePage)
	}
	for _, off := range []int{0, 4 << 20, size - 1} {
		if !advised(t, buf[off:]) {
			t.Errorf("byte %d of a %d byte HugeBuffer is not advised for huge pages", off, size)
		}
	}
}

// TestHugeArena: buffers smaller than a huge page share one, each aligned
// and apart from the others; a buffer too big for what is left gets a chunk
// of its own, and the larger remainder is kept for the buffers after it.
func TestHugeArena(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		testenv.Unavailable(t, "this kernel has no transparent huge pages")
	}
	var a HugeArena
	const mib = 1 << 20
	first := a.Buffer(mib, 512)
	tiny := a.Buffer(100, 1)
	second := a.Buffer(mib-8192, 1)
	own := a.Buffer(2*mib, 4096) // 2 MiB: its own chunk, nothing left there
	after := a.Buffer(4096, 4096)
	stream := a.Buffer(5*mib+1, 4096) // a chunk of 6 MiB, most of 1 MiB left
	tail := a.Buffer(mib/2, 4096)
	bufs := []struct {
		name string
		b    []byte
		size int
	}{{"first", first, mib}, {"tiny", tiny, 100}, {"second", second, mib - 8192}, {"own", own, 2 * mib},
		{"after", after, 4096}, {"stream", stream, 5*mib + 1}, {"tail", tail, mib / 2}}
	for i, c := range bufs {
		if len(c.b) != c.size || cap(c.b) != c.size || addrOf(c.b)%4096 != 0 {
			t.Fatalf("%s: %d bytes (cap %d) at %#x, want %d on a 4 KiB boundary", c.name, len(c.b), cap(c.b), addrOf(c.b), c.size)
		}
		for _, off := range []int{0, c.size - 1} {
			if c.b[off] != 0 || !advised(t, c.b[off:]) {
				t.Errorf("%s: byte %d is %d, advised %v; want zero and in huge pages", c.name, off, c.b[off], advised(t, c.b[off:]))
			}
		}
		for _, o := range bufs[:i] {
			lo, hi := addrOf(c.b), addrOf(c.b)+uintptr(c.size)
			if olo := addrOf(o.b); lo < olo+uintptr(o.size) && olo < hi {
				t.Errorf("%s overlaps %s", c.name, o.name)
			}
		}
	}
	next := func(b []byte) uintptr { return (addrOf(b) + uintptr(len(b)) + 4095) &^ 4095 }
	for _, c := range []struct {
		name       string
		prev, this []byte
	}{{"tiny after first", first, tiny}, {"second after tiny", tiny, second}, {"after after second", second, after}, {"tail after stream", stream, tail}} {
		if addrOf(c.this) != next(c.prev) {
			t.Errorf("%s: at %#x, want %#x, the next 4 KiB of the same chunk", c.name, addrOf(c.this), next(c.prev))
		}
	}
	if addrOf(own)%HugePage != 0 {
		t.Errorf("a 2 MiB buffer at %#x, not on its own huge page", addrOf(own))
	}
	if big := a.Buffer(4096, 4*mib); addrOf(big)%(4*mib) != 0 {
		t.Errorf("a buffer aligned to 4 MiB at %#x", addrOf(big))
	}
}

// advised reports whether the mapping holding b's first byte is advised
// for huge pages (VmFlags "hg").
func advised(t *testing.T, b []byte) bool {
	return slices.Contains(testenv.VMFlags(t, addrOf(b)), "hg")
}

// toHuge is the offset of b's first huge page boundary.
func toHuge(b []byte) int { return int((HugePage - addrOf(b)%HugePage) % HugePage) }
