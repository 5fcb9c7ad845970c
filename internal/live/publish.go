package live

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/tick"
	"github.com/fsbench/fsbench/internal/workload"
)

// Probe reads the phase in progress (nil between phases) and the live
// counters of a run. The counters start from zero at each phase; the
// publisher makes them cumulative.
type Probe func() (*workload.FilePhase, metrics.Snapshot)

// RunnerProbe probes the runner of file phases (workload.Runner). get may
// return nil while the runner is not built yet.
func RunnerProbe(get func() *workload.Runner) Probe {
	return func() (*workload.FilePhase, metrics.Snapshot) {
		e := get()
		if e == nil {
			return nil, metrics.Snapshot{}
		}
		return e.Current(), e.Live.Snapshot()
	}
}

// Options configure a Publisher.
type Options struct {
	Command string // "bench"
	Target  string // the directory benchmarked
	Mount   string // the mount point holding Target, if known
	Probe   Probe
	Period  time.Duration // how often to publish; 0 means DefaultPeriod
	Dir     string        // where to publish; "" means the first usable of Dirs()
	Now     func() time.Time
}

// DefaultPeriod is how often a publisher writes its snapshot.
const DefaultPeriod = 250 * time.Millisecond

// Publisher writes a run's snapshot periodically until Stop.
type Publisher struct {
	opts    Options
	path    string
	tmp     string
	stop    chan struct{}
	done    chan struct{}
	once    sync.Once
	mu      sync.Mutex // guards acc
	acc     Accumulator
	pubMu   sync.Mutex // serialises writing the file; guards lastErr
	started time.Time
	lastErr error
}

// Start writes the first snapshot and keeps publishing in the background.
// It fails when no directory of Dirs() is writable; the caller should then
// carry on without publishing.
func Start(opts Options) (*Publisher, error) {
	if opts.Probe == nil {
		return nil, errors.New("live: no probe")
	}
	if opts.Period <= 0 {
		opts.Period = DefaultPeriod
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if abs, err := filepath.Abs(opts.Target); err == nil {
		opts.Target = abs
	}
	dirs := Dirs()
	if opts.Dir != "" {
		dirs = []string{opts.Dir}
	}
	p := &Publisher{opts: opts, stop: make(chan struct{}), done: make(chan struct{}), started: opts.Now()}
	var errs []error
	for _, d := range dirs {
		if err := prepareDir(d); err != nil {
			errs = append(errs, err)
			continue
		}
		removeStale(d)
		name := strconv.Itoa(os.Getpid())
		p.path = filepath.Join(d, name+".json")
		p.tmp = filepath.Join(d, "."+name+".tmp")
		if err := p.publish(); err != nil {
			errs = append(errs, err)
			continue
		}
		go p.loop()
		return p, nil
	}
	return nil, fmt.Errorf("publish live counters: %w", errors.Join(errs...))
}

// removeStale removes the snapshots that runs killed without a chance to
// clean up left in d (those of processes that are gone), where it may.
func removeStale(d string) {
	ents, err := os.ReadDir(d)
	if err != nil {
		return
	}
	for _, e := range ents {
		name := strings.TrimSuffix(strings.TrimPrefix(e.Name(), "."), ".json")
		name = strings.TrimSuffix(name, ".tmp")
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 || Alive(pid) {
			continue
		}
		_ = os.Remove(filepath.Join(d, e.Name()))
	}
}

func prepareDir(d string) error {
	if err := os.MkdirAll(d, 0o755); err != nil {
		return err
	}
	// The shared fallback under /tmp is writable by all, like /tmp.
	if filepath.Dir(d) == filepath.Clean(os.TempDir()) {
		if st, err := os.Stat(d); err == nil && st.Mode().Perm() != 0o777 && os.Geteuid() == statUID(st) {
			_ = os.Chmod(d, 0o777|os.ModeSticky)
		}
	}
	return nil
}

func (p *Publisher) loop() {
	defer close(p.done)
	tick.Every(p.opts.Period, p.stop, func() bool {
		_ = p.publish()
		return true
	})
}

// Snapshot returns what the publisher would publish now.
func (p *Publisher) Snapshot() *Snapshot {
	s := &Snapshot{
		Version: Version, PID: os.Getpid(), Command: p.opts.Command, Target: p.opts.Target, Mount: p.opts.Mount,
		Started: p.started.UTC(), Time: p.opts.Now().UTC(),
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	phase, snap := p.opts.Probe()
	p.acc.Update(phase, snap)
	p.acc.Fill(s)
	return s
}

// EndPhase tells the publisher that phase has ended, while the engine still
// holds its final counters: they are added exactly, however short the
// phase was. Without it, the publisher notices phases by polling, and may
// miss the end of a phase shorter than its period.
func (p *Publisher) EndPhase(phase *workload.FilePhase) {
	if p == nil || phase == nil {
		return
	}
	p.mu.Lock()
	_, snap := p.opts.Probe()
	p.acc.End(phase, snap)
	p.mu.Unlock()
	_ = p.publish()
}

// publish writes the snapshot; a failure is kept for Err and retried at the
// next period.
func (p *Publisher) publish() (err error) {
	p.pubMu.Lock()
	defer p.pubMu.Unlock()
	defer func() { p.lastErr = err }()
	data, err := Marshal(p.Snapshot())
	if err != nil {
		return err
	}
	if err := sysio.WriteFileAtomic(p.path, p.tmp, data, 0o644); err != nil {
		return fmt.Errorf("write %s: %w", p.path, err)
	}
	return nil
}

// Err is the error of the last attempt to publish, or nil.
func (p *Publisher) Err() error {
	p.pubMu.Lock()
	defer p.pubMu.Unlock()
	return p.lastErr
}

// Path is the file the publisher writes.
func (p *Publisher) Path() string { return p.path }

// Stop stops publishing and removes the snapshot. It may be called more
// than once.
func (p *Publisher) Stop() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		close(p.stop)
		<-p.done
		os.Remove(p.tmp)
		os.Remove(p.path)
	})
}

