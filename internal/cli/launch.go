package cli

import (
	"cmp"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/launch"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
)

// LaunchOptions are the flags of a run started by a launcher (mpirun,
// srun, a Kubernetes Indexed Job): one process per rank, rank 0 the
// coordinator, every other rank an agent for this run only.
type LaunchOptions struct {
	Launcher   string
	WorldSize  int
	Rendezvous string
	Timeout    time.Duration
	env        *launch.Env // this process's place, when launched
}

// rankSilence is how long a rank other than 0 goes on without a request
// from rank 0 before it takes rank 0 for gone: rank 0 pings every
// second while a job runs.
const rankSilence = 30 * time.Second

func addLaunchFlags(cmd *cobra.Command, o *LaunchOptions) {
	f := cmd.Flags()
	f.StringVar(&o.Launcher, "launcher", launch.Auto, "run as one rank of a run started by a launcher, `NAME`: auto (when mpirun's, srun's or an Indexed Job's variables are set), mpi, slurm, k8s, or none (a plain run); see docs/launchers.md")
	f.IntVar(&o.WorldSize, "world-size", 0, "with a launcher: the number of ranks, `N` (a Kubernetes Indexed Job's completions; else FSBENCH_WORLD_SIZE or the launcher's own variable)")
	f.StringVar(&o.Rendezvous, "rendezvous", "", "with a launcher: the `DIR` on storage every rank sees where the ranks meet (default PATH)")
	f.DurationVar(&o.Timeout, "rendezvous-timeout", 2*time.Minute, "with a launcher: how long rank 0 waits for the other ranks, and they for it")
}

// detect finds whether a launcher started this process, and its rank.
// --hosts wins over a launcher's environment unless --launcher is given.
func (o *LaunchOptions) detect(cmd *cobra.Command, app *App, h *HostsOptions) error {
	f := cmd.Flags()
	if f.Lookup("launcher") == nil {
		return nil
	}
	explicit := f.Changed("launcher") && o.Launcher != launch.None && o.Launcher != launch.Auto
	if len(h.Hosts) > 0 || h.HostsFile != "" {
		if explicit {
			return Usagef("--launcher %s and --hosts: the launcher's ranks are the hosts; give one of them", o.Launcher)
		}
		return nil
	}
	if o.WorldSize < 0 {
		return Usagef("--world-size %d: want the number of ranks", o.WorldSize)
	}
	env, ok, err := launch.Detect(o.Launcher, app.IO.Getenv, o.WorldSize)
	if err != nil {
		return &UsageError{Err: err}
	}
	if !ok {
		for _, n := range []string{"world-size", "rendezvous", "rendezvous-timeout"} {
			if f.Changed(n) && o.Launcher == launch.None {
				return Usagef("--%s goes with a launcher, not with --launcher none", n)
			}
		}
		return nil
	}
	if o.Timeout <= 0 {
		return Usagef("--rendezvous-timeout %v: want a positive duration", o.Timeout)
	}
	o.env = &env
	return nil
}

// resolveLaunched checks the command line of a launched run.
func (o *HostsOptions) resolveLaunched(cmd *cobra.Command) error {
	f := cmd.Flags()
	if cmd.Name() == "objbench" {
		return Usagef("objbench does not run under a launcher (%s): run it on one rank, give --launcher none, or use --hosts with agents", o.Launch.env.From)
	}
	if f.Lookup("storage") != nil && f.Changed("storage") {
		return Usagef("%s --storage does not run under a launcher (%s): the ranks meet on a file system; use --hosts with agents, or give --launcher none", cmd.Name(), o.Launch.env.From)
	}
	for _, n := range []string{"token-file", "tls-ca"} {
		if f.Changed(n) {
			return Usagef("--%s goes with --hosts: under a launcher rank 0 makes the run's token and talks to the other ranks itself", n)
		}
	}
	if f.Lookup("access-log") != nil && f.Changed("access-log") {
		return Usagef("--access-log does not go with a launcher: the operations happen on every rank; run fsbench bench --access-log as one process to record them")
	}
	if f.Lookup("journal") != nil && f.Changed("journal") {
		return Usagef("--journal does not go with a launcher: the writes happen on every rank; run fsbench bench --journal as one process to record them")
	}
	return nil
}

// rendezvousDir checks that dir, where the ranks meet, is a directory,
// and says why not: missing, not a directory, or out of reach. A storage
// that does not answer by the deadline is not waited for longer: the
// error says so (exit 1), as every step of the rendezvous does.
func rendezvousDir(dir string, deadline time.Time, timeout time.Duration) error {
	st, err := sysio.StatWithin(time.Until(deadline), dir)
	if errors.Is(err, sysio.ErrStalled) {
		return fmt.Errorf("rendezvous %s: %w within %v (--rendezvous-timeout)", dir, sysio.ErrStalled, timeout)
	}
	if err == nil && st.IsDir() {
		return nil
	}
	why := "not a directory"
	if pe := (*os.PathError)(nil); errors.As(err, &pe) {
		why = pe.Err.Error() // os.Stat's errors are all *os.PathError
	}
	return Usagef("rendezvous %s: %s; the ranks meet in a directory every rank sees (make it, or give --rendezvous DIR)", dir, why)
}

