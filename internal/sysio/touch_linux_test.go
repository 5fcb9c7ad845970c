package sysio

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestTouch: the pages of a fresh mapping are not in memory until Touch
// maps every page a buffer spans, the last partial page too, whether the
// buffer starts on a page or inside one; nothing beyond it.
func TestTouch(t *testing.T) {
	for _, c := range []struct{ from, to, pages int }{{0, 63<<12 + 100, 64}, {100, 4196, 2}, {4000, 4000 + 3<<12, 4}} {
		region, err := unix.Mmap(-1, 0, 64<<12, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
		if err != nil {
			t.Fatal(err)
		}
		if n := testenv.ResidentPages(t, region); n != 0 {
			t.Fatalf("a fresh mapping has %d pages in memory", n)
		}
		Touch(region[c.from:c.to])
		if n := testenv.ResidentPages(t, region); n != c.pages {
			t.Errorf("after Touch of bytes %d to %d, %d pages are in memory, want %d", c.from, c.to, n, c.pages)
		}
		unix.Munmap(region)
	}
}
