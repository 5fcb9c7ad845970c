package sysio

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestTouch: the pages of a fresh mapping are not in memory until Touch
// maps every one of them, the last partial page too.
func TestTouch(t *testing.T) {
	region, err := unix.Mmap(-1, 0, 64<<12, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(region)
	b := region[:63<<12+100]
	if n := testenv.ResidentPages(t, b); n != 0 {
		t.Fatalf("a fresh mapping has %d pages in memory", n)
	}
	Touch(b)
	if n := testenv.ResidentPages(t, b); n != 64 {
		t.Errorf("after Touch %d of 64 pages are in memory", n)
	}
}
