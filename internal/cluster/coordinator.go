package cluster

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/tick"
	"github.com/fsbench/fsbench/internal/units"
)

// Coordinator runs a job on many agents.
type Coordinator struct {
	Hosts  []string // host:port of each agent
	Token  string
	Client *http.Client // TLS set up by the caller for https
	Scheme string       // "http" or "https"
	// Version is this fsbench's, named when an agent speaks another
	// protocol.
	Version string
	// LostAfter: an agent silent this long is lost; 0 means LostAfter.
	LostAfter time.Duration
	// Logf tells the user what happens (stderr); optional.
	Logf func(format string, args ...any)
	// Leftover names what host i leaves behind when its agent is gone
	// before the clean-up (a phrase of package leftover); optional.
	Leftover func(i int) string
	// Live takes each host's live counts as its heartbeats bring them
	// (--metrics-listen on the coordinator); optional.
	Live LiveSink
	// Progress, optional, is told when a phase starts on every host (no
	// Unit), how far the hosts have got in it altogether (done of total
	// units; total -1 when unknown) as their heartbeats arrive, and the
	// final count once every host has ended it; then final is true.
	Progress func(p Progress, final bool)
	// Verbose names every host where a message names hosts; else the
	// first few and how many more.
	Verbose bool

	current string        // the phase released last, whose progress is shown
	b       barriers      // the run's barriers, kept by drive
	sendJob time.Duration // how long sending the job took: room for the first release
	longest time.Duration // the longest silence a host is allowed (silences)
	// closeConns: each request's connection is closed after its answer,
	// where the open-file limit has no room to keep one a host (fitFiles).
	closeConns bool
}

// host is the coordinator's view of one agent during a run.
type host struct {
	addr   string
	run    string // the job's RunName
	index  int    // in Hosts
	info   Info
	rtt    atomic.Int64  // round trip of a small request, ns: pings keep it current
	offset time.Duration // agent clock - coordinator clock
	// sameClock: the agent runs on the coordinator's kernel (offset 0).
	sameClock bool
	id        string
	prepared  atomic.Bool // id is set: it has its job
	res       HostResult
	ready     int // the last barrier it reached
	phase     string
	done      bool
	lost      bool // it stopped answering: it cleans up by itself
	// stopped: its job was stopped on the host (its agent terminated),
	// which removed the job's files as it stopped.
	stopped bool
	heard   time.Time
	crowd   time.Duration // silent LostAfter and this long, it is lost (silences)
	pinged  time.Time     // when the pinger last asked (pingEvery)
	open    bool          // its event stream began: heard counts from then
	prog    *Progress     // the last the host told
}

