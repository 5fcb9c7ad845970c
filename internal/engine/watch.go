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
// by w, and by the watchers ctx already had.
func WithWatcher(ctx context.Context, w Watcher) context.Context {
	if prev := WatcherFrom(ctx); prev != nil {
		w = watchers{prev, w}
	}
	return context.WithValue(ctx, watcherKey{}, w)
}

// watchers is two watchers in turn.
type watchers [2]Watcher

func (ws watchers) Begin(p *Phase, l *metrics.Live) {
	ws[0].Begin(p, l)
	ws[1].Begin(p, l)
}

func (ws watchers) End(p *Phase, l *metrics.Live) {
	ws[0].End(p, l)
	ws[1].End(p, l)
}

// WatcherFrom returns the watcher of ctx, or nil.
func WatcherFrom(ctx context.Context) Watcher {
	w, _ := ctx.Value(watcherKey{}).(Watcher)
	return w
}
