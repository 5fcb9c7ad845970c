package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/push"
	"github.com/prometheus/procfs"
	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/history"
	"github.com/fsbench/fsbench/internal/leftover"
	"github.com/fsbench/fsbench/internal/prom"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
)

// roundRoot builds the command tree a round runs in; set in init, since
// the tree holds the probe command itself.
var roundRoot func(*App) *cobra.Command

func init() { roundRoot = NewRoot }

// prober runs a probe's rounds.
type prober struct {
	app     *App
	o       *ProbeOptions
	metrics *prom.Probe
	pusher  *push.Pusher
	rounds  int
	checked bool // the expectations name phases the rounds have
	// The mount the target was on in the first round that ran: a later
	// round on another mount (it went away) is an error, not a benchmark
	// of the directory underneath.
	target string
	mount  *sysio.Mount
	// pending are directories of rounds that could not be removed.
	pending map[string]bool
	// hist is the history of --history (nil: none); finished counts the
	// rounds that gave a whole result, for --history-every.
	hist     *history.Store
	finished int
	kept     bool // a round's result is in the history
}

func runProbe(ctx context.Context, app *App, o *ProbeOptions) error {
	host := o.Name
	if host == "" {
		host, _ = os.Hostname()
	}
	board := prom.NewBoard(host)
	p := &prober{app: app, o: o, metrics: prom.NewProbe(host), pending: map[string]bool{}}
	own := append([]prometheus.Collector{board}, p.metrics.Collectors()...)
	if o.MetricsListen != "" {
		reg, err := prom.NewRegistry(own...)
		if err != nil {
			return err
		}
		srv, err := prom.Serve(o.MetricsListen, reg)
		if err != nil {
			return &UsageError{Err: err}
		}
		defer srv.Close()
		app.Infof("Probe metrics at %s", srv.URL())
	}
	if o.push != nil {
		reg := prometheus.NewRegistry()
		for _, c := range own {
			if err := reg.Register(c); err != nil {
				return err
			}
		}
		p.pusher = newPusher(o, host, reg)
	}
	if o.History != "" {
		st, err := openHistory(ctx, app, o.History)
		if err != nil {
			return fmt.Errorf("--history: %w", err)
		}
		defer st.Close()
		p.hist = st
	}
	ctx = engine.WithWatcher(ctx, board)
	err := p.loop(ctx)
	p.sweep()
	for dir := range p.pending {
		app.Warnf("left behind: %s", leftover.Dir(dir))
	}
	return err
}

// newPusher pushes reg to the gateway of o, credentials from the URL sent
// as basic authentication and kept out of every message.
func newPusher(o *ProbeOptions, host string, reg prometheus.Gatherer) *push.Pusher {
	u := *o.push
	user := u.User
	u.User = nil
	ps := push.New(u.String(), "fsbench_probe").Grouping("instance", host).Gatherer(reg).
		Client(pushClient(o.Interval))
	if user != nil {
		pw, _ := user.Password()
		ps = ps.BasicAuth(user.Username(), pw)
	}
	return ps
}

// Bounds of a push: the answer read of a gateway that fails (the push
// client puts all of it in its error), the error logged, and the time a
// push may take.
const (
	pushBodyMax    = 64 << 10
	pushErrorMax   = 300
	pushTimeoutMin = time.Second
	pushTimeoutMax = 30 * time.Second
)

// pushClient is the HTTP client of the pushes of a probe that starts a
// round every interval: a push ends before the next round is due (within
// 1 to 30 s), reads at most pushBodyMax of an answer, and follows no
// redirect to another scheme, host or port, which would get the
// credentials.
func pushClient(interval time.Duration) *http.Client {
	return &http.Client{
		Timeout:   pushTimeout(interval),
		Transport: limitedBody{http.DefaultTransport},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			from := via[0].URL
			if req.URL.Scheme != from.Scheme || req.URL.Host != from.Host {
				return fmt.Errorf("the pushgateway redirected to %s://%s: not followed, it is not the host and port of --push", req.URL.Scheme, req.URL.Host)
			}
			if len(via) >= 10 {
				return errors.New("the pushgateway redirected 10 times")
			}
			return nil
		},
	}
}

// pushTimeout is how long a push may take in a probe of that interval.
func pushTimeout(interval time.Duration) time.Duration {
	return min(max(interval, pushTimeoutMin), pushTimeoutMax)
}

// limitedBody cuts the body of every answer to pushBodyMax bytes.
type limitedBody struct{ rt http.RoundTripper }