// Run runs job on every host: preflight (every agent reachable, same
// protocol, job valid, path allowed, room enough) before any host writes
// anything, then the phases in step, then cleanup. It returns each host's
// part, for Merge, and the first failure.
func (c *Coordinator) Run(ctx context.Context, job Job) ([]HostResult, error) {
	if c.LostAfter == 0 {
		c.LostAfter = LostAfter
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if err := c.fitFiles(len(c.Hosts)); err != nil {
		return nil, err
	}
	hosts := make([]*host, len(c.Hosts))
	for i, a := range c.Hosts {
		hosts[i] = &host{addr: a, run: job.RunName, index: i, res: HostResult{Address: a, Starts: map[string]time.Time{}}}
	}
	if err := c.preflight(ctx, hosts, job); err != nil {
		return nil, err
	}
	c.silences(hosts)
	// Each host is pinged from the moment it takes its job: else the
	// first of a thousand hosts to take it could give it up (OrphanAfter)
	// before the last one has it.
	pctx, stopPings := context.WithCancel(context.Background())
	go c.pinger(pctx, hosts)
	t0 := time.Now()
	if err := c.prepare(ctx, hosts, job); err != nil {
		stopPings()
		return nil, err
	}
	c.sendJob = time.Since(t0)
	err := c.drive(ctx, hosts)
	stopPings()
	c.cleanup(hosts)
	out := make([]HostResult, len(hosts))
	for i, h := range hosts {
		h.res.Info = h.info
		out[i] = h.res
	}
	return out, err
}

func (c *Coordinator) preflight(ctx context.Context, hosts []*host, job Job) error {
	machine := sysio.Machine(sysio.ProcRoot)
	err := c.each(hosts, func(h *host) error {
		if err := c.clock(ctx, h, machine); err != nil {
			return err
		}
		switch {
		case h.info.Protocol != Protocol:
			return fmt.Errorf("speaks agent protocol %d (fsbench %s); this fsbench %s speaks %d", h.info.Protocol, h.info.Version, c.Version, Protocol)
		case h.info.Busy:
			return errors.New("busy with another job")
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := sameAgent(hosts); err != nil {
		return err
	}
	return c.each(hosts, func(h *host) error {
		err := c.call(ctx, h, "POST", "/v1/jobs?dry=1", c.jobFor(job, h, hosts), nil)
		if a := (*answer)(nil); errors.As(err, &a) && a.status == http.StatusUnprocessableEntity {
			return &refusal{err}
		}
		return err
	})
}

// sameAgent finds one agent given under two addresses (127.0.0.1:P and
// localhost:P, a name and its address), which could take only one job.
func sameAgent(hosts []*host) error {
	seen := map[string]string{}
	for _, h := range hosts {
		if h.info.ID == "" {
			continue // an agent that does not say
		}
		if first, ok := seen[h.info.ID]; ok {
			return fmt.Errorf("%s and %s are one agent (the same process, %s): give each agent once", first, h.addr, h.info.Host.Name)
		}
		seen[h.info.ID] = h.addr
	}
	return nil
}

func (c *Coordinator) jobFor(job Job, h *host, hosts []*host) Job {
	job.Index, job.Hosts = h.index, len(hosts)
	job.IdleCPUs = idleCPUs(h, hosts)
	job.Crowd = h.crowd
	return job
}

// prepare gives every host its job; if one refuses, the others are told
// to remove what they prepared.
func (c *Coordinator) prepare(ctx context.Context, hosts []*host, job Job) error {
	err := c.each(hosts, func(h *host) error {
		var acc Accepted
		if err := c.call(ctx, h, "POST", "/v1/jobs", c.jobFor(job, h, hosts), &acc); err != nil {
			return err
		}
		h.id = acc.ID
		h.prepared.Store(true)
		return nil
	})
	if err != nil {
		c.cleanup(hosts)
	}
	return err
}

// hostEvent is an event of one host, the end of its stream, or how the
// release of a barrier went (then h is nil).
type hostEvent struct {
	h       *host
	ev      Event
	err     error     // the stream broke
	open    bool      // the stream began
	release *released // a barrier's release was sent to every host
}

// drive follows every host's events, releases each barrier when all hosts
// have reached it, pings, and declares a host lost when it falls silent
// or does not take a release. On a lost host, a failure or ctx's end, the
// others are cancelled and their results (what they measured) collected.
// Its work per event does not grow with the number of hosts: counts are
// kept, not recounted, and the hosts' progress is summed twice a second.
func (c *Coordinator) drive(ctx context.Context, hosts []*host) error {
	events := make(chan hostEvent, 256+4*len(hosts))
	sctx, stop := context.WithCancel(context.Background())
	defer stop()
	c.b = barriers{arrived: map[int]int{}, undone: len(hosts), events: events, stop: sctx.Done()}
	for _, h := range hosts {
		go c.stream(sctx, h, events)
	}
	check := time.NewTicker(500 * time.Millisecond)
	defer check.Stop()
	var failure error
	cancelled := false
	cancelAll := func(why error) {
		if failure == nil {
			failure = why
		}
		if !cancelled {
			cancelled = true
			c.cancel(hosts)
		}
	}
	ctxDone := ctx.Done()
	for c.b.undone > 0 {
		select {
		case <-ctxDone:
			ctxDone = nil
			cancelAll(ctx.Err())
		case he := <-events:
			if err := c.handle(he, hosts, cancelled); err != nil {
				cancelAll(err)
			}
		case <-check.C:
			if err := c.check(hosts, cancelled); err != nil {
				cancelAll(err)
			}
		}
	}
	c.tellLost()
	return failure
}

// barriers is what drive keeps of the run's barriers and hosts.
type barriers struct {
	arrived map[int]int // how many hosts have reached each barrier not yet released
	undone  int         // hosts not done
	// waiting is the barrier that hosts have reached and others not yet,
	// since when, and when the hosts it waits for were last named.
	waiting      int
	waitPhase    string
	since, named time.Time
	// send is how long the last release took to reach every host: the
	// room a common start leaves for the requests.
	send     time.Duration
	progress bool   // a heartbeat told of progress not yet shown
	lost     Causes // hosts lost and not yet told
	events   chan<- hostEvent
	stop     <-chan struct{}
}

// lose takes a host for lost, for cause; the hosts lost together are told
// together (tellLost).
func (c *Coordinator) lose(h *host, cause string) {
	c.markDone(h)
	h.lost = true
	h.res.Err = "lost: " + cause
	c.b.lost.Add(h.addr, cause)
}

// tellLost says which hosts were lost since it last did, one line per
// cause.
func (c *Coordinator) tellLost() {
	if c.b.lost.empty() {
		return
	}
	for _, line := range c.b.lost.Lines(c.few) {
		c.Logf("lost %s", line)
	}
	c.b.lost = Causes{}
}

// markDone takes a host for done.
func (c *Coordinator) markDone(h *host) {
	if !h.done {
		h.done = true
		c.b.undone--
	}
}

// check, twice a second, declares silent hosts lost, shows the hosts'
// progress, and names the hosts a barrier has waited long for.
func (c *Coordinator) check(hosts []*host, cancelled bool) error {
	var failure error
	for _, h := range hosts {
		if silence := c.LostAfter + h.crowd; !h.done && h.open && time.Since(h.heard) > silence {
			c.lose(h, fmt.Sprintf("no answer for %v", silence))
			if failure == nil {
				failure = &HostError{h.addr, fmt.Errorf("%w for %v", ErrLost, silence)}
			}
		}
	}
	c.tellLost()
	if c.b.progress && c.Progress != nil {
		c.b.progress = false
		c.Progress(sum(hosts, c.current), false)
	}
	if b := &c.b; !cancelled && b.arrived[b.waiting] > 0 && time.Since(b.named) >= waitNotice && time.Since(b.since) >= waitNotice {
		b.named = time.Now()
		var late []string
		for _, h := range hosts {
			if h.ready < b.waiting && !h.done {
				late = append(late, h.addr)
			}
		}
		c.Logf("%s: waiting for %s of %d after %v: %s", b.waitPhase, units.Count(len(late), "host"), len(hosts),
			time.Since(b.since).Round(time.Second), c.few(late))
	}
	return failure
}

// waitNotice is how long a barrier waits for hosts before it names them,
// and how often it names them again.
const waitNotice = 10 * time.Second

// handle takes one event; it returns an error that ends the run.
func (c *Coordinator) handle(he hostEvent, hosts []*host, cancelled bool) error {
	if he.release != nil {
		return c.released(he.release)
	}
	h := he.h
	if h.done {
		return nil
	}
	h.heard = time.Now()
	if he.open {
		h.open = true // silent from now on, it is lost
		return nil
	}
	if he.err != nil {
		c.lose(h, he.err.Error())
		return &HostError{h.addr, fmt.Errorf("%w: %v", ErrLost, he.err)}
	}
	ev := he.ev
	if ev.Progress != nil {
		h.prog = ev.Progress
		// A host at the next barrier still tells of the last phase
		// until it is released: only the phase under way is shown.
		if ev.Type == EventHeartbeat && ev.Progress.Phase == c.current {
			c.b.progress = true
		}
	}
	switch ev.Type {
	case EventReady:
		c.arrive(h, ev)
		if !cancelled {
			c.releaseIfAll(hosts, ev.Seq)
		}
	case EventStarted:
		if !IsEnd(ev.Phase) {
			h.res.Starts[ev.Phase] = ev.Time.Add(-h.offset)
		}
	case EventWarning:
		c.Logf("host %s: %s", h.addr, ev.Message)
	case EventHeartbeat:
		c.report(h, hosts, ev.Live)
	case EventDone:
		c.report(h, hosts, ev.Live)
		return c.done(h, ev, cancelled)
	}
	return nil
}

// arrive counts a host at the barrier its ready event names.
func (c *Coordinator) arrive(h *host, ev Event) {
	if ev.Seq <= h.ready {
		return // told twice
	}
	h.ready, h.phase = ev.Seq, ev.Phase
	if c.b.arrived[ev.Seq]++; ev.Seq > c.b.waiting {
		c.b.waiting, c.b.waitPhase, c.b.since, c.b.named = ev.Seq, ev.Phase, time.Now(), time.Time{}
	}
}

// done takes a host's last event: its result, and its failure if it
// failed or was stopped without being asked to.
func (c *Coordinator) done(h *host, ev Event, cancelled bool) error {
	c.markDone(h)
	h.res.Result = ev.Result
	if ev.Result != nil {
		ev.Result.Parameters.SetTexts(ev.ParamTexts)
	}
	switch {
	case ev.Interrupted && !cancelled:
		// Interrupted on its own host: a host that did not finish, whose
		// absence the others must not wait for at the next barrier.
		h.stopped = true
		why := ev.Error
		if why == "" || why == context.Canceled.Error() {
			why = "interrupted on its host" // an agent that does not say why
		}
		err := fmt.Errorf("%w: %s", ErrStopped, why)
		h.res.Err = err.Error()
		c.Logf("host %s %v; stopping the others", h.addr, err)
		return &HostError{h.addr, err}
	case ev.Error != "" && !ev.Interrupted:
		h.res.Err = ev.Error
		return &HostError{h.addr, errors.New(ev.Error)}
	}
	return nil
}

// stream reads a host's events until its job is done or the stream breaks.
func (c *Coordinator) stream(ctx context.Context, h *host, out chan<- hostEvent) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, err := c.request(ctx, "GET", h, "/v1/jobs/"+h.id+"/events", nil)
	if err != nil {
		out <- hostEvent{h: h, err: err}
		return
	}
	client := *c.Client
	client.Timeout = 0 // a stream lasts as long as the job; its beginning does not
	begun := time.AfterFunc(RequestTimeout, cancel)
	resp, err := client.Do(req)
	begun.Stop()
	if err != nil {
		out <- hostEvent{h: h, err: err}
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		out <- hostEvent{h: h, err: answerError(resp)}
		return
	}
	out <- hostEvent{h: h, open: true}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 4<<10), 64<<20) // grown as a result needs
	for sc.Scan() {
		var ev Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			out <- hostEvent{h: h, err: fmt.Errorf("malformed event: %w", err)}
			return
		}
		out <- hostEvent{h: h, ev: ev}
		if ev.Type == EventDone {
			return
		}
	}
	err = sc.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	if ctx.Err() == nil {
		out <- hostEvent{h: h, err: fmt.Errorf("event stream ended: %w", err)}
	}
}

