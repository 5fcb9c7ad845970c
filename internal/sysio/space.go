package sysio

import (
	"math"
	"os"

	"golang.org/x/sys/unix"
)

// FreeBytes is the space an unprivileged user may still write in the
// file system that holds dir.
func FreeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, &os.PathError{Op: "statfs", Path: dir, Err: err}
	}
	return int64(st.Bavail) * int64(st.Bsize), nil
}

// Short reports whether the file system that holds dir has less than
// need bytes free (FreeBytes), and how much it has. A free space that
// cannot be read is not short: the writes will say what is wrong. Nor is
// a file system that states no size at all (no blocks: hugetlbfs without
// a size, some FUSE file systems), whose free 0 says nothing.
// Every command that writes what it is asked to make (bench, train,
// checkpoint, replay, vdbench) asks it before it writes anything.
func Short(dir string, need int64) (free int64, short bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Blocks == 0 {
		return 0, false
	}
	free = int64(st.Bavail) * int64(st.Bsize)
	return free, free < need
}

// FileBlock is the least space a file with data takes on common file
// systems (a page of tmpfs, a block of ext4 and xfs).
const FileBlock = 4096

// OnDisk is the space a file of size bytes takes, in whole FileBlocks.
func OnDisk(size int64) int64 {
	if size > math.MaxInt64-FileBlock {
		return math.MaxInt64
	}
	return (size + FileBlock - 1) / FileBlock * FileBlock
}

// MulCapped is a*b for non-negative a and b, at most math.MaxInt64: a
// need too large to count is still larger than any free space.
func MulCapped(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// AddCapped is a+b for non-negative a and b, at most math.MaxInt64.
func AddCapped(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
