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

// TestMakeHuge: a slice of a few huge pages starts at most an element
// past a huge page's boundary and is advised to be backed by them ("hg"
// in its mapping's flags); a smaller one is an ordinary slice, not
// advised.
func TestMakeHuge(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("this kernel has no transparent huge pages:", err)
	}
	small := makeHuge[byte](10, hugePage/2)
	if len(small) != 10 || cap(small) != hugePage/2 {
		t.Fatalf("len %d cap %d", len(small), cap(small))
	}
	if f := vmFlags(t, uintptr(unsafe.Pointer(&small[0]))); strings.Contains(f, " hg") {
		t.Errorf("a slice of half a huge page was advised: %s", f)
	}
	size := int(unsafe.Sizeof(Op{}))
	big := makeHuge[Op](3, 3*hugePage/size)
	if len(big) != 3 || cap(big) != 3*hugePage/size {
		t.Fatalf("len %d cap %d", len(big), cap(big))
	}
	p := uintptr(unsafe.Pointer(&big[0]))
	if past := p % hugePage; past >= uintptr(size) {
		t.Errorf("starts %d bytes past a huge page's boundary", past)
	}
	for _, at := range []int{0, cap(big) / 2, cap(big) - 1} {
		if f := vmFlags(t, uintptr(unsafe.Pointer(&big[:cap(big)][at]))); !strings.Contains(f, " hg") {
			t.Errorf("element %d of %d not advised: %s", at, cap(big), f)
		}
	}
	for i := range big[:cap(big)] { // the whole capacity is the slice's to use
		big[:cap(big)][i].Size = int64(i)
	}
}