// pinger tells every agent, every HeartbeatEvery, that its coordinator is
// still there.
func (c *Coordinator) pinger(ctx context.Context, hosts []*host) {
	tick.Every(HeartbeatEvery, ctx.Done(), func() bool {
		// A round at a time, parallel requests at once, each with room to
		// answer on a busy machine: a ping given up closes its connection,
		// and the next one would open another.
		_ = c.each(hosts, func(h *host) error {
			if !h.prepared.Load() || time.Since(h.pinged) < h.pingEvery() {
				return nil
			}
			h.pinged = time.Now()
			pctx, cancel := context.WithTimeout(ctx, releaseAttempt)
			defer cancel()
			t0 := time.Now()
			if c.call(pctx, h, "POST", "/v1/jobs/"+h.id+"/ping", nil, nil) == nil {
				// A moving average of the round trip, for the barriers.
				h.rtt.Store((3*h.rtt.Load() + int64(time.Since(t0))) / 4)
			}
			return nil
		})
		return true
	})
}

// cancel asks every host still running to stop.
func (c *Coordinator) cancel(hosts []*host) {
	eachHost(hosts, 3*time.Second, func(ctx context.Context, h *host) {
		if h.done || h.id == "" {
			return
		}
		_ = c.call(ctx, h, "POST", "/v1/jobs/"+h.id+"/cancel", nil, nil)
	})
}

