package cli

import (
	"sync/atomic"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/live"
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/workload"
)

// trainLive publishes the counters of a train run's phases, for `fsbench
// stats`: generate as file creation, train as reads (one operation a step).
type trainLive struct {
	pub *live.Publisher
	cur atomic.Pointer[livePhase]
}

type livePhase struct {
	p workload.FilePhase
	e *engine.Engine
}

// startTrainLive starts publishing; the run goes on without when it
// cannot.
func startTrainLive(app *App, target string) *trainLive {
	l := &trainLive{}
	pub, err := live.StartProbe("train", target, l.probe)
	if err != nil {
		app.Warnf("fsbench stats will not see this run: %v", err)
	}
	l.pub = pub
	return l
}

func (l *trainLive) probe() (*workload.FilePhase, metrics.Snapshot) {
	c := l.cur.Load()
	if c == nil {
		return nil, metrics.Snapshot{}
	}
	return &c.p, c.e.Live.Snapshot()
}

// begin and end bracket a phase.
func (l *trainLive) begin(name, title string, e *engine.Engine) {
	kind := workload.Read
	if name == "generate" {
		kind = workload.Create
	}
	l.cur.Store(&livePhase{p: workload.FilePhase{Name: name, Title: title, Kind: kind}, e: e})
}

func (l *trainLive) end() {
	if c := l.cur.Load(); c != nil {
		l.pub.EndPhase(&c.p)
	}
	l.cur.Store(nil)
}

func (l *trainLive) stop() { l.pub.Stop() }
