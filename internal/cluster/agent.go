package cluster

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/prom"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/tick"
)

// Runner runs jobs for an agent; the command-line layer provides it, so
// that a job's arguments mean on an agent what they mean on one host.
type Runner interface {
	// Prepare parses and checks a job without touching the storage. The
	// files the job carries are on the agent's host at files[name]; any
	// other local path the job names is given to confine, which refuses
	// it unless it lies under an allowed root, before it is read.
	Prepare(job *Job, files map[string]string, confine func(path string) error) (Prepared, error)
}

// Prepared is a job ready to run.
type Prepared interface {
	// Target is the local directory the job writes under (its PATH), or ""
	// for an object store.
	Target() string
	// Paths are the other local paths the job writes, known once it is
	// parsed (a kept tree): each must lie under an allowed root as well.
	Paths() []string
	// Run runs the job, calling gate before each phase and before it
	// removes its files (FinishPhase), and returns its result.
	Run(ctx context.Context, gate Gate) (*report.Result, error)
}

// Gate blocks at a barrier until the coordinator releases it.
type Gate func(ctx context.Context, phase string) error

// AgentOptions configure an agent.
type AgentOptions struct {
	Token   string   // required
	Roots   []string // absolute directories jobs may work under
	Runner  Runner
	Version string
	Host    report.Host // the machine, as results name it
	// Protocol is the protocol spoken; 0 means Protocol.
	Protocol int
	// OrphanAfter: a job without a ping this long is cancelled and its
	// files removed; 0 means OrphanAfter.
	OrphanAfter time.Duration
	// IdleTimeout closes a connection idle this long; 0 means IdleTimeout.
	IdleTimeout time.Duration
	Logf        func(format string, args ...any)
	// Machine names the kernel the agent runs on in its info; "" means
	// the one it runs on (sysio.Machine).
	Machine string
	// CPUs are the CPUs the agent's process runs on, in its info; nil
	// means those it may run on (sysio.CPUs).
	CPUs []int
}

// Agent serves one job at a time over HTTP.
type Agent struct {
	o     AgentOptions
	id    string // names this agent in its info
	token [32]byte
	mux   *http.ServeMux
	mu    sync.Mutex
	job   *agentJob // the job in progress, or nil
}

