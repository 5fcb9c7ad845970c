package replay

import (
	"os"
	"slices"
	"testing"
	"unsafe"

	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/testenv"
)

// TestMakeHuge: a slice of a few huge pages starts at most an element
// past a huge page's boundary and is advised to be backed by them ("hg"
// in its mapping's flags); a smaller one is an ordinary slice. (Whether
// that one is advised says nothing: the heap reuses memory advised
// before.)
func TestMakeHuge(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		testenv.Unavailable(t, "this kernel has no transparent huge pages")
	}
	small := makeHuge[byte](10, sysio.HugePage/2)
	if len(small) != 10 || cap(small) != sysio.HugePage/2 {
		t.Fatalf("len %d cap %d", len(small), cap(small))
	}
	size := int(unsafe.Sizeof(Op{}))
	big := makeHuge[Op](3, 3*sysio.HugePage/size)
	if len(big) != 3 || cap(big) != 3*sysio.HugePage/size {
		t.Fatalf("len %d cap %d", len(big), cap(big))
	}
	p := uintptr(unsafe.Pointer(&big[0]))
	if past := p % sysio.HugePage; past >= uintptr(size) {
		t.Errorf("starts %d bytes past a huge page's boundary", past)
	}
	for _, at := range []int{0, cap(big) / 2, cap(big) - 1} {
		if f := testenv.VMFlags(t, uintptr(unsafe.Pointer(&big[:cap(big)][at]))); !slices.Contains(f, "hg") {
			t.Errorf("element %d of %d not advised: %s", at, cap(big), f)
		}
	}
	for i := range big[:cap(big)] { // the whole capacity is the slice's to use
		big[:cap(big)][i].Size = int64(i)
	}
}
