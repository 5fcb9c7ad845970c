package cli

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fsbench/fsbench/internal/bench"
	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/journal"
	"github.com/fsbench/fsbench/internal/objbench"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// AgentOptions are the flags of `fsbench agent`.
type AgentOptions struct {
	Listen    string
	TokenFile string
	Roots     []string
	TLSCert   string
	TLSKey    string
	MaxConns  int
	// MetricsListen is --metrics-listen: where to serve the live metrics
	// of the jobs the agent runs.
	MetricsListen string
	// Name is --name: the host's name in results and metrics.
	Name     string
	protocol int
	orphan   time.Duration
	idle     time.Duration
	// instances serves this many agents in the one process, on
	// consecutive ports from --listen's: a coordinator's load rig.
	instances int
}

func newAgentCmd(app *App) *cobra.Command {
	o := &AgentOptions{}
	cmd := &cobra.Command{
		Use:   "agent --token-file FILE --allow-root DIR [--listen :7781]",
		Short: "Serve benchmark jobs to a coordinator: one host of a run on many hosts",
		Long: `Run on every client host of a run on many hosts. The coordinator is the
ordinary command given --hosts, e.g. "fsbench bench /mnt/jfs -p 4 --hosts
node1:7781,node2:7781": it sends each agent the same job, starts every phase
on all of them together and merges what they measured.

An agent serves one job at a time, only with the token (--token-file, or
FSBENCH_TOKEN), and only for paths under its --allow-root directories. Each
host works in its own directory (or key prefix) inside the run's, and
removes it at the end; an agent that stops hearing from its coordinator for
10 s cancels the job and removes its files by itself. With --tls-cert and
--tls-key it serves HTTPS; object-store credentials reach agents only over
TLS, or come from the agent's own environment (ACCESS_KEY, SECRET_KEY, ...).

Make the token once and give the same file to every agent and to the
coordinator: head -c 32 /dev/urandom | base64 > token; chmod 600 token.

Dropping the page cache before read phases needs root (or CAP_SYS_ADMIN);
without it the agent measures with the caches as they are, and says so.`,
		Example: `  fsbench agent --listen :7781 --token-file /etc/fsbench/token --allow-root /mnt/jfs
  FSBENCH_TOKEN=... fsbench agent --allow-root /mnt/jfs --tls-cert agent.pem --tls-key agent.key`,
		Args: exactArgs(0, "no arguments"),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runAgent(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Listen, "listen", ":7781", "`ADDRESS` to serve on, host:port")
	f.StringVar(&o.TokenFile, "token-file", "", "read the shared token from `FILE` (else FSBENCH_TOKEN)")
	f.StringArrayVar(&o.Roots, "allow-root", nil, "serve jobs only for paths under `DIR`; repeatable")
	f.StringVar(&o.TLSCert, "tls-cert", "", "serve HTTPS with this certificate `FILE` (PEM)")
	f.StringVar(&o.TLSKey, "tls-key", "", "the certificate's private key `FILE` (PEM)")
	f.IntVar(&o.MaxConns, "max-connections", cluster.MaxConns, "serve at most `N` connections at once; more are answered 503 (busy)")
	addMetricsFlag(cmd, &o.MetricsListen)
	f.StringVar(&o.Name, "name", "", "the host's `NAME` in results and in the host label of metrics, the coordinator's too (default: its host name)")
	f.IntVar(&o.protocol, "protocol", 0, "speak this agent protocol version (tests)")
	f.DurationVar(&o.orphan, "orphan-after", 0, "cancel a job not pinged for this long (tests)")
	f.DurationVar(&o.idle, "idle-timeout", 0, "close a connection idle this long (tests)")
	f.IntVar(&o.instances, "instances", 1, "serve N agents in this process, on consecutive ports from --listen's (load tests)")
	_ = f.MarkHidden("instances")
	_ = f.MarkHidden("protocol")
	_ = f.MarkHidden("orphan-after")
	_ = f.MarkHidden("idle-timeout")
	return cmd
}

// check refuses flags an agent cannot serve with, before it starts, and
// loads its TLS certificate (nil: plain HTTP).
func (o *AgentOptions) check() (*tls.Config, error) {
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return nil, Usagef("--tls-cert and --tls-key go together")
	}
	if o.MaxConns < 1 {
		return nil, Usagef("--max-connections must be at least 1")
	}
	_, port, err := net.SplitHostPort(o.Listen)
	if err == nil {
		_, err = net.LookupPort("tcp", port)
	}
	if err != nil {
		return nil, Usagef("--listen %q: want HOST:PORT or :PORT, e.g. :7781", o.Listen)
	}
	if o.TLSCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
	if err != nil {
		return nil, Usagef("--tls-cert/--tls-key: %v", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}

// readToken reads the shared token from a file or FSBENCH_TOKEN.
func readToken(app *App, file string) (string, error) {
	if file != "" {
		return readSecretFile("--token-file", file)
	}
	if t := strings.TrimSpace(app.IO.Getenv("FSBENCH_TOKEN")); t != "" {
		return t, nil
	}
	return "", Usagef("a token is required: --token-file FILE or FSBENCH_TOKEN")
}

// minToken is the shortest token an agent takes without a warning.
const minToken = 16

// weakToken is the warning for a token short enough to guess, or "".
func weakToken(token string) string {
	if len(token) >= minToken {
		return ""
	}
	return fmt.Sprintf("the token is %s, short enough to guess: make one of 32 random bytes, e.g. "+
		"head -c 32 /dev/urandom | base64 > token; chmod 600 token", units.Count(len(token), "character"))
}

// readSecretFile reads a secret from the file a flag names, without the
// white space around it; the errors never show the file's content.
func readSecretFile(flag, file string) (string, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return "", Usagef("%s %s: %v", flag, file, sysio.PathCause(err))
	}
	if t := strings.TrimSpace(string(b)); t != "" {
		return t, nil
	}
	return "", Usagef("%s %s is empty", flag, file)
}

func runAgent(ctx context.Context, app *App, o *AgentOptions) error {
	token, err := readToken(app, o.TokenFile)
	if err != nil {
		return err
	}
	tlsConf, err := o.check()
	if err != nil {
		return err
	}
	runner := &agentRunner{app: app}
	host := o.Name
	if host == "" {
		host, _ = os.Hostname()
	}
	ao := cluster.AgentOptions{
		Token: token, Roots: o.Roots, Runner: runner, Version: Version, Protocol: o.protocol,
		OrphanAfter: o.orphan, IdleTimeout: o.idle, Logf: func(f string, args ...any) { app.Infof(f, args...) },
		Host: report.Host{Name: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Kernel: sysio.Kernel(), CPUs: runtime.NumCPU()},
	}
	if o.instances > 1 {
		return servePool(ctx, app, o, ao, tlsConf)
	}
	a, err := cluster.NewAgent(ao)
	if err != nil {
		return &UsageError{Err: err}
	}
	if w := weakToken(token); w != "" {
		app.Warnf("%s", w)
	}
	ctx, m, err := startMetricsAs(ctx, app, o.MetricsListen, host)
	if err != nil {
		return err
	}
	defer m.Close()
	if m != nil {
		runner.watch = m.Board
	}
	if n := sysio.OpenFileLimit() / 2; n > 0 && o.MaxConns > n {
		// Half of the file descriptors stay for the jobs' own files.
		app.Warnf("serving at most %d connections at once: the process may open %d files (ulimit -n)", n, 2*n)
		o.MaxConns = n
	}
	ln, err := net.Listen("tcp", o.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Listen, err)
	}
	ln = a.Listen(ln, o.MaxConns, tlsConf)
	srv := a.Server()
	scheme := "http"
	if tlsConf != nil {
		srv.TLSConfig = tlsConf
		ln = tls.NewListener(ln, tlsConf)
		scheme = "https"
	}
	app.Infof("fsbench agent %s serving %s://%s for %s", Version, scheme, ln.Addr(), strings.Join(o.Roots, ", "))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a.Close()
	_ = srv.Shutdown(sctx)
	return ErrInterrupted
}

