package cluster

import (
	"time"

	"golang.org/x/sys/unix"
)

// deadline is the moment d from now on the monotonic clock.
func deadline(d time.Duration) unix.Timespec {
	var now unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
	return unix.NsecToTimespec(now.Nano() + int64(max(d, 0)))
}

// waitUntil sleeps the thread until the monotonic clock reaches end (at
// once when it has), again after a signal.
func waitUntil(end unix.Timespec) {
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &end, nil) == unix.EINTR {
	}
}