// NewAgent makes an agent; it refuses to exist without a token.
func NewAgent(o AgentOptions) (*Agent, error) {
	if strings.TrimSpace(o.Token) == "" {
		return nil, errors.New("an agent needs a token (--token-file or FSBENCH_TOKEN)")
	}
	if len(o.Roots) == 0 {
		return nil, errors.New("an agent needs at least one --allow-root directory")
	}
	for i, r := range o.Roots {
		if strings.TrimSpace(r) == "" {
			return nil, errors.New("--allow-root names no directory: give the directory jobs may work under")
		}
		abs, err := filepath.Abs(r)
		if err != nil {
			return nil, err
		}
		if st, err := os.Stat(abs); err != nil || !st.IsDir() {
			return nil, fmt.Errorf("--allow-root %s: not a directory", r)
		}
		o.Roots[i] = abs
	}
	if o.Protocol == 0 {
		o.Protocol = Protocol
	}
	if o.OrphanAfter == 0 {
		o.OrphanAfter = OrphanAfter
	}
	if o.IdleTimeout == 0 {
		o.IdleTimeout = IdleTimeout
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	if o.Machine == "" {
		o.Machine = sysio.Machine(sysio.ProcRoot)
	}
	if o.CPUs == nil {
		o.CPUs = sysio.CPUs()
	}
	a := &Agent{o: o, id: newID(), token: sha256.Sum256([]byte(strings.TrimSpace(o.Token))), mux: http.NewServeMux()}
	a.mux.HandleFunc("GET /v1/info", a.info)
	a.mux.HandleFunc("POST /v1/jobs", a.prepare)
	a.mux.HandleFunc("GET /v1/jobs/{id}/events", a.withJob(a.events))
	a.mux.HandleFunc("POST /v1/jobs/{id}/go", a.withJob(a.release))
	a.mux.HandleFunc("POST /v1/jobs/{id}/ping", a.withJob(func(w http.ResponseWriter, _ *http.Request, j *agentJob) {
		j.ping()
		w.WriteHeader(http.StatusNoContent)
	}))
	a.mux.HandleFunc("POST /v1/jobs/{id}/cancel", a.withJob(func(w http.ResponseWriter, _ *http.Request, j *agentJob) {
		j.stop(errCancelled)
		w.WriteHeader(http.StatusNoContent)
	}))
	a.mux.HandleFunc("DELETE /v1/jobs/{id}", a.withJob(a.remove))
	return a, nil
}

// Why a job ends before its coordinator says it is over; the cause of
// its context's cancellation.
var (
	// ErrAgentStopped ends the job of an agent that is itself stopping
	// (SIGTERM or Ctrl-C on its host): its coordinator takes the host for
	// failed, not finished.
	ErrAgentStopped = errors.New("its agent was stopped (SIGTERM or Ctrl-C on its host)")
	errCancelled    = errors.New("cancelled by the coordinator")
	errRemoved      = errors.New("removed by the coordinator")
)

// ID names the agent process, as its info does.
func (a *Agent) ID() string { return a.id }

// Close cancels the job in progress, if any, and removes its files.
func (a *Agent) Close() {
	a.mu.Lock()
	j := a.job
	a.mu.Unlock()
	if j != nil {
		a.end(j, ErrAgentStopped)
	}
}

// ServeHTTP checks the token of every request, in constant time, and
// bounds its body.
func (a *Agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	got := sha256.Sum256([]byte(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")))
	if subtle.ConstantTimeCompare(got[:], a.token[:]) != 1 {
		a.o.Logf("refused a request from %s: wrong or missing token", r.RemoteAddr)
		httpError(w, http.StatusUnauthorized, "wrong or missing token")
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxRequestBytes)
	a.mux.ServeHTTP(w, r)
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(ErrorBody{Error: msg})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

func (a *Agent) info(w http.ResponseWriter, _ *http.Request) {
	a.mu.Lock()
	busy := a.job != nil
	a.mu.Unlock()
	in := Info{ID: a.id, Protocol: a.o.Protocol, Version: a.o.Version, Host: a.o.Host, Busy: busy, Time: time.Now(), Machine: a.o.Machine, CPUs: a.o.CPUs}
	for _, r := range a.o.Roots {
		in.Roots = append(in.Roots, Root{Path: r, FreeBytes: freeBytes(r)})
	}
	writeJSON(w, in)
}

// freeBytes is the free space at dir (sysio.FreeBytes), -1 when it cannot
// be read.
func freeBytes(dir string) int64 {
	free, err := sysio.FreeBytes(dir)
	if err != nil {
		return -1
	}
	return free
}

// prepare checks a job and, unless ?dry=1, takes it as the agent's job:
// its run directory is made and it starts, waiting at its first barrier.
func (a *Agent) prepare(w http.ResponseWriter, r *http.Request) {
	var job Job
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&job); err != nil {
		httpError(w, http.StatusBadRequest, "malformed job: "+err.Error())
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.job != nil {
		httpError(w, http.StatusConflict, "busy with another job")
		return
	}
	j, err := a.check(&job)
	if err != nil {
		httpError(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	if r.URL.Query().Get("dry") == "1" {
		j.removeFiles()
		j.closeDirs()
		writeJSON(w, Accepted{})
		return
	}
	if err := j.makeBase(); err != nil {
		j.removeFiles()
		j.closeDirs()
		httpError(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	a.job = j
	go a.run(j)
	writeJSON(w, Accepted{ID: j.id})
}

// check validates a job: its arguments, its path under an allowed root,
// the free space there.
func (a *Agent) check(job *Job) (*agentJob, error) {
	switch {
	case !slices.Contains(Commands, job.Command):
		return nil, fmt.Errorf("unknown command %q", job.Command)
	case len(job.Args) > maxArgs:
		return nil, fmt.Errorf("%d arguments, more than %d", len(job.Args), maxArgs)
	case job.RunName == "" || strings.ContainsAny(job.RunName, `/\`) || strings.HasPrefix(job.RunName, "."):
		return nil, fmt.Errorf("bad run name %q", job.RunName)
	case job.Index < 0 || job.Hosts < 1 || job.Index >= job.Hosts:
		return nil, fmt.Errorf("host %d of %d", job.Index, job.Hosts)
	}
	j := &agentJob{job: job, dirFd: -1, baseFd: -1, releases: make(chan Release, 64), events: make(chan *Event, 4096), done: make(chan struct{}), board: prom.NewBoard("")}
	j.ctx, j.stop = context.WithCancelCause(context.Background())
	j.id = newID()
	files, err := j.writeFiles()
	if err != nil {
		return nil, err
	}
	if j.prep, err = a.o.Runner.Prepare(job, files, a.allowedBelow); err == nil {
		err = a.confine(j.prep, job.Need)
	}
	if err == nil && j.prep.Target() != "" {
		j.base = filepath.Join(j.prep.Target(), job.RunName)
		j.dirFd, err = a.pinTarget(j.prep.Target())
	}
	if err != nil {
		j.removeFiles()
		return nil, err
	}
	return j, nil
}

// confine checks that every local path of a job lies under an allowed
// root, and that its target has the room the job needs.
func (a *Agent) confine(p Prepared, need int64) error {
	if t := p.Target(); t != "" {
		if err := a.allowed(t, need); err != nil {
			return err
		}
	}
	for _, path := range p.Paths() {
		if err := a.allowedBelow(path); err != nil {
			return err
		}
	}
	return nil
}

// allowedBelow checks a path that may not exist yet: what exists of it,
// every symbolic link resolved, lies under an allowed root, so that what
// a job makes there (as real directories) does too.
func (a *Agent) allowedBelow(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return fmt.Errorf("path %s: %w", path, err)
	}
	exists := abs
	for {
		if _, err := os.Lstat(exists); err == nil || filepath.Dir(exists) == exists {
			break
		}
		exists = filepath.Dir(exists)
	}
	if err := a.allowed(exists, 0); err != nil {
		return fmt.Errorf("path %s leads outside the allowed roots: %w", path, err)
	}
	return nil
}

// allowed checks that path lies under one of the agent's roots and has the
// room the job needs.
func (a *Agent) allowed(path string, need int64) error {
	abs, err := filepath.Abs(path)
	if err == nil {
		abs, err = filepath.EvalSymlinks(abs)
	}
	if err != nil {
		return fmt.Errorf("path %s: %w", path, sysio.PathCause(err))
	}
	for _, root := range a.o.Roots {
		rr, err := filepath.EvalSymlinks(root)
		if err != nil {
			continue
		}
		if abs == rr || strings.HasPrefix(abs, rr+string(filepath.Separator)) {
			if free, short := sysio.Short(abs, need); need > 0 && short {
				return fmt.Errorf("path %s: %s free, the job needs %s", path, sizeText(free), sizeText(need))
			}
			return nil
		}
	}
	return fmt.Errorf("path %s is not under an allowed root (%s)", path, strings.Join(a.o.Roots, ", "))
}

func sizeText(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// withJob finds the job a request names.
func (a *Agent) withJob(h func(http.ResponseWriter, *http.Request, *agentJob)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		j := a.job
		a.mu.Unlock()
		if j == nil || j.id != r.PathValue("id") {
			httpError(w, http.StatusNotFound, "no such job")
			return
		}
		h(w, r, j)
	}
}

// run runs the job and watches its coordinator: without a ping for
// OrphanAfter, the job is cancelled and its files removed.
func (a *Agent) run(j *agentJob) {
	j.ping()
	go a.watch(j)
	t0 := time.Now()
	res, err := j.prep.Run(withMeter(engine.WithWatcher(j.ctx, j.board), &j.meter), j.gate)
	ev := Event{Type: EventDone, Time: time.Now(), Result: res, Interrupted: j.ctx.Err() != nil, Live: liveCounts(j.board)}
	if res != nil {
		ev.ParamTexts = res.Parameters.Texts()
		for i, w := range res.Warnings {
			res.Warnings[i] = j.named(w)
		}
	}
	if err != nil {
		ev.Error = j.named(err.Error())
	}
	if cause := context.Cause(j.ctx); cause != nil && !errors.Is(cause, errCancelled) && !errors.Is(cause, errRemoved) {
		// Stopped on this host, not by the coordinator: the job did not
		// fail on its own, but it did not finish either.
		ev.Error = cause.Error()
	}
	j.send(ev)
	a.o.Logf("%s", jobLine(j, ev, time.Since(t0)))
	close(j.done)
}

func (a *Agent) watch(j *agentJob) {
	limit := a.orphanAfter(j)
	tick.Every(time.Second, j.removed, func() bool {
		if time.Since(time.Unix(0, j.lastPing.Load())) <= limit {
			return true
		}
		a.o.Logf("job %s: no word from the coordinator for %v; cancelling it and removing its files", j.id, limit)
		a.end(j, fmt.Errorf("no word from the coordinator for %v", limit))
		return false
	})
}

// orphanAfter is how long j runs without a ping: the agent's limit, and
// the longer wait its job asks for a crowded machine (within maxCrowd).
func (a *Agent) orphanAfter(j *agentJob) time.Duration {
	return a.o.OrphanAfter + min(max(j.job.Crowd, 0), maxCrowd)
}

// end cancels a job for cause, waits for it to stop (its run removes its
// own files as on Ctrl-C), removes what the agent made for it, and frees
// the agent.
func (a *Agent) end(j *agentJob, cause error) {
	j.once.Do(func() {
		j.stop(cause)
		<-j.done
		j.removeFiles()
		j.removeBase()
		close(j.removed)
		a.mu.Lock()
		if a.job == j {
			a.job = nil
		}
		a.mu.Unlock()
	})
}

func (a *Agent) remove(w http.ResponseWriter, _ *http.Request, j *agentJob) {
	a.end(j, errRemoved)
	w.WriteHeader(http.StatusNoContent)
}

func (a *Agent) release(w http.ResponseWriter, r *http.Request, j *agentJob) {
	var g Release
	if err := json.NewDecoder(r.Body).Decode(&g); err != nil || g.Delay < 0 || g.Delay > time.Minute {
		httpError(w, http.StatusBadRequest, "malformed go")
		return
	}
	select {
	case j.releases <- g:
		w.WriteHeader(http.StatusNoContent)
	default:
		httpError(w, http.StatusTooManyRequests, "too many barriers released ahead")
	}
}

// events streams the job's events as NDJSON, with a heartbeat every
// HeartbeatEvery, until the job is done or the client goes away.
func (a *Agent) events(w http.ResponseWriter, r *http.Request, j *agentJob) {
	fl, ok := w.(http.Flusher)
	if !ok {
		httpError(w, http.StatusInternalServerError, "streaming not supported")
		return
	}
	// The stream lasts as long as the job: no deadline on the request,
	// one per event on the answer, so a client that stops reading goes.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Time{})
	w.Header().Set("Content-Type", "application/x-ndjson")
	enc := json.NewEncoder(w)
	t := time.NewTicker(HeartbeatEvery)
	defer t.Stop()
	for {
		var ev Event
		select {
		case <-r.Context().Done():
			return
		case e := <-j.events:
			ev = *e
		case now := <-t.C:
			ev = Event{Type: EventHeartbeat, Time: now, Live: liveCounts(j.board), Progress: j.meter.read()}
		}
		_ = rc.SetWriteDeadline(time.Now().Add(RequestTimeout))
		if err := enc.Encode(ev); err != nil {
			return
		}
		fl.Flush()
		if ev.Type == EventDone {
			return
		}
	}
}

// agentJob is a job on an agent.
type agentJob struct {
	id       string
	job      *Job
	prep     Prepared
	filesDir string
	base     string // PATH/RunName, made by the first host to prepare
	dirFd    int    // PATH, opened beneath its allowed root, or -1
	baseFd   int    // PATH/RunName, opened from dirFd, or -1
	ctx      context.Context
	stop     context.CancelCauseFunc
	releases chan Release
	events   chan *Event   // pointers: a queue of 4,096 events themselves took 700 KiB a job
	done     chan struct{} // the run returned
	removed  chan struct{}
	once     sync.Once
	seq      int
	lastPing atomic.Int64
	board    *prom.Board // the job's live counts, for heartbeats
	meter    meter       // the phase in progress, for heartbeats
}

func (j *agentJob) ping() { j.lastPing.Store(time.Now().UnixNano()) }

// send queues an event for the stream. The queue holds thousands of
// phases' events; should it ever be full (no coordinator reading for that
// long), the event is dropped rather than block the run, and the
// coordinator, hearing nothing, declares the host lost.
func (j *agentJob) send(ev Event) {
	select {
	case j.events <- &ev:
	default:
	}
}

// gate is the job's barrier: it tells the coordinator it is ready, waits
// for the release and its delay, and says when it started.
func (j *agentJob) gate(ctx context.Context, phase string) error {
	j.seq++
	j.send(Event{Type: EventReady, Seq: j.seq, Phase: phase, Time: time.Now(), Progress: j.meter.read()})
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case g := <-j.releases:
			if g.Seq != j.seq {
				continue // a stale release
			}
			if err := waitFor(ctx, g.wait()); err != nil {
				return err
			}
			j.send(Event{Type: EventStarted, Seq: j.seq, Phase: phase, Time: time.Now()})
			return nil
		}
	}
}

// writeFiles keeps the files the job carries in a directory of the
// agent's own, each under a name of the agent's choosing, and returns
// where each is. A name that is no file name is refused, and nothing is
// left behind on any failure.
func (j *agentJob) writeFiles() (map[string]string, error) {
	j.removed = make(chan struct{})
	if len(j.job.Files) == 0 {
		return nil, nil
	}
	for name := range j.job.Files {
		if b := filepath.Base(name); name == "" || b == "." || b == ".." || b == string(filepath.Separator) {
			return nil, fmt.Errorf("bad file name %q", name)
		}
	}
	dir, err := os.MkdirTemp("", "fsbench-agent-")
	if err != nil {
		return nil, fmt.Errorf("keep the job's files: %w", err)
	}
	j.filesDir = dir
	local := make(map[string]string, len(j.job.Files))
	n := 0
	for name, data := range j.job.Files {
		n++
		p := filepath.Join(dir, strconv.Itoa(n)+"-"+filepath.Base(name))
		if err := os.WriteFile(p, data, 0o600); err != nil {
			j.removeFiles()
			return nil, fmt.Errorf("keep the job's file %s: %w", filepath.Base(name), sysio.PathCause(err))
		}
		local[name] = p
	}
	return local, nil
}

func (j *agentJob) removeFiles() {
	if j.filesDir != "" {
		_ = os.RemoveAll(j.filesDir)
	}
}
