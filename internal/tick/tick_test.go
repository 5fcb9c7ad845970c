package tick

import (
	"sync/atomic"
	"testing"
	"time"
)

// Every stops when f returns false, after exactly the calls f allowed.
func TestEveryStopsWhenFSaysSo(t *testing.T) {
	var n int
	Every(time.Millisecond, nil, func() bool {
		n++
		return n < 3
	})
	if n != 3 {
		t.Fatalf("f ran %d times, want 3", n)
	}
}

// Every returns once stop is closed.
func TestEveryStopsWhenStopCloses(t *testing.T) {
	stop := make(chan struct{})
	var calls atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		Every(time.Millisecond, stop, func() bool {
			if calls.Add(1) == 2 {
				close(stop)
			}
			return true
		})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Every did not return after stop was closed")
	}
	if n := calls.Load(); n < 2 {
		t.Fatalf("f ran %d times before stop, want at least 2", n)
	}
}

// A stop closed before the first period: f never runs.
func TestEveryClosedStop(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	Every(time.Hour, stop, func() bool {
		t.Error("f ran")
		return false
	})
}

// A Sleeper wakes when its time is up, again and again on one timer, and
// at once when cancelled, even after a sleep that was cut short.
func TestSleeper(t *testing.T) {
	var s Sleeper
	never := make(chan struct{})
	for range 3 {
		if !s.Sleep(time.Millisecond, never) {
			t.Fatal("a sleep that was not cancelled returned false")
		}
	}
	cancelled := make(chan struct{})
	close(cancelled)
	if s.Sleep(time.Hour, cancelled) {
		t.Fatal("a cancelled sleep returned true")
	}
	// The stopped timer is reused: the next sleep waits its own time, not
	// the hour left of the last one.
	if !s.Sleep(time.Millisecond, never) {
		t.Fatal("a sleep after a cancelled one returned false")
	}
	first := s.t
	s.Sleep(time.Millisecond, never)
	if s.t != first {
		t.Error("a new timer for each sleep")
	}
}
