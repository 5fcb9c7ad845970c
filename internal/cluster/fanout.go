package cluster

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
)

// parallel is how many requests a coordinator has in flight at once to
// its agents for one step of a run (preflight, prepare, a release, the
// pings, cancel, clean-up). Thousands of requests let loose at once, each
// on a connection of its own, starved one another on a small machine
// until some went unanswered for the client's whole timeout.
const parallel = 64

// each runs fn on every host, parallel at a time, and returns the
// failures, each named by its host (a *HostError), several grouped by
// cause (a *HostsError).
func (c *Coordinator) each(hosts []*host, fn func(h *host) error) error {
	var g errgroup.Group
	g.SetLimit(parallel)
	var mu sync.Mutex
	var errs []*HostError
	for _, h := range hosts {
		g.Go(func() error {
			if err := fn(h); err != nil {
				mu.Lock()
				errs = append(errs, &HostError{h.addr, err})
				mu.Unlock()
			}
			return nil
		})
	}
	_ = g.Wait()
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errs[0]
	}
	pos := make(map[string]int, len(hosts))
	for _, h := range hosts {
		pos[h.addr] = h.index
	}
	slices.SortFunc(errs, func(a, b *HostError) int { return cmp.Compare(pos[a.Host], pos[b.Host]) })
	return &HostsError{Errs: errs, c: c}
}

// eachHost calls f for every host, parallel at a time, each call with
// its own timeout, and waits for them all.
func eachHost(hosts []*host, timeout time.Duration, f func(ctx context.Context, h *host)) {
	var wg sync.WaitGroup
	slots := make(chan struct{}, parallel)
	for _, h := range hosts {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeoutCause(context.Background(), timeout, fmt.Errorf("no answer within %v", timeout))
			defer cancel()
			f(ctx, h)
		}()
	}
	wg.Wait()
}