// Accumulator turns the per-phase counters of an engine into cumulative
// ones. It notices a new phase by the identity of the phase in progress
// and by counters that went backwards (the engine zeroes them when a phase
// starts), and adds what the previous phase had counted to a base. Counts
// made between its last reading of a phase and that phase's end are lost
// when the next phase starts before it reads again; the sums never go
// backwards.
type Accumulator struct {
	base         metrics.Snapshot // completed phases
	baseRead     int64
	baseWrite    int64
	last         metrics.Snapshot // the phase being counted
	lastKind     workload.Kind
	lastPhase    *workload.FilePhase
	resetPending bool
	ended        bool             // End was called and no new phase seen since
	endedSnap    metrics.Snapshot // the engine's counters at End
	name         string
	kind         string
}

// End adds the final counters of phase, read when it ended.
func (a *Accumulator) End(phase *workload.FilePhase, final metrics.Snapshot) {
	a.last = final
	a.lastKind = phase.Kind
	a.fold()
	a.lastPhase = phase
	a.resetPending = false
	a.ended, a.endedSnap = true, final
	a.name, a.kind = "", ""
}

// Update takes one reading.
func (a *Accumulator) Update(phase *workload.FilePhase, snap metrics.Snapshot) {
	if a.ended {
		if phase == nil && !below(snap, a.endedSnap) {
			return // still the totals of the phase that ended
		}
		// A new phase: its counters started from zero after End.
		a.ended = false
		a.last = snap
		if phase != nil {
			a.lastPhase, a.lastKind = phase, phase.Kind
			a.name, a.kind = phase.Name, phase.Kind.String()
		} else {
			a.resetPending = true
		}
		return
	}
	decreased := below(snap, a.last)
	switch {
	case decreased:
		a.fold()
		a.last = snap
		if phase != nil {
			a.lastPhase = phase
			a.lastKind = phase.Kind
		} else {
			a.resetPending = true
		}
	case phase != nil && phase != a.lastPhase:
		if !a.resetPending {
			a.fold()
		}
		a.resetPending = false
		a.lastPhase = phase
		a.lastKind = phase.Kind
		a.last = snap
	default:
		a.last = snap
	}
	if phase != nil {
		a.resetPending = false
		a.name, a.kind = phase.Name, phase.Kind.String()
	} else {
		a.name, a.kind = "", ""
	}
}

// below reports whether any counter of s is below the same one of ref.
func below(s, ref metrics.Snapshot) bool {
	return s.Ops < ref.Ops || s.Bytes < ref.Bytes || s.Errors < ref.Errors || s.LatencyNs < ref.LatencyNs
}

func (a *Accumulator) fold() {
	a.base.Ops += a.last.Ops
	a.base.Errors += a.last.Errors
	a.base.LatencyNs += a.last.LatencyNs
	a.base.Bytes += a.last.Bytes
	r, w := split(a.lastKind, a.last)
	a.baseRead += r
	a.baseWrite += w
	a.last = metrics.Snapshot{}
}

// split divides a phase's bytes into read and written: by its kind, or
// for a phase of mixed reads and writes by the engine's count of reads.
func split(k workload.Kind, s metrics.Snapshot) (read, write int64) {
	switch k {
	case workload.Write, workload.Create:
		return 0, s.Bytes
	case workload.Read:
		return s.Bytes, 0
	case workload.Mixed:
		r := min(s.ReadBytes, s.Bytes)
		return r, s.Bytes - r
	}
	return 0, 0
}

// Fill writes the cumulative counters and the phase into s.
func (a *Accumulator) Fill(s *Snapshot) {
	r, w := split(a.lastKind, a.last)
	s.Ops = a.base.Ops + a.last.Ops
	s.Errors = a.base.Errors + a.last.Errors
	s.LatencyNs = a.base.LatencyNs + a.last.LatencyNs
	s.ReadBytes = a.baseRead + r
	s.WriteBytes = a.baseWrite + w
	s.Phase, s.Kind = a.name, a.kind
}

// StartRunner publishes the counters of runner e, running command on
// target, with the mount point of target looked up in the mount table.
func StartRunner(command, target string, e *workload.Runner) (*Publisher, error) {
	return StartProbe(command, target, RunnerProbe(func() *workload.Runner { return e }))
}

// StartProbe publishes what probe says of command running on target, with
// the mount point of target looked up in the mount table.
func StartProbe(command, target string, probe Probe) (*Publisher, error) {
	opts := Options{Command: command, Target: target, Probe: probe}
	if abs, err := filepath.Abs(target); err == nil {
		opts.Target = abs
		if r, err := filepath.EvalSymlinks(abs); err == nil {
			opts.Target = r
		}
	}
	if m, err := sysio.FindMount(opts.Target); err == nil {
		opts.Mount = m.MountPoint
	}
	return Start(opts)
}
