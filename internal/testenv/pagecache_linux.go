package testenv

import (
	"os"
	"sync"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// PinPageCache maps the files at paths into memory, their pages read in
// (from the device if they were not cached), so that their data is in the
// page cache and stays there: a write to /proc/sys/vm/drop_caches skips
// mapped pages, and on a machine shared with other test suites fsbench
// runs as root write it many times a second. A test that checks a read
// served by the page cache pins the files before that read begins. The
// mappings end with release, or with the test.
func PinPageCache(t testing.TB, paths ...string) (release func()) {
	t.Helper()
	var maps [][]byte
	var once sync.Once
	release = func() {
		once.Do(func() {
			for _, m := range maps {
				_ = unix.Munmap(m)
			}
		})
	}
	t.Cleanup(release)
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			t.Fatalf("pin %s in the page cache: %v", p, err)
		}
		st, err := f.Stat()
		if err == nil && st.Size() > 0 {
			var m []byte
			m, err = unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED|unix.MAP_POPULATE)
			if err == nil {
				maps = append(maps, m)
			}
		}
		f.Close()
		if err != nil {
			t.Fatalf("pin %s in the page cache: %v", p, err)
		}
	}
	return release
}

// DirtyPages counts the pages of the files at paths that are dirty in the
// page cache, not yet written back (cachestat(2)).
func DirtyPages(t testing.TB, paths ...string) int {
	t.Helper()
	n := 0
	for _, p := range paths {
		fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			t.Fatalf("dirty pages of %s: %v", p, err)
		}
		var cs unix.Cachestat_t
		err = unix.Cachestat(uint(fd), &unix.CachestatRange{}, &cs, 0)
		unix.Close(fd)
		if err != nil {
			t.Fatalf("cachestat %s: %v", p, err)
		}
		n += int(cs.Dirty)
	}
	return n
}

// ResidentPages counts the 4 KiB pages of memory that b spans (from the
// page it starts in) which are mapped in (mincore(2)).
func ResidentPages(t testing.TB, b []byte) int {
	t.Helper()
	addr := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	start := addr &^ 4095
	length := addr + uintptr(len(b)) - start
	vec := make([]byte, (length+4095)/4096)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, start, length, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatalf("mincore: %v", errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}
