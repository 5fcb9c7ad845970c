package origin

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MaxFiles bounds how many files PageCache opens: on a network file system
// each open is a round trip, and the look is taken outside the timed phase
// but inside the run.
const MaxFiles = 10000

// PageCache is how many bytes of files sit in the page cache, from
// cachestat(2) (Linux 6.5 and later), else mincore(2) over a read-only
// mapping. It returns nil and the reason when it cannot tell.
func PageCache(files []string) (*int64, string) {
	if len(files) > MaxFiles {
		return nil, fmt.Sprintf("%d files, more than the %d looked at", len(files), MaxFiles)
	}
	var total int64
	for _, f := range files {
		n, err := fileCached(f)
		if err != nil {
			return nil, err.Error()
		}
		total += n
	}
	return &total, ""
}

// cachestatMissing is set once cachestat(2) is found missing (ENOSYS).
var cachestatMissing atomic.Bool

func fileCached(path string) (int64, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, fmt.Errorf("page cache of %s: %w", path, err)
	}
	defer unix.Close(fd)
	if !cachestatMissing.Load() {
		var cs unix.Cachestat_t
		// A range of length 0 runs to the end of the file.
		err := unix.Cachestat(uint(fd), &unix.CachestatRange{}, &cs, 0)
		if err == nil {
			return int64(cs.Cache) * int64(os.Getpagesize()), nil
		}
		if !errors.Is(err, unix.ENOSYS) {
			return 0, fmt.Errorf("cachestat %s: %w", path, err)
		}
		cachestatMissing.Store(true)
	}
	return mincoreCached(fd, path)
}

// mincoreCached counts the resident pages of an open file through a
// read-only mapping, which reads nothing.
func mincoreCached(fd int, path string) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return 0, fmt.Errorf("stat %s: %w", path, err)
	}
	if st.Size == 0 {
		return 0, nil
	}
	m, err := unix.Mmap(fd, 0, int(st.Size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return 0, fmt.Errorf("mmap %s: %w", path, err)
	}
	defer unix.Munmap(m)
	page := os.Getpagesize()
	vec := make([]byte, (len(m)+page-1)/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&m[0])), uintptr(len(m)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		return 0, fmt.Errorf("mincore %s: %w", path, errno)
	}
	var n int64
	for _, v := range vec {
		if v&1 != 0 {
			n++
		}
	}
	return n * int64(page), nil
}