// servePool serves o.instances agents in this process until ctx ends.
func servePool(ctx context.Context, app *App, o *AgentOptions, ao cluster.AgentOptions, tlsConf *tls.Config) error {
	fileRoom(app, "this process", o.instances, 3)
	p, err := cluster.ServePool(ao, o.Listen, o.instances, o.MaxConns, tlsConf)
	if err != nil {
		return err
	}
	app.Infof("fsbench agent %s serving %d agents: %s", Version, o.instances, cluster.HostList(p.Addrs, false))
	<-ctx.Done()
	p.Close()
	return ErrInterrupted
}

// agentRunner runs jobs on an agent through the same commands, flags and
// checks as on one host.
type agentRunner struct {
	app   *App
	watch engine.Watcher // sees the phases of every job, or nil
}

// quietApp is an App whose output goes nowhere (the coordinator prints),
// and whose files are made in directories confine accepts.
func (r *agentRunner) quietApp(confine func(string) error) *App {
	return &App{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: r.app.IO.Getenv}, Globals: Globals{Quiet: true},
		confine: confine}
}

// Prepare parses the job's arguments with the command's own flags. Only
// the flags a host's part of the run takes are accepted: a coordinator's
// flag is refused, a flag naming a file reads the copy the job carries
// (files: the job's file names to the agent's copies), and one naming a
// path of the host is refused by confine unless the agent allows it.
func (r *agentRunner) Prepare(job *cluster.Job, files map[string]string, confine func(string) error) (cluster.Prepared, error) {
	var prepared cluster.Prepared
	check, err := r.command(job, files, &prepared, confine)
	if err != nil {
		return nil, err
	}
	check.SilenceErrors, check.SilenceUsage = true, true
	if err := check.ParseFlags(job.Args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil, errors.New("--help is the coordinator's: an agent does not take it")
		}
		return nil, err
	}
	args, err := localArgs(check, files, confine)
	if err != nil {
		return nil, err
	}
	cmd, _ := r.command(job, files, &prepared, confine)
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err != nil {
		return nil, err
	}
	if prepared == nil {
		return nil, fmt.Errorf("%s: the arguments make no run", job.Command)
	}
	if r.watch != nil {
		return watchedJob{prepared, r.watch}, nil
	}
	return prepared, nil
}

