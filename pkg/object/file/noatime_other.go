//go:build !linux

package file

// noAtime is 0 where the kernel has no O_NOATIME.
const noAtime = 0
