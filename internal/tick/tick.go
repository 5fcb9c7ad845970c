// Package tick runs a function at a fixed period until told to stop: the
// loop behind progress bars, live snapshots and heartbeats; and sleeps on
// one reused timer (Sleeper) for loops that sleep once per operation.
//
// It imports no package of fsbench's and measures nothing.
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

// Sleeper sleeps on one timer, reused from one sleep to the next, so that
// a loop sleeping once per operation makes no garbage. The zero value is
// ready; a Sleeper serves one goroutine.
type Sleeper struct{ t *time.Timer }

// Sleep waits d, or until cancel is closed (then it returns false).
func (s *Sleeper) Sleep(d time.Duration, cancel <-chan struct{}) bool {
	if s.t == nil {
		s.t = time.NewTimer(d)
	} else {
		s.t.Reset(d)
	}
	select {
	case <-s.t.C:
		return true
	case <-cancel:
		s.t.Stop()
		return false
	}
}
