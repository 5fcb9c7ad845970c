package train

import (
	"context"
	"sync"
	"sync/atomic"
)

// loader is one rank's batches in the making for one epoch. Readers take
// the epoch's slots (sample positions) in order; a slot's batch may be
// filled only when it lies within the prefetch window: the batch the
// accelerator computes or waits for, and Prefetch batches after it. It
// holds counts, not data: its memory does not grow with the batch size or
// the prefetch depth beyond one counter per batch of the window.
type loader struct {
	batch, window int
	total         int64 // slots of the epoch: steps x batch

	next atomic.Int64 // the next slot to read

	mu       sync.Mutex
	cond     sync.Cond
	filled   []int   // samples read, per batch of the window
	bytes    []int64 // and their bytes
	consumed int     // batches the accelerator is done with
	stopped  bool
	err      error
}

func newLoader(batch, prefetch int) *loader {
	l := &loader{batch: batch, window: prefetch + 1}
	l.cond.L = &l.mu
	l.filled = make([]int, l.window)
	l.bytes = make([]int64, l.window)
	return l
}

// reset readies the loader for an epoch of the given steps.
func (l *loader) reset(steps int) {
	l.total = int64(steps) * int64(l.batch)
	l.next.Store(0)
	clear(l.filled)
	clear(l.bytes)
	l.consumed, l.stopped, l.err = 0, false, nil
}

// take claims the next slot for a reader and waits until its batch is in
// the window; false when the epoch has no slot left or was stopped.
func (l *loader) take() (slot int64, ok bool) {
	slot = l.next.Add(1) - 1
	if slot >= l.total {
		return 0, false
	}
	b := int(slot / int64(l.batch))
	l.mu.Lock()
	defer l.mu.Unlock()
	for b >= l.consumed+l.window && !l.stopped {
		l.cond.Wait()
	}
	return slot, !l.stopped
}

// done records a sample of n bytes read into slot's batch.
func (l *loader) done(slot, n int64) {
	i := int(slot/int64(l.batch)) % l.window
	l.mu.Lock()
	l.filled[i]++
	l.bytes[i] += n
	full := l.filled[i] == l.batch
	l.mu.Unlock()
	if full {
		l.cond.Broadcast()
	}
}

// wait blocks until batch step is complete.
func (l *loader) wait(ctx context.Context, step int) (int64, error) {
	i := step % l.window
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.filled[i] < l.batch && !l.stopped {
		l.cond.Wait()
	}
	if l.stopped {
		if l.err != nil {
			return 0, l.err
		}
		return 0, ctx.Err()
	}
	return l.bytes[i], nil
}

// release frees batch step's place in the window.
func (l *loader) release(step int) {
	i := step % l.window
	l.mu.Lock()
	l.filled[i], l.bytes[i] = 0, 0
	l.consumed = step + 1
	l.mu.Unlock()
	l.cond.Broadcast()
}

// stop ends the epoch: waiting readers and the accelerator return. err,
// if not nil, is why (a failed read).
func (l *loader) stop(err error) {
	l.mu.Lock()
	if !l.stopped {
		l.stopped, l.err = true, err
	}
	l.mu.Unlock()
	l.cond.Broadcast()
}
