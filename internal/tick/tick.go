// Package tick runs a function at a fixed period until told to stop: the
// loop behind progress bars, live snapshots and heartbeats.
package tick

import "time"

// Every calls f every d until stop is closed or f returns false. The first
// call is one period after Every starts.
func Every(d time.Duration, stop <-chan struct{}, f func() bool) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if !f() {
				return
			}
		}
	}
}
