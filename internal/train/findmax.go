package train

import (
	"context"
	"strconv"

	"github.com/fsbench/fsbench/internal/report"
)

// findMax searches for the largest accelerator count whose AU meets the
// threshold: from -p/--threads, doubling while it passes, then halving
// the gap between the last pass and the first failure. Each count is a
// training run on the same dataset, caches dropped before it. The best
// passing run is the result's train phase; the others are train-N.
func (r *run) findMax(ctx context.Context) error {
	limit := r.ds.Samples() / (r.o.BatchSize * reliableSteps(r.o.Prefetch))
	if limit < 1 {
		limit = r.ds.Samples() / (2 * r.o.BatchSize) // two steps per rank at least
	}
	s := &search{next: r.o.Accelerators, limit: limit}
	best, bestN := -1, 0
	var trials []report.Trial
	var figs []*report.Training
	for n, ok := s.first(); ok; n, ok = s.step() {
		if len(trials) > 0 {
			r.dropCaches()
		}
		p, t, err := r.train(ctx, n)
		p.Name, p.Title = "train-"+strconv.Itoa(n), p.Title+" x"+strconv.Itoa(n)
		r.res.Phases = append(r.res.Phases, p)
		figs = append(figs, t)
		if t != nil {
			trials = append(trials, report.Trial{Accelerators: n, AU: t.AU, Pass: t.Pass})
		}
		if err != nil {
			break
		}
		s.record(n, t.Pass)
		if t.Pass && n > bestN {
			best, bestN = len(r.res.Phases)-1, n
		}
	}
	r.finishSearch(best, figs, trials)
	if s.lo == limit && s.lo > 0 {
		r.warn("--find-max: %d accelerators pass, the most this dataset feeds %d steps per epoch each: add --dataset-files to search further", limit, reliableSteps(r.o.Prefetch))
	}
	return ctx.Err()
}

// finishSearch names the best run's phase train (the first run's when
// none passed) and keeps its figures, with the trials.
func (r *run) finishSearch(best int, figs []*report.Training, trials []report.Trial) {
	first := len(r.res.Phases) - len(figs)
	if best < 0 {
		best = first
	}
	if best >= len(r.res.Phases) || figs[best-first] == nil {
		return
	}
	r.res.Phases[best].Name = "train"
	r.res.Training = figs[best-first]
	r.res.Training.FindMax = trials
}

// search is the sequence of accelerator counts tried: lo is the largest
// count that passed, hi the smallest that failed (0: none yet).
type search struct {
	lo, hi, next, limit int
}

func (s *search) first() (int, bool) {
	s.next = min(max(s.next, 1), s.limit)
	return s.next, s.next >= 1
}

// record notes the outcome of n.
func (s *search) record(n int, pass bool) {
	if pass {
		s.lo = max(s.lo, n)
	} else if s.hi == 0 || n < s.hi {
		s.hi = n
	}
}

// step is the next count to try; false when the search is over.
func (s *search) step() (int, bool) {
	n := (s.lo + s.hi) / 2
	if s.hi == 0 {
		n = min(2*s.lo, s.limit)
	}
	if n <= s.lo || (s.hi != 0 && n >= s.hi) {
		return 0, false
	}
	return n, true
}
