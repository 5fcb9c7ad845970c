//go:build !linux

package cluster

import "time"

// deadline is the moment d from now.
func deadline(d time.Duration) time.Time { return time.Now().Add(d) }

// waitUntil sleeps until end, on Go's timer where the kernel's clock
// cannot be waited on directly.
func waitUntil(end time.Time) { time.Sleep(time.Until(end)) }
