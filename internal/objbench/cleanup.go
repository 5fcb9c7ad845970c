package objbench

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsbench/fsbench/internal/objstore"
	"github.com/fsbench/fsbench/pkg/object"
)

// cleanup deletes every key under the run's prefix, deepest first, and the
// prefix itself (a directory on file systems). It runs after Ctrl-C too,
// with a context of its own. After an interruption, a request the server
// had fully received may still create its object after we listed, so the
// prefix is listed again, after a pause, until it is empty. A store that
// stopped answering is waited for (Ctrl-C stops the wait), up to
// CleanupWait in all; what cannot be deleted is named in a warning. A
// request the store throttles is tried again after a pause, and with
// several endpoints only those that answer are used.
func (r *run) cleanup(parent context.Context, runErr error) {
	if r.o.Keep {
		r.warn("keeping the benchmark's objects under %s (--keep)", r.own.String())
		return
	}
	wait := r.o.CleanupWait
	if wait <= 0 {
		wait = 2 * time.Minute
	}
	ctx, cancel := objstore.WithLimit(context.WithoutCancel(parent), wait, "the clean-up's time limit")
	defer cancel()
	var down *DownError
	c := cleaner{r: r, ctx: ctx, parent: parent, again: parent.Err() != nil || errors.As(runErr, &down)}
	c.choose()
	left, err := c.run()
	if err != nil {
		left, err = c.recount(left, err)
	}
	if err == nil {
		err = c.retry(func() error { return c.own.Delete(ctx, "") })
	}
	if n := c.throttled.Load(); n > 0 {
		r.warn("clean up: the store throttled %d requests (503 SlowDown / 429); they were tried again after a pause", n)
	}
	if err == nil && r.x.versioned {
		err = r.purgeVersions(ctx)
	}
	err = objstore.Named(ctx, err)
	switch {
	case err != nil && left > 0:
		r.warn("clean up: %d objects could not be deleted (%v); left behind: %s", left, err, r.leftover())
		return
	case err != nil:
		r.warn("clean up: %v; left behind: %s", err, r.leftover())
		return
	}
	if r.o.Hooks.Removed != nil {
		r.o.Hooks.Removed()
	}
}

// cleaner is the state of one clean-up.
type cleaner struct {
	r           *run
	ctx, parent context.Context
	// again: list again after deleting, for objects that arrive late
	// (after an interruption, or while the store was away).
	again     bool
	announced bool // the wait for the store
	// own is the run's prefix in the store, through the endpoints that
	// answered when there are several.
	own       object.Storage
	down      string // the endpoints left out, as last warned of
	throttled atomic.Int64
}

// choose picks what the clean-up deletes through: with several endpoints,
// those that answer a listing; a dead or hung one would otherwise fail
// its share of every pass. When none answers, the store is away: all are
// kept, and the clean-up waits for them as for one endpoint. It reports
// whether it left out an endpoint it had not left out before.
func (c *cleaner) choose() bool {
	c.own = c.r.own
	eps := c.r.x.eps
	if eps == nil {
		return false
	}
	errs := eps.Probe(c.ctx, object.ListOptions{Prefix: c.r.prefix, Limit: 1}, timeoutOf(c.r.o.Object))
	keep := make([]bool, len(errs))
	var down []string
	for i, err := range errs {
		away, _ := unreachable(err)
		keep[i] = !away
		if away {
			down = append(down, err.Error())
		}
	}
	live := eps.Only(keep)
	if live == nil {
		return false
	}
	c.own = object.WithPrefix(live, c.r.prefix)
	msg := strings.Join(down, "; ")
	if msg == "" || msg == c.down {
		return false
	}
	c.r.warn("clean up: deleting through the endpoints that answer, without %s", msg)
	c.down = msg
	return true
}

// retry runs op again while the store asks to slow down (see
// objstore.RetryThrottled), counting the requests it throttled.
func (c *cleaner) retry(op func() error) error {
	return objstore.RetryThrottled(c.ctx, func() error {
		err := op()
		if errors.Is(err, object.ErrThrottled) {
			c.throttled.Add(1)
		}
		return err
	})
}