func (l limitedBody) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.rt.RoundTrip(req)
	if err == nil {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.LimitReader(resp.Body, pushBodyMax), resp.Body}
	}
	return resp, err
}

// loop runs rounds until the end: --duration, --rounds, or ctx.
func (p *prober) loop(ctx context.Context) error {
	var end <-chan time.Time
	if p.o.Duration > 0 {
		t := time.NewTimer(p.o.Duration)
		defer t.Stop()
		end = t.C
	}
	wait := time.NewTimer(0)
	defer wait.Stop()
	for {
		select {
		case <-ctx.Done():
			return ErrInterrupted
		case <-end:
			return nil
		case <-wait.C:
		}
		wait.Reset(p.o.Interval)
		if err := p.round(ctx); err != nil {
			return err
		}
		if p.o.Rounds > 0 && p.rounds >= p.o.Rounds {
			return nil
		}
	}
}

// round runs one round and records it. It returns an error only when the
// probe must end: interrupted, or a first round that shows the command
// line itself is wrong.
func (p *prober) round(ctx context.Context) error {
	start := time.Now()
	res, err := p.run(ctx)
	if ctx.Err() != nil {
		return ErrInterrupted
	}
	if err != nil && p.rounds == 0 && ExitCode(err) == ExitUsage {
		return err
	}
	p.rounds++
	result := prom.RoundPass
	var failed []string
	switch {
	case err != nil:
		result, res = prom.RoundError, nil
	default:
		if !p.checked {
			if err := unmeasured(p.o.exprs, res); err != nil {
				return err
			}
			p.checked = true
		}
		res.Expectations = expect.EvalAll(p.o.exprs, res)
		for _, e := range res.Expectations {
			if e.Verdict == report.VerdictFail {
				result = prom.RoundFail
				failed = append(failed, failedText(e))
			}
		}
		p.remember(res)
	}
	now := time.Now()
	p.metrics.Round(result, now, now.Sub(start), res)
	kept, herr := p.keep(ctx, res)
	// What the round allocated goes back to the system before the next
	// round, not slowly by the runtime's scavenger: between rounds a
	// probe holds what it keeps, not its last round's buffers, and its
	// resident memory does not depend on where the collector's cycle is.
	debug.FreeOSMemory()
	p.log(now, result, now.Sub(start), err, failed, kept+memoryFields())
	if herr != nil {
		return herr
	}
	if p.pusher != nil {
		if perr := p.pusher.PushContext(ctx); perr != nil {
			p.metrics.PushFailed()
			if errors.Is(perr, context.DeadlineExceeded) && ctx.Err() == nil {
				perr = fmt.Errorf("no answer within %v: %w", pushTimeout(p.o.Interval), perr)
			}
			fmt.Fprintf(p.app.IO.Err, "time=%s round=%d push_error=%q\n", now.UTC().Format(time.RFC3339), p.rounds, shorten(perr.Error(), pushErrorMax))
		}
	}
	return nil
}

// keep adds a round's whole result to the history of --history, the
// first and every HistoryEvery-th of them, and returns the log fields
// that say so. A history that refuses the first result is an error that
// ends the probe (the history is named wrongly, or its credentials are);
// once one was kept, a refusal is logged and the probe goes on.
func (p *prober) keep(ctx context.Context, res *report.Result) (string, error) {
	if p.hist == nil || res == nil || res.Interrupted || res.Error != "" {
		return "", nil
	}
	p.finished++
	if (p.finished-1)%p.o.HistoryEvery != 0 {
		return "", nil
	}
	a, err := p.hist.Add(ctx, res, ciLabel(p.app))
	switch {
	case err != nil && !p.kept:
		return "", fmt.Errorf("--history: %w", err)
	case err != nil:
		return fmt.Sprintf(" history_error=%q", shorten(err.Error(), pushErrorMax)), nil
	}
	p.kept = true
	if a.New {
		return fmt.Sprintf(" history=%s new_series=%q", a.Entry.Series, a.Entry.Key.String()), nil
	}
	return " history=" + a.Entry.Series, nil
}

// failedText says what a failed expectation measured, or why it failed.
func failedText(e report.Expectation) string {
	if e.Reason != "" {
		return e.Expr + ": " + e.Reason
	}
	return strings.TrimSpace(fmt.Sprintf("%s (measured %g %s)", e.Expr, e.Measured, e.Unit))
}