// cleanup tells every host to remove what the job left; a host that was
// lost is not waited for: it removes its files by itself when it stops
// hearing pings, if its agent still runs.
func (c *Coordinator) cleanup(hosts []*host) {
	var mu sync.Mutex
	var failed Causes
	var removes []string // lost hosts whose agents answer
	eachHost(hosts, 30*time.Second, func(ctx context.Context, h *host) {
		switch {
		case h.id == "":
		case h.lost:
			if c.leftBehind(ctx, h) {
				mu.Lock()
				removes = append(removes, h.addr)
				mu.Unlock()
			}
		default:
			err := c.call(ctx, h, "DELETE", "/v1/jobs/"+h.id, nil, nil)
			switch {
			case err == nil, strings.Contains(err.Error(), "no such job"):
			case h.stopped:
				// Gone with its agent, which removed the job's files first.
			default:
				mu.Lock()
				failed.Add(h.addr, err.Error())
				mu.Unlock()
			}
		}
	})
	if len(removes) > 0 {
		c.Logf("%s: its files are removed by its agent, if it still runs, within %v of losing this coordinator", c.named(removes), OrphanAfter)
	}
	for _, line := range failed.Lines(c.few) {
		c.Logf("clean up: %s (an agent still running removes the job's files itself within %v)", line, OrphanAfter)
	}
}

// leftBehind asks a lost host's agent whether it is still there: if it
// answers, it removes the job's files itself. If nothing listens at its
// address any more (killed), what the host wrote stays there; if it does
// not answer (its machine down, hung, or cut off), it stays unless the
// agent still runs and removes it on losing this coordinator. Either is
// said in HostResult.Left.
func (c *Coordinator) leftBehind(ctx context.Context, h *host) (agentRemoves bool) {
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var in Info
	err := c.call(pctx, h, "GET", "/v1/info", nil, &in)
	switch {
	case err == nil || c.Leftover == nil:
		return true
	case errors.Is(err, syscall.ECONNREFUSED):
		h.res.Left = "its agent is gone (connection refused): left behind: " + c.Leftover(h.index)
	default:
		h.res.Left = fmt.Sprintf("its agent does not answer (%v): unless it still runs and removes them within %v of losing this coordinator, left behind: %s",
			err, OrphanAfter, c.Leftover(h.index))
	}
	return false
}
