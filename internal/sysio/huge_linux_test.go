package sysio

import (
	"bufio"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/testenv"
)

// vmFlags returns the VmFlags of the mapping of this process that holds
// addr, from /proc/self/smaps.
func vmFlags(t *testing.T, addr uintptr) []string {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x ", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if rest, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return strings.Fields(rest)
		}
	}
	t.Fatalf("no mapping holds %#x (%v)", addr, sc.Err())
	return nil
}

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

// advised reports whether the mapping holding b's first byte is advised
// for huge pages (VmFlags "hg").
func advised(t *testing.T, b []byte) bool {
	return slices.Contains(vmFlags(t, addrOf(b)), "hg")
}

// toHuge is the offset of b's first huge page boundary.
func toHuge(b []byte) int { return int((HugePage - addrOf(b)%HugePage) % HugePage) }