// command is the command a job runs (agentCommands), whose run on an
// agent sets prepared.
func (r *agentRunner) command(job *cluster.Job, files map[string]string, prepared *cluster.Prepared, confine func(string) error) (*cobra.Command, error) {
	c, ok := agentCommands[job.Command]
	if !ok {
		return nil, fmt.Errorf("unknown command %q", job.Command)
	}
	return c.prepare(r.quietApp(confine), job, files, prepared), nil
}

// benchTreeDir is the directory of a workload's kept tree (tree.dir,
// --tree-dir), or "".
func benchTreeDir(o *BenchOptions) string {
	if j := o.Job.Job; j != nil && j.Tree != nil && j.Tree.Dir != "" {
		return filepath.Join(o.Path, j.Tree.Dir)
	}
	return ""
}

// agentJob is a command prepared on an agent: its options as parsed from
// the job's arguments, and how it runs there.
type agentJob[O any] struct {
	o      O
	job    *cluster.Job
	target string
	paths  []string
	run    func(ctx context.Context, gate cluster.Gate, o O, job *cluster.Job) (*report.Result, error)
}

// newAgentJob prepares the run of o on an agent; target is the local
// directory it writes under, "" for an object store; paths are the other
// local paths it uses ("" for none).
func newAgentJob[O any](o O, job *cluster.Job, target string,
	run func(context.Context, cluster.Gate, O, *cluster.Job) (*report.Result, error), paths ...string) *agentJob[O] {
	j := &agentJob[O]{o: o, job: job, target: target, run: run}
	for _, p := range paths {
		if p != "" {
			j.paths = append(j.paths, p)
		}
	}
	return j
}

func (j *agentJob[O]) Target() string  { return j.target }
func (j *agentJob[O]) Paths() []string { return j.paths }

func (j *agentJob[O]) Run(ctx context.Context, gate cluster.Gate) (*report.Result, error) {
	return j.run(ctx, gate, j.o, j.job)
}

// watchedJob is a job whose phases a watcher sees.
type watchedJob struct {
	cluster.Prepared
	watch engine.Watcher
}

func (j watchedJob) Run(ctx context.Context, gate cluster.Gate) (*report.Result, error) {
	return j.Prepared.Run(engine.WithWatcher(ctx, j.watch), gate)
}

// stonewallInterval cuts each phase of a host into intervals, from which
// the coordinator computes the stonewall rate.
const stonewallInterval = 200 * time.Millisecond

// benchOnAgent is bench (or a workload) on an agent.
func benchOnAgent(ctx context.Context, gate cluster.Gate, o *BenchOptions, job *cluster.Job) (*report.Result, error) {
	base, err := runBase(o.Path, job)
	if err != nil {
		return nil, err
	}
	o.RunDir = filepath.Join(base, cluster.HostDir(job.Index))
	o.PinnedPath = job.Path
	if job.ReadOthers {
		o.ReadDir = nextHostDir(base, job)
	}
	o.Seed, o.Interval = job.Seed, stonewallInterval
	o.Host, o.Hosts = job.Index, job.Hosts
	o.Hooks = gateHooksCounting(ctx, gate, o.Job.Job != nil)
	jw, err := benchJournalOnAgent(o, job)
	if err != nil {
		return nil, err
	}
	res, err := agentRun("bench", func(res *report.Result) error {
		if o.Job.Job != nil {
			return bench.RunJob(ctx, o.Options, o.Job.Job, res)
		}
		return bench.Run(ctx, o.Options, res)
	})
	closeAgentJournal(jw, res)
	return res, err
}

