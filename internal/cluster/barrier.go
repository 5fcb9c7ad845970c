package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fsbench/fsbench/internal/units"
)

// released is how the release of a barrier went: how long it took to
// reach every host, and the hosts it did not reach in time.
type released struct {
	seq    int
	phase  string
	took   time.Duration
	missed []*host
	err    error // the last missed host's
}

// releaseAttempt bounds one request of a release; a host that does not
// answer is asked again until releaseWithin has passed.
const releaseAttempt = 5 * time.Second

// releaseWithin is how long a host has to take a barrier's release before
// it is lost: thrice the longest silence that loses a host.
func (c *Coordinator) releaseWithin() time.Duration { return 3 * max(c.longest, c.LostAfter) }

// releaseIfAll releases barrier seq when every host has reached it. All
// hosts are to start at one moment: an agent on this kernel is told the
// moment, every agent to wait until then from its request's arrival, less
// half its round trip, so neither the order of the requests nor another
// machine's clock matters. The requests go out while drive goes on
// reading the hosts' events; drive hears how they went (released).
func (c *Coordinator) releaseIfAll(hosts []*host, seq int) {
	if c.b.arrived[seq] < len(hosts) {
		return
	}
	delete(c.b.arrived, seq)
	var slowest time.Duration
	for _, h := range hosts {
		slowest = max(slowest, time.Duration(h.rtt.Load()))
	}
	// Room for the requests to reach every host: as long as the last
	// release took to (the job's sending, for the first), and more; the
	// end of a phase starts nothing.
	room := c.b.send
	if room == 0 {
		room = min(c.sendJob, time.Duration(len(hosts))*2*time.Millisecond)
	}
	at := time.Now().Add(20*time.Millisecond + 2*slowest + room*5/4)
	p := hosts[0].phase
	if IsEnd(p) {
		at = time.Now()
	}
	if prev := hosts[0].prog; prev != nil && c.Progress != nil {
		c.Progress(sum(hosts, prev.Phase), true)
	}
	if p != FinishPhase && !IsEnd(p) {
		c.Logf("%s: starting on %s", p, units.Count(len(hosts), "host"))
		c.current = p
		if c.Progress != nil {
			c.Progress(Progress{Phase: p}, false) // its start; the unit comes with the hosts' counts
		}
	}
	go c.sendRelease(hosts, seq, p, at)
}

// sendRelease posts barrier seq's release to every host, asking again a
// host that does not answer, and tells drive how it went.
func (c *Coordinator) sendRelease(hosts []*host, seq int, phase string, at time.Time) {
	t0 := time.Now()
	deadline := t0.Add(c.releaseWithin())
	out := &released{seq: seq, phase: phase}
	var mu sync.Mutex
	_ = c.each(hosts, func(h *host) error {
		if err := c.releaseHost(h, seq, at, deadline); err != nil {
			mu.Lock()
			out.missed, out.err = append(out.missed, h), err
			mu.Unlock()
		}
		return nil
	})
	out.took = time.Since(t0)
	select {
	case c.b.events <- hostEvent{release: out}:
	case <-c.b.stop:
	}
}

// releaseHost posts a release to one host until it takes it or deadline
// passes. A release taken twice is harmless: the agent skips a release of
// a barrier it has passed.
func (c *Coordinator) releaseHost(h *host, seq int, at, deadline time.Time) error {
	for {
		g := Release{Seq: seq, Delay: max(time.Until(at)-time.Duration(h.rtt.Load())/2, 0)}
		if h.sameClock {
			g.At = at
		}
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		ctx, cancel2 := context.WithTimeout(ctx, releaseAttempt)
		err := c.call(ctx, h, "POST", "/v1/jobs/"+h.id+"/go", g, nil)
		cancel2()
		cancel()
		var answered *answer
		if err == nil || (errors.As(err, &answered) && !answered.busy()) || !time.Now().Add(100*time.Millisecond).Before(deadline) {
			return err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// released takes how a release went: the hosts it did not reach are lost,
// named together.
func (c *Coordinator) released(r *released) error {
	c.b.send = r.took
	var missed []string
	for _, h := range r.missed {
		if !h.done { // else it ended meanwhile, and its own event told why
			c.lose(h, fmt.Sprintf("did not take the release of %s within %v: %v", r.phase, c.releaseWithin(), r.err))
			missed = append(missed, h.addr)
		}
	}
	if len(missed) == 0 {
		return nil
	}
	return &HostError{missed[0], fmt.Errorf("%w: did not take the release of %s within %v (%s in all)", ErrLost, r.phase,
		c.releaseWithin(), units.Count(len(missed), "host"))}
}