// runLaunched runs this process's part of a launched run: rank 0 opens
// the rendezvous, serves its own part as host 0, waits for the other
// ranks and coordinates them (coordinate runs the command on h.Hosts);
// every other rank joins and serves as an agent until rank 0 ends the run.
func runLaunched(ctx context.Context, app *App, cmd *cobra.Command, args []string, h *HostsOptions, coordinate func() error) error {
	o, env := &h.Launch, h.Launch.env
	if len(args) == 0 {
		return Usagef("%s under a launcher needs PATH", cmd.Name())
	}
	root, err := filepath.Abs(args[0])
	if err != nil {
		return &UsageError{Err: err}
	}
	dir := o.Rendezvous
	if dir == "" {
		dir = root
	}
	// The timeout holds from here, however slowly the storage answers,
	// even not at all from the first look.
	deadline := time.Now().Add(o.Timeout)
	if err := rendezvousDir(dir, deadline, o.Timeout); err != nil {
		return err
	}
	rv := &launch.Rendezvous{Path: launch.Dir(dir, env.RunID), Rank: env.Rank, Size: env.Size, From: env.From,
		Deadline: deadline}
	if env.Rank > 0 {
		return serveRank(ctx, app, rv, root, o.Timeout)
	}
	host, _ := os.Hostname()
	tok, err := rv.Open(launch.Notice{Host: host, Addrs: hostIPs()})
	if err != nil {
		return err
	}
	ra, err := startRankAgent(app, tok, root, "127.0.0.1:0")
	if err != nil {
		_ = rv.Remove()
		return err
	}
	defer ra.stop()
	app.Infof("rank 0 of %d (%s): waiting for the other ranks at %s", rv.Size, env.From, rv.Path)
	members, err := rv.Members(ctx, o.Timeout)
	if rerr := rv.Remove(); rerr != nil {
		app.Warnf("%v", rerr)
	}
	// Reached even when interrupted, so that each rank that joined is
	// told the end, but not for longer than reachTime.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), reachTime)
	hosts, rerr := reachRanks(rctx, tok, members)
	cancel()
	if err == nil {
		err = rerr
	}
	if err == nil {
		h.Hosts, h.token = append([]string{ra.addr}, hosts...), tok
		err = coordinate()
	}
	endRanks(tok, hosts, ExitCode(err))
	return err
}

// reachTime bounds how long rank 0 tries to reach the ranks that joined,
// all at once, however many addresses they give and however slowly they
// answer.
const reachTime = 15 * time.Second

// reachRanks finds the agent of every rank that joined, each at the first
// of its addresses where it answers with its own id, so that no other
// process is taken for it, all at once, until ctx ends. It returns those
// reached, in rank order, and an error naming the first that was not.
func reachRanks(ctx context.Context, tok string, members []launch.Member) ([]string, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	addrs := make([]string, len(members))
	errs := make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members[1:] {
		if m.Addrs == nil {
			continue // never joined
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			addrs[i+1], errs[i+1] = reachRank(ctx, client, tok, m)
		}()
	}
	wg.Wait()
	var hosts []string
	var first error
	for i := range members {
		first = cmp.Or(first, errs[i])
		if addrs[i] != "" {
			hosts = append(hosts, addrs[i])
		}
	}
	return hosts, first
}

func reachRank(ctx context.Context, client *http.Client, tok string, m launch.Member) (string, error) {
	for _, addr := range m.Addrs {
		if ctx.Err() != nil {
			break
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/v1/info", nil)
		if err != nil {
			continue
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		resp, err := client.Do(req)
		if err != nil {
			continue
		}
		var in cluster.Info
		err = json.NewDecoder(resp.Body).Decode(&in)
		resp.Body.Close()
		if err == nil && resp.StatusCode == http.StatusOK && in.ID == m.ID {
			return addr, nil
		}
	}
	return "", fmt.Errorf("rank %d (host %s) is not reachable from rank 0 at any of its addresses (%s)", m.Rank, m.Host, strings.Join(m.Addrs, ", "))
}

// endPath is where a rank's agent hears the run's exit code from rank 0.
const endPath = "/v1/launch/end"

// endRanks tells every rank reached the run's exit code, all at once; a
// rank gone by then is not waited for.
func endRanks(tok string, hosts []string, code int) {
	client := &http.Client{Timeout: 10 * time.Second}
	var wg sync.WaitGroup
	for _, addr := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			req, err := http.NewRequest(http.MethodPost, "http://"+addr+endPath, strings.NewReader(strconv.Itoa(code)))
			if err != nil {
				return
			}
			req.Header.Set("Authorization", "Bearer "+tok)
			if resp, err := client.Do(req); err == nil {
				resp.Body.Close()
			}
		}()
	}
	wg.Wait()
}