// benchJournalOnAgent starts this host's journal (o.Journal, set by
// agentJournal), or returns nil without one. The run reaches its
// directories by the names the agent opened (job.Base, job.Path); the
// journal keeps each path as verify finds it below PATH.
func benchJournalOnAgent(o *BenchOptions, job *cluster.Job) (*journal.Writer, error) {
	threads := o.Threads
	if j := o.Job.Job; j != nil && j.Threads > 0 {
		threads = j.Threads
	}
	jw, err := openJournal(o.Journal, o.Path, threads, o.Seed, o.journalConfine)
	if jw != nil {
		jw.Alias(job.Base, job.RunName)
		jw.Alias(job.Path, "")
		o.Tracer = jw
	}
	return jw, err
}

// closeAgentJournal writes out this host's journal; a failure is a
// warning of the host's result, as on one host.
func closeAgentJournal(jw *journal.Writer, res *report.Result) {
	if jw == nil {
		return
	}
	if err := jw.Close(); err != nil && res != nil {
		res.Warnings = append(res.Warnings, err.Error())
	}
}

// runBase is the directory of the run on an agent: the run's name under
// the absolute PATH, the same on every host, reached through the
// directory the agent opened beneath its allowed root when it has one.
func runBase(path string, job *cluster.Job) (string, error) {
	if job.Base != "" {
		return job.Base, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.Join(abs, job.RunName), nil
}

// nextHostDir is the directory in base of the host after this one, whose
// files this host reads back.
func nextHostDir(base string, job *cluster.Job) string {
	return filepath.Join(base, cluster.HostDir((job.Index+1)%job.Hosts))
}

// gateHooks hold bench's and checkpoint's phases at the coordinator's
// barriers, so that every host starts each phase together and prepares
// the next one only once all have ended it, and tell the agent each
// phase's progress for its heartbeats.
func gateHooks(ctx context.Context, gate cluster.Gate) runenv.Hooks {
	return gateHooksCounting(ctx, gate, false)
}

// gateHooksCounting is gateHooks for a run whose phases count operations
// (job: a workload) or blocks and files (the default benchmark).
func gateHooksCounting(ctx context.Context, gate cluster.Gate, job bool) runenv.Hooks {
	return runenv.Hooks{
		PhaseStart: func(e *workload.Runner, p *workload.FilePhase, total int64) {
			_ = gate(ctx, p.Name)
			cluster.Meter(ctx, p.Name, total, progressUnit(job, p), func() int64 { return e.Live.Ops.Load() })
		},
		PhaseEnd: func(_ *workload.Runner, p *workload.FilePhase) { endGate(ctx, gate)(p.Name) },
		Finished: func(*workload.Runner) { _ = gate(ctx, cluster.FinishPhase) },
	}
}

// endGate is the barrier at the end of each phase (cluster.EndOf), after
// the phase's last progress is settled: no host prepares the next phase
// while another is still in this one.
func endGate(ctx context.Context, gate cluster.Gate) func(string) {
	return func(name string) {
		cluster.Settle(ctx)
		_ = gate(ctx, cluster.EndOf(name))
	}
}

// objbenchTarget is the directory objbench writes under: its directory
// for --storage file, none for an object store.
func objbenchTarget(o *ObjbenchOptions) string {
	if o.Storage == "" {
		return ""
	}
	return storeTarget(o.Storage, o.URL)
}

// objbenchOnAgent is objbench's performance items on an agent; the
// functional checks run on the first host only.
func objbenchOnAgent(ctx context.Context, gate cluster.Gate, o *ObjbenchOptions, job *cluster.Job) (*report.Result, error) {
	o.Prefix = hostPrefix(job.RunName, job.Index)
	o.SkipFunctional = o.SkipFunctional || job.Index > 0
	if o.Interval == 0 {
		o.Interval = stonewallInterval
	}
	o.Hooks = objbench.Hooks{ItemStart: func(title, unit string, total int64, poll func() int64) {
		_ = gate(ctx, title)
		cluster.Meter(ctx, title, total, unit, poll)
	}}
	jw, err := o.openJournal()
	if err != nil {
		return nil, err
	}
	res, err := agentRun("objbench", func(res *report.Result) error { return objbench.Run(ctx, o.Options, res) })
	closeAgentJournal(jw, res)
	return res, err
}