// unmeasured refuses, after the first round, an expectation of a phase
// the rounds do not have: it would fail every round for a typing mistake.
func unmeasured(exprs []expect.Expr, res *report.Result) error {
	for _, e := range exprs {
		if e.Name == expect.Errors || e.Name == expect.Functional || res.FindPhase(e.Name) != nil {
			continue
		}
		var names []string
		for i := range res.Phases {
			names = append(names, res.Phases[i].Name)
		}
		return Usagef("--expect %q: the round has no phase %s (it has %s)", e.Text, e.Name, strings.Join(names, ", "))
	}
	return nil
}

// daemonGone names what an aborted or lost connection of a FUSE file
// system means: its daemon died under the round.
func daemonGone(err error) string {
	if errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, syscall.ENOTCONN) {
		return " (the file system's daemon is gone)"
	}
	return ""
}

// log writes a round's line (logfmt).
func (p *prober) log(now time.Time, result string, took time.Duration, err error, failed []string, kept string) {
	line := fmt.Sprintf("time=%s round=%d result=%s seconds=%.3f", now.UTC().Format(time.RFC3339), p.rounds, result, took.Seconds())
	if err != nil {
		line += fmt.Sprintf(" cause=%q", strings.TrimSpace(err.Error())+daemonGone(err))
	}
	if len(failed) > 0 {
		line += fmt.Sprintf(" failed=%q", strings.Join(failed, "; "))
	}
	fmt.Fprintln(p.app.IO.Err, line+kept)
}

// memoryFields gives the probe's resident memory between two rounds as
// log fields: all of it (rss_mib) and its anonymous part (anon_mib), what
// the probe allocated, without the pages of the binary's code that the
// kernel maps in as they are first run. Empty where /proc cannot say.
func memoryFields() string {
	self, err := procfs.Self()
	if err != nil {
		return ""
	}
	st, err := self.NewStatus()
	if err != nil || st.VmRSS == 0 {
		return ""
	}
	return fmt.Sprintf(" rss_mib=%.1f anon_mib=%.1f", float64(st.VmRSS)/(1<<20), float64(st.RssAnon)/(1<<20))
}

// run runs the round's command in this process, its result kept instead
// of written, its output discarded.
func (p *prober) run(ctx context.Context) (*report.Result, error) {
	if err := p.checkMount(); err != nil {
		return nil, err
	}
	p.sweep()
	sub := &App{IO: IO{In: strings.NewReader(""), Out: io.Discard, Err: io.Discard, Getenv: p.app.IO.Getenv},
		Globals: Globals{Quiet: true, NoColor: true}}
	var res *report.Result
	sub.results = func(r *report.Result) { res = r }
	sub.commandLine = CommandLine(p.o.Args)
	_, err := execute(ctx, roundRoot(sub), p.o.Args)
	if dir, ok := leftover.DirPath(sub.Left.What()); ok {
		p.pending[dir] = true
	}
	if err == nil && res == nil {
		err = errors.New("the round gave no result")
	}
	return res, err
}

// remember keeps the mount of the first round's target.
func (p *prober) remember(res *report.Result) {
	if p.mount != nil || res.Target.Path == "" || res.Target.MountPoint == "" {
		return
	}
	m, err := sysio.FindMount(res.Target.Path)
	if err == nil && m.MountPoint == res.Target.MountPoint {
		p.target, p.mount = res.Target.Path, &m
	}
}

// checkMount fails when the target is no longer on the mount it was on.
func (p *prober) checkMount() error {
	if p.mount == nil {
		return nil
	}
	m, err := sysio.FindMount(p.target)
	switch {
	case err != nil:
		return fmt.Errorf("%s: %w", p.target, err)
	case m.MountPoint != p.mount.MountPoint || m.FSType != p.mount.FSType:
		return fmt.Errorf("%s is on %s (%s), no longer on the %s mount at %s: the mount is gone",
			p.target, m.MountPoint, m.FSType, p.mount.FSType, p.mount.MountPoint)
	}
	return nil
}

// sweep removes the directories earlier rounds could not, once the target
// is back on its mount: each is a round's own directory (fsbench-...) in
// the target, which nothing else writes.
func (p *prober) sweep() {
	if len(p.pending) == 0 || p.checkMount() != nil {
		return
	}
	for dir := range p.pending {
		if !strings.HasPrefix(filepath.Base(dir), "fsbench-") {
			delete(p.pending, dir)
			continue
		}
		if _, err := os.Lstat(dir); err != nil && !os.IsNotExist(err) {
			continue // the mount answers with an error: try again later
		}
		if os.RemoveAll(dir) == nil {
			delete(p.pending, dir)
		}
	}
}