// serveRank is the part of a rank other than 0: it joins the rendezvous,
// serves rank 0's jobs as an agent, and ends with the run's exit code.
func serveRank(ctx context.Context, app *App, rv *launch.Rendezvous, root string, timeout time.Duration) error {
	n, err := rv.Join(ctx, timeout)
	defer rv.Close()
	if err != nil {
		return err
	}
	listen, err := rankListen(n)
	if err != nil {
		return fmt.Errorf("rank %d of %d: %w", rv.Rank, rv.Size, err)
	}
	ra, err := startRankAgent(app, n.Token, root, listen)
	if err != nil {
		return err
	}
	defer ra.stop()
	host, _ := os.Hostname()
	if err := rv.Register(launch.Member{Rank: rv.Rank, Addrs: []string{ra.addr}, ID: ra.agent.ID(), Host: host}); err != nil {
		return err
	}
	// Rank 0 may wait for the last rank for the whole timeout before it
	// sends anything.
	quietUntil := time.Now().Add(timeout + rankSilence)
	for {
		select {
		case code := <-ra.end:
			if code != ExitOK {
				return &RankExit{Code: code}
			}
			return nil
		case <-ctx.Done():
			return ErrInterrupted
		case <-time.After(100 * time.Millisecond):
		}
		if last := ra.seen.Load(); last != 0 {
			quietUntil = time.Unix(0, last).Add(rankSilence)
		}
		if time.Now().After(quietUntil) {
			return fmt.Errorf("rank %d of %d: no word from rank 0 for %v: it is gone, the run is over", rv.Rank, rv.Size, rankSilence)
		}
	}
}

// rankAgent is the agent a rank serves for one run.
type rankAgent struct {
	agent *cluster.Agent
	srv   *http.Server
	addr  string
	seen  *atomic.Int64 // when the last request came, ns
	end   chan int      // the run's exit code, from rank 0
}

// startRankAgent serves an agent for the run's jobs under root on listen.
func startRankAgent(app *App, tok, root, listen string) (*rankAgent, error) {
	host, _ := os.Hostname()
	a, err := cluster.NewAgent(cluster.AgentOptions{
		Token: tok, Roots: []string{root}, Runner: &agentRunner{app: app}, Version: Version,
		Logf: func(f string, args ...any) { app.Infof(f, args...) },
		Host: report.Host{Name: host, OS: runtime.GOOS, Arch: runtime.GOARCH, Kernel: sysio.Kernel(), CPUs: runtime.NumCPU()},
	})
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", listen, err)
	}
	ra := &rankAgent{agent: a, srv: a.Server(), addr: ln.Addr().String(), seen: &atomic.Int64{}, end: make(chan int, 1)}
	want := sha256.Sum256([]byte(tok))
	ra.srv.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ra.seen.Store(time.Now().UnixNano())
		if r.URL.Path != endPath {
			a.ServeHTTP(w, r)
			return
		}
		got := sha256.Sum256([]byte(strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")))
		b, _ := io.ReadAll(io.LimitReader(r.Body, 16))
		code, err := strconv.Atoi(string(b))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || r.Method != http.MethodPost || err != nil {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		select {
		case ra.end <- code:
		default:
		}
		w.WriteHeader(http.StatusNoContent)
	})
	go func() { _ = ra.srv.Serve(a.Listen(ln, cluster.MaxConns, nil)) }()
	return ra, nil
}

// stop ends a rank's agent: a job still there is cancelled and its files
// removed.
func (ra *rankAgent) stop() {
	ra.agent.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := ra.srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		_ = ra.srv.Close()
	}
}

// hostIPs are the addresses of this host's interfaces that another host
// may reach it at: neither loopback, link-local nor multicast; IPv4 first.
func hostIPs() []string {
	var v4, v6 []string
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.IsLoopback() || ipn.IP.IsLinkLocalUnicast() || ipn.IP.IsMulticast() || ipn.IP.IsUnspecified() {
			continue
		}
		if ipn.IP.To4() != nil {
			v4 = append(v4, ipn.IP.String())
		} else {
			v6 = append(v6, ipn.IP.String())
		}
	}
	return append(v4, v6...)
}

// rankListen is where a rank other than 0 serves its agent: on loopback
// when rank 0 runs on this host (one of the addresses it publishes is
// this host's, or it publishes none), else on the address of this host's
// interface that routes to rank 0's host, and on no other.
func rankListen(n launch.Notice) (string, error) {
	if len(n.Addrs) == 0 {
		return "127.0.0.1:0", nil
	}
	own := hostIPs()
	for _, a := range n.Addrs {
		if slices.Contains(own, a) {
			return "127.0.0.1:0", nil
		}
	}
	for _, a := range n.Addrs {
		// A UDP "connection" sends nothing: it only looks up the route.
		c, err := net.Dial("udp", net.JoinHostPort(a, "9"))
		if err != nil {
			continue
		}
		ip := c.LocalAddr().(*net.UDPAddr).IP
		c.Close()
		return net.JoinHostPort(ip.String(), "0"), nil
	}
	return "", fmt.Errorf("no route from this host to rank 0's host %s (%s)", n.Host, strings.Join(n.Addrs, ", "))
}
