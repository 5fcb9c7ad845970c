package engine

import (
	"context"

	"github.com/fsbench/fsbench/internal/metrics"
)

// Watcher sees the phases of every engine run under a context, with their
// live counters: a live metrics exporter, for one. Begin is called when
// the phase's counters have been zeroed, before its workers start; End
// when its last worker has returned, while live still holds the phase's
// final counts and before the next phase zeroes them. Both must be quick:
// they run on the engine's goroutine, never on the workers'.
type Watcher interface {
	Begin(p *Phase, live *metrics.Live)
	End(p *Phase, live *metrics.Live)
}

type watcherKey struct{}

// WithWatcher returns a context under which every engine's phases are seen
// by w.
func WithWatcher(ctx context.Context, w Watcher) context.Context {
	return context.WithValue(ctx, watcherKey{}, w)
}

// WatcherFrom returns the watcher of ctx, or nil.
func WatcherFrom(ctx context.Context) Watcher {
	w, _ := ctx.Value(watcherKey{}).(Watcher)
	return w
}