// recount lists what is left after a clean-up that ended in an error: a
// delete whose answer was lost may have removed its object all the same,
// so the failures alone would claim objects that are gone. With nothing
// left, the clean-up succeeded.
func (c *cleaner) recount(left int, err error) (int, error) {
	keys, lerr := c.list()
	switch {
	case lerr != nil:
		return left, err
	case len(keys) == 0:
		return 0, nil
	}
	return len(keys), err
}

// passes bounds the listings of a clean-up while objects keep appearing.
const passes = 5

// run deletes what is under the prefix and returns how many objects are
// left with the first error.
func (c *cleaner) run() (int, error) {
	for pass := 0; ; {
		keys, err := c.list()
		if err != nil {
			if c.wait(err) {
				continue
			}
			return 0, err
		}
		if len(keys) == 0 {
			return 0, nil
		}
		if pass == passes {
			return len(keys), errors.New("objects kept appearing")
		}
		pass++
		left, err := c.deleteAll(keys)
		if err != nil && !c.wait(err) {
			return left, err
		}
		if err == nil && !c.again {
			return 0, nil // no late arrivals: one pass is all
		}
		time.Sleep(time.Duration(pass) * 500 * time.Millisecond)
	}
}

// deleteAll deletes keys and returns how many it could not delete with
// the first error. Objects go first, as many at a time as the run has
// threads (one request each, as the run made them); then directories
// (keys ending in "/", which file stores list), deepest first, one at a
// time, since a directory goes only once it is empty.
func (c *cleaner) deleteAll(keys []string) (int, error) {
	var objs, dirs []string
	for _, k := range keys {
		if strings.HasSuffix(k, "/") {
			dirs = append(dirs, k)
		} else {
			objs = append(objs, k)
		}
	}
	left, first := c.deleteObjects(objs)
	if first != nil {
		return left + len(dirs), first
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := c.retry(func() error { return c.own.Delete(c.ctx, dirs[i]) }); err != nil {
			left++
			if first == nil {
				first = err
			}
		}
	}
	return left, first
}

// deleteObjects deletes keys on the run's threads. Once the store is
// found away (or the clean-up's time is up) no more keys are tried: the
// caller waits for the store and lists again.
func (c *cleaner) deleteObjects(keys []string) (int, error) {
	var next, failed atomic.Int64
	var mu sync.Mutex
	var first error
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range min(max(c.r.o.Threads, 1), len(keys)) {
		wg.Go(func() {
			for !stop.Load() {
				i := int(next.Add(1) - 1)
				if i >= len(keys) {
					return
				}
				err := c.retry(func() error { return c.own.Delete(c.ctx, keys[i]) })
				if err == nil {
					continue
				}
				failed.Add(1)
				mu.Lock()
				first = cmp.Or(first, err)
				mu.Unlock()
				if away, _ := unreachable(err); away || c.ctx.Err() != nil {
					stop.Store(true)
				}
			}
		})
	}
	wg.Wait()
	untried := len(keys) - min(int(next.Load()), len(keys))
	return int(failed.Load()) + untried, first
}

// wait reports whether err says the store is away and, if so, waits a
// moment for it to come back: false when the clean-up's time is up or the
// user interrupted the wait.
func (c *cleaner) wait(err error) bool {
	if away, _ := unreachable(err); !away || c.ctx.Err() != nil {
		return false
	}
	if c.choose() {
		return true // the others answer: go on through them at once
	}
	if !c.announced {
		deadline, _ := c.ctx.Deadline()
		c.r.warn("%s is not answering (%v); waiting up to %s for it, to delete what the run wrote",
			c.r.base.String(), err, time.Until(deadline).Round(time.Second))
	}
	c.announced, c.again = true, true
	interrupt := c.parent.Done()
	if c.parent.Err() != nil {
		interrupt = nil // interrupted already: a second Ctrl-C ends fsbench
	}
	select {
	case <-time.After(time.Second):
		c.choose() // an endpoint may have gone, or come back
		return true
	case <-interrupt:
	case <-c.ctx.Done():
	}
	return false
}

// list lists every key under the run's prefix.
func (c *cleaner) list() ([]string, error) {
	var keys []string
	opt := object.ListOptions{}
	for range maxObjects {
		var page *object.ListPage
		err := c.retry(func() (err error) {
			page, err = c.own.List(c.ctx, opt)
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, o := range page.Objects {
			keys = append(keys, o.Key)
		}
		if !page.Truncated {
			break
		}
		opt.StartAfter = page.Next
	}
	return keys, nil
}
