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

	next     atomic.Int64 // the next slot to read
	consumed atomic.Int64 // batches the accelerator is done with
	stopped  atomic.Bool
	filled   []atomic.Int64 // samples read, per batch of the window
	bytes    []atomic.Int64 // and their bytes

	// mu and cond are for waiting only: a reader whose batch is not yet in
	// the window, the accelerator whose batch is not yet full. A sample
	// read takes no lock unless it completes a batch.
	mu   sync.Mutex
	cond sync.Cond
	err  error
}

func newLoader(batch, prefetch int) *loader {
	l := &loader{batch: batch, window: prefetch + 1}
	l.cond.L = &l.mu
	l.filled = make([]atomic.Int64, l.window)
	l.bytes = make([]atomic.Int64, l.window)
	return l
}

// reset readies the loader for an epoch of the given steps.
func (l *loader) reset(steps int) {
	l.total = int64(steps) * int64(l.batch)
	l.next.Store(0)
	for i := range l.filled {
		l.filled[i].Store(0)
		l.bytes[i].Store(0)
	}
	l.consumed.Store(0)
	l.stopped.Store(false)
	l.err = nil
}

// inWindow reports whether batch b may be filled now.
func (l *loader) inWindow(b int64) bool { return b < l.consumed.Load()+int64(l.window) }

// take claims the next slot for a reader and waits until its batch is in
// the window; false when the epoch has no slot left or was stopped.
func (l *loader) take() (slot int64, ok bool) {
	slot = l.next.Add(1) - 1
	if slot >= l.total {
		return 0, false
	}
	b := slot / int64(l.batch)
	if l.inWindow(b) {
		return slot, !l.stopped.Load()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for !l.inWindow(b) && !l.stopped.Load() {
		l.cond.Wait()
	}
	return slot, !l.stopped.Load()
}

// done records a sample of n bytes read into slot's batch.
func (l *loader) done(slot, n int64) {
	i := int(slot/int64(l.batch)) % l.window
	l.bytes[i].Add(n)
	if l.filled[i].Add(1) == int64(l.batch) {
		// Under the lock, so that the accelerator cannot miss the wake-up
		// between its check and its wait.
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	}
}

// wait blocks until batch step is complete.
func (l *loader) wait(ctx context.Context, step int) (int64, error) {
	i := step % l.window
	l.mu.Lock()
	defer l.mu.Unlock()
	for l.filled[i].Load() < int64(l.batch) && !l.stopped.Load() {
		l.cond.Wait()
	}
	if l.stopped.Load() {
		if l.err != nil {
			return 0, l.err
		}
		return 0, ctx.Err()
	}
	return l.bytes[i].Load(), nil
}

// release frees batch step's place in the window: its counters are reset
// before the batch that takes its place can be claimed.
func (l *loader) release(step int) {
	i := step % l.window
	l.mu.Lock()
	l.filled[i].Store(0)
	l.bytes[i].Store(0)
	l.consumed.Store(int64(step) + 1)
	l.mu.Unlock()
	l.cond.Broadcast()
}

// stop ends the epoch: waiting readers and the accelerator return. err,
// if not nil, is why (a failed read).
func (l *loader) stop(err error) {
	l.mu.Lock()
	if !l.stopped.Load() {
		l.err = err
		l.stopped.Store(true)
	}
	l.mu.Unlock()
	l.cond.Broadcast()
}
