package cluster

import (
	"context"
	"time"
)

// finalStretch is the last part of a release's delay, which an agent
// waits by the kernel's clock, not Go's timers. A Go timer in a process
// that is otherwise idle fires up to a millisecond late or more (the
// runtime's poller waits in whole milliseconds), each host by its own
// amount, and a phase's span runs from the first host's start to the
// last one's end.
const finalStretch = 3 * time.Millisecond

// waitFor waits d, or until ctx ends (its error then): on Go's timer up to
// the final stretch, then on the kernel's clock (waitUntil), which ends
// the wait within the kernel's timer slack, tens of microseconds.
func waitFor(ctx context.Context, d time.Duration) error {
	end := deadline(d)
	if coarse := d - finalStretch; coarse > 0 {
		t := time.NewTimer(coarse)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	waitUntil(end)
	return nil
}
