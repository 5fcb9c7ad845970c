package replay

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// vmFlags are the flags /proc/self/smaps gives the mapping that holds
// address a.
func vmFlags(t *testing.T, a uintptr) string {
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
		if lo, hi, ok := strings.Cut(strings.Fields(line)[0], "-"); ok && !strings.HasSuffix(line, ":") {
			l, err1 := strconv.ParseUint(lo, 16, 64)
			h, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				in = uint64(a) >= l && uint64(a) < h
				continue
			}
		}
		if flags, ok := strings.CutPrefix(line, "VmFlags:"); ok && in {
			return flags
		}
	}
	t.Fatalf("no mapping holds %#x", a)
	return ""
}

// TestHugePages: a slice of several huge pages is advised to be backed
// by them ("hg" in its mapping's flags), a smaller one is not, and one
// that holds no whole huge page is left alone without failing.
func TestHugePages(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages:", err)
	}
	small := make([]byte, hugePage/2)
	hugePages(small)
	if f := vmFlags(t, uintptr(unsafe.Pointer(&small[0]))); strings.Contains(f, " hg") {
		t.Errorf("a slice of half a huge page was advised: %s", f)
	}
	big := make([]Op, 4*hugePage/int(unsafe.Sizeof(Op{})))
	hugePages(big)
	mid := uintptr(unsafe.Pointer(&big[len(big)/2]))
	if f := vmFlags(t, mid); !strings.Contains(f, " hg") {
		t.Errorf("the middle of a slice of four huge pages was not advised: %s", f)
	}
	// Over one huge page long but starting past a boundary: no whole
	// huge page in it.
	odd := make([]byte, 3*hugePage)
	p := uintptr(unsafe.Pointer(&odd[0]))
	skip := int((p+hugePage-1)&^(hugePage-1)-p) + 4096
	hugePages(odd[skip : skip+hugePage+1])
}
