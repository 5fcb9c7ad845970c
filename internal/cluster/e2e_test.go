package cluster_test

// Runs on many hosts with real `fsbench agent` processes on loopback
// (different ports), the coordinator being the real binary too.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const testToken = "correct horse battery staple"

// agent is a running `fsbench agent`.
type agent struct {
	addr string
	cmd  *exec.Cmd
	log  *bytes.Buffer
}

var serving = regexp.MustCompile(`serving https?://(\S+) `)

// startAgent starts an agent on a free loopback port, serving root, and
// returns once it serves.
func startAgent(t *testing.T, root string, extra ...string) *agent {
	t.Helper()
	return startAgentEnv(t, nil, root, extra...)
}

// startAgentEnv is startAgent with env added to the agent's environment.
func startAgentEnv(t *testing.T, env []string, root string, extra ...string) *agent {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := append([]string{"agent", "--listen", "127.0.0.1:0", "--token-file", tok, "--allow-root", root}, extra...)
	cmd := exec.Command(testenv.Binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	return serveAgent(t, cmd)
}

// serveAgent starts the agent cmd and returns once it serves.
func serveAgent(t *testing.T, cmd *exec.Cmd) *agent {
	t.Helper()
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &agent{cmd: cmd, log: &bytes.Buffer{}}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if m := serving.FindStringSubmatch(line); m != nil {
				found <- m[1]
			}
			a.log.WriteString(line + "\n")
		}
	}()
	select {
	case a.addr = <-found:
	case <-time.After(20 * time.Second):
		t.Fatalf("agent did not start serving: %s", a.log)
	}
	return a
}

// coordinator runs the binary as a coordinator (the token in its
// environment); cancelling ctx is Ctrl-C.
func coordinator(t *testing.T, ctx context.Context, args ...string) testenv.Output {
	t.Helper()
	return testenv.Run(t, ctx, []string{"FSBENCH_TOKEN=" + testToken}, args...)
}

// resultOf is the result the coordinator wrote (with -o json), failing
// the test unless it exited 0.
func resultOf(t *testing.T, out testenv.Output) *report.Result {
	t.Helper()
	if out.Code != 0 {
		t.Fatalf("exit %d: %s", out.Code, out.Stderr)
	}
	r, err := report.ReadJSON(strings.NewReader(out.Stdout))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func hostsFlag(agents ...*agent) string {
	var s []string
	for _, a := range agents {
		s = append(s, a.addr)
	}
	return strings.Join(s, ",")
}

// left lists what is left under dir.
func left(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// Three hosts, exact counts: the aggregate is the sum of the hosts, and
// the merged histogram holds every operation.
func TestThreeHostsExactCounts(t *testing.T) {
	root := t.TempDir()
	a, b, c := startAgent(t, root), startAgent(t, root), startAgent(t, root)
	out := coordinator(t, context.Background(), "bench", root, "-p", "2", "--big-file-size", "8M", "--small-file-count", "10",
		"--small-file-size", "16K", "--hosts", hostsFlag(a, b, c), "-o", "json")
	r := resultOf(t, out)
	want := map[string]int64{"write-big": 3 * 2 * 8, "read-big": 3 * 2 * 8, "write-small": 3 * 2 * 10, "read-small": 3 * 2 * 10, "stat": 3 * 2 * 10}
	if len(r.Hosts) != 3 || len(r.Phases) != len(want) {
		t.Fatalf("%d hosts, %d phases", len(r.Hosts), len(r.Phases))
	}
	for _, p := range r.Phases {
		var sum int64
		for _, h := range p.Hosts {
			sum += h.Ops
		}
		h, err := p.LatencyHistogram()
		if err != nil {
			t.Fatal(err)
		}
		if p.Ops != want[p.Name] || sum != p.Ops || h.Count() != p.Ops || len(p.Hosts) != 3 {
			t.Errorf("%s: aggregate %d ops, hosts add to %d, histogram %d, want %d on 3 hosts", p.Name, p.Ops, sum, h.Count(), want[p.Name])
		}
		if p.Stonewall == nil || p.StartSkew < 0 || p.StartSkew > 1 {
			t.Errorf("%s: stonewall %+v, start skew %v s", p.Name, p.Stonewall, p.StartSkew)
		}
		checkMergedPercentiles(t, &p)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// checkMergedPercentiles: the aggregate p99 is the merged histogram's, not
// an average of the hosts' percentiles.
func checkMergedPercentiles(t *testing.T, p *report.PhaseResult) {
	t.Helper()
	m := metrics.NewHistogram()
	for _, h := range p.Hosts {
		hh, err := metrics.Decode(h.Histogram)
		if err != nil {
			t.Fatal(err)
		}
		m.Merge(hh)
	}
	if got, want := p.Latency.P99, m.Summary().P99; got != want {
		t.Errorf("%s: aggregate p99 %v, merged hosts' histograms give %v", p.Name, got, want)
	}
}

func TestRefusals(t *testing.T) {
	root, other := t.TempDir(), t.TempDir()
	a := startAgent(t, root)
	old := startAgent(t, root, "--protocol", "99")
	for _, c := range []struct {
		name string
		args []string
		env  string
		want string
	}{
		{"outside the allowed root", []string{"bench", other, "--hosts", a.addr}, "", "not under an allowed root"},
		{"protocol mismatch", []string{"bench", root, "--hosts", a.addr + "," + old.addr}, "", "speaks agent protocol 99"},
		{"wrong token", []string{"bench", root, "--hosts", a.addr}, "FSBENCH_TOKEN=wrong", "wrong or missing token"},
		{"unreachable", []string{"bench", root, "--hosts", "127.0.0.1:1"}, "", "unreachable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			args := append(c.args, "--big-file-size", "1M", "--small-file-count", "1")
			cmd := exec.Command(testenv.Binary(t), args...)
			tok := "FSBENCH_TOKEN=" + testToken
			if c.env != "" {
				tok = c.env
			}
			cmd.Env = []string{"PATH=" + os.Getenv("PATH"), tok}
			outb, _ := cmd.CombinedOutput()
			out := string(outb)
			if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(out, c.want) {
				t.Fatalf("exit %d, want an error with %q:\n%s", cmd.ProcessState.ExitCode(), c.want, out)
			}
			if c.name != "unreachable" && !strings.Contains(out, "127.0.0.1:") {
				t.Errorf("the error does not name the host: %s", out)
			}
			if l := left(t, other); len(l) != 0 {
				t.Errorf("written outside the allowed root: %v", l)
			}
			if l := left(t, root); len(l) != 0 {
				t.Errorf("a refused run left %v", l)
			}
		})
	}
	// The agent still serves a correct job after all that.
	out := coordinator(t, context.Background(), "bench", root, "--big-file-size", "1M", "--small-file-count", "2", "--hosts", a.addr)
	if out.Code != 0 {
		t.Fatalf("after refusals: exit %d: %s", out.Code, out.Stderr)
	}
}

// One agent given under two names is named as one, before any job.
func TestSameAgentTwoNames(t *testing.T) {
	root := t.TempDir()
	a := startAgent(t, root)
	_, port, _ := net.SplitHostPort(a.addr)
	other := "localhost:" + port
	out := coordinator(t, context.Background(), "bench", root, "--big-file-size", "1M", "--small-file-count", "1",
		"--hosts", a.addr+","+other)
	if out.Code == 0 || !strings.Contains(out.Stderr, a.addr+" and "+other+" are one agent") {
		t.Fatalf("exit %d, want the two names said to be one agent:\n%s", out.Code, out.Stderr)
	}
	if strings.Contains(out.Stderr, "busy") {
		t.Errorf("the error speaks of a busy agent:\n%s", out.Stderr)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// A long workload on two hosts; kill -9 of one agent mid-phase is reported
// by name within 10 s, the other host stops and removes its files, and the
// coordinator exits 1 with what was measured.
func TestAgentKilledMidPhase(t *testing.T) {
	root := t.TempDir()
	a, b := startAgent(t, root), startAgent(t, root)
	ctx := context.Background()
	go func() {
		// Once both hosts write, as their files show: the phase runs.
		waitFor(t, time.Minute, func() bool { return writing(root, 0) && writing(root, 1) })
		_ = b.cmd.Process.Kill()
	}()
	out := coordinator(t, ctx, "bench", root, "--rw", "write", "--file-size", "4M", "--xfer-size", "64K", "--duration", "60s",
		"--hosts", a.addr+","+b.addr)
	if out.Code != 1 || !strings.Contains(out.Stderr, b.addr) || !strings.Contains(out.Stderr, "lost") {
		t.Fatalf("exit %d, want 1 naming the lost host %s:\n%s", out.Code, b.addr, out.Stderr)
	}
	if out.Took > 40*time.Second {
		t.Errorf("the coordinator took %v to give up", out.Took)
	}
	// The surviving host removed its files; the killed one could not, and
	// the coordinator names them.
	runs, _ := filepath.Glob(filepath.Join(root, "fsbench-hosts-*", "host-*"))
	if len(runs) != 1 || filepath.Base(runs[0]) != "host-1" {
		t.Fatalf("left after the run: %v, want only the killed host's host-1", runs)
	}
	want := "Warning: host " + b.addr + ": its agent is gone (connection refused): left behind: directory " + filepath.Dir(runs[0]) + " (remove it with: rm -rf "
	if !strings.Contains(out.Stderr, want) {
		t.Errorf("stderr does not name what the killed host left (%q):\n%s", want, out.Stderr)
	}
}

// What an agent warns of reaches the coordinator's stderr in table mode,
// named by the host, as it does on one host.
func TestHostWarningsShown(t *testing.T) {
	root := t.TempDir()
	a := startAgent(t, root)
	out := coordinator(t, context.Background(), "bench", root, "--big-file-size", "1M", "--small-file-count", "2", "--keep", "--hosts", a.addr)
	if out.Code != 0 {
		t.Fatalf("exit %d: %s", out.Code, out.Stderr)
	}
	kept, _ := filepath.Glob(filepath.Join(root, "fsbench-hosts-*", "host-0"))
	if len(kept) != 1 {
		t.Fatalf("kept %v, want one host-0 directory", kept)
	}
	want := "Warning: host " + a.addr + ": keeping benchmark files in " + kept[0] + " (--keep)\n"
	if !strings.Contains(out.Stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, out.Stderr)
	}
}

// threeWrites is a workload of three phases, each long enough that a
// host stopped in the first must not be waited for.
const threeWrites = `threads: 1
phases:
  - {name: w1, op: write, file_size: 4M, xfer_size: 64K, duration: 60s}
  - {name: w2, op: write, file_size: 4M, xfer_size: 64K, duration: 60s}
  - {name: w3, op: write, file_size: 4M, xfer_size: 64K, duration: 60s}
`

// An agent stopped with SIGTERM (systemctl stop, a pod evicted) once it is
// writing is a failed host, not a finished one: the coordinator names it,
// stops the others at once (no waiting at the next barrier), marks what
// was measured as partial and exits 1, even with --expect errors==0; every
// host's files are removed.
func TestAgentTerminatedMidPhase(t *testing.T) {
	job := filepath.Join(t.TempDir(), "three.yaml")
	if err := os.WriteFile(job, []byte(threeWrites), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		hosts int
		args  []string
	}{
		{"one host, one phase", 1, []string{"--rw", "write", "--file-size", "4M", "--xfer-size", "64K", "--duration", "60s"}},
		{"two hosts, three phases", 2, []string{"-f", job}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			var agents []*agent
			for range c.hosts {
				agents = append(agents, startAgent(t, root))
			}
			stopped := agents[c.hosts-1]
			ended := make(chan struct{})
			defer close(ended)
			go func() {
				// Once the host writes, as its files show.
				for !writing(root, c.hosts-1) {
					select {
					case <-ended:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
				_ = stopped.cmd.Process.Signal(syscall.SIGTERM)
			}()
			// A guard against a hang only: the phases last 60 s each.
			ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
			defer cancel()
			args := append([]string{"bench", root, "--hosts", hostsFlag(agents...), "--expect", "errors==0", "-o", "json"}, c.args...)
			out := coordinator(t, ctx, args...)
			want := "host " + stopped.addr + ": stopped before the end: its agent was stopped (SIGTERM or Ctrl-C on its host)"
			if out.Code != 1 || !strings.Contains(out.Stderr, want) || strings.Contains(out.Stdout+out.Stderr, "Benchmark finished!") {
				t.Fatalf("exit %d after %v; want 1 and %q:\n%s", out.Code, out.Took.Round(time.Millisecond), want, out.Stderr)
			}
			r, err := report.ReadJSON(strings.NewReader(out.Stdout))
			if err != nil {
				t.Fatal(err)
			}
			p := r.FindPhase("write")
			if c.hosts > 1 {
				p = r.FindPhase("w1")
			}
			if !strings.Contains(r.Error, stopped.addr) || p == nil || !p.Incomplete || r.FindPhase("w2") != nil {
				t.Fatalf("result error %q, phases %d; want the host named and the first phase partial", r.Error, len(r.Phases))
			}
			for _, h := range p.Hosts {
				if h.Address == stopped.addr && (!h.Incomplete || !strings.Contains(h.Error, "its agent was stopped")) {
					t.Errorf("the stopped host's row: incomplete %v, error %q", h.Incomplete, h.Error)
				}
			}
			waitFor(t, 15*time.Second, func() bool { return len(left(t, root)) == 0 })
		})
	}
}

// writing reports whether host i of the run under root has written data.
func writing(root string, i int) bool {
	dirs, _ := filepath.Glob(filepath.Join(root, "fsbench-hosts-*", fmt.Sprintf("host-%d", i)))
	found := false
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(_ string, e fs.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				if info, ierr := e.Info(); ierr == nil && info.Size() > 0 {
					found = true
				}
			}
			return nil
		})
	}
	return found
}

// Ctrl-C on the coordinator stops and cleans up every host.
func TestCoordinatorInterrupted(t *testing.T) {
	root := t.TempDir()
	a, b := startAgent(t, root), startAgent(t, root)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, time.Minute, func() bool { return writing(root, 0) && writing(root, 1) })
		cancel() // SIGINT, as Ctrl-C
	}()
	out := coordinator(t, ctx, "bench", root, "--rw", "write", "--file-size", "4M", "--xfer-size", "64K", "--duration", "60s",
		"--hosts", a.addr+","+b.addr)
	if out.Code != 130 {
		t.Fatalf("exit %d, want 130:\n%s", out.Code, out.Stderr)
	}
	waitFor(t, 15*time.Second, func() bool { return len(left(t, root)) == 0 })
}

// An agent whose coordinator vanishes (SIGKILL) cancels the job and
// removes its files by itself, then serves again.
func TestAgentOrphaned(t *testing.T) {
	root := t.TempDir()
	a := startAgent(t, root, "--orphan-after", "2s")
	cmd := exec.Command(testenv.Binary(t), "bench", root, "--rw", "write", "--file-size", "4M", "--xfer-size", "64K",
		"--duration", "60s", "--hosts", a.addr)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "FSBENCH_TOKEN=" + testToken}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, func() bool { return writing(root, 0) })
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	t0 := time.Now()
	waitFor(t, 30*time.Second, func() bool { return len(left(t, root)) == 0 })
	t.Logf("files removed %v after the coordinator died", time.Since(t0).Round(100*time.Millisecond))
	out := coordinator(t, context.Background(), "bench", root, "--big-file-size", "1M", "--small-file-count", "1", "--hosts", a.addr)
	if out.Code != 0 {
		t.Fatalf("the agent does not serve again: exit %d: %s", out.Code, out.Stderr)
	}
}

func waitFor(t *testing.T, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Errorf("not so after %v", d)
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tlsAgents starts two agents serving root over TLS, and returns them with
// the CA file that trusts them.
func tlsAgents(t *testing.T, root string) (*agent, *agent, string) {
	t.Helper()
	certs := t.TempDir()
	if err := testenv.WriteSelfSigned(certs); err != nil {
		t.Fatal(err)
	}
	tlsArgs := []string{"--tls-cert", filepath.Join(certs, "public.crt"), "--tls-key", filepath.Join(certs, "private.key")}
	return startAgent(t, root, tlsArgs...), startAgent(t, root, tlsArgs...), filepath.Join(certs, "public.crt")
}

// objbench on two agents over TLS: the credentials given on the command
// line reach the agents encrypted and appear nowhere; over plain HTTP the
// coordinator refuses to send them.
func TestObjbenchHostsOverTLS(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	root := t.TempDir()
	a, b, ca := tlsAgents(t, root)
	plain := startAgent(t, root)
	args := []string{"objbench", "--storage", "minio", m.URL("hosts-tls"), "--access-key", m.AccessKey, "--secret-key", m.SecretKey,
		"--skip-functional-tests", "--big-object-size", "8M", "--block-size", "1M", "--small-objects", "10", "--small-object-size", "16K", "-p", "2"}
	out := coordinator(t, context.Background(), append(args, "--hosts", plain.addr)...)
	if out.Code != 2 || !strings.Contains(out.Stderr, "only over TLS") {
		t.Fatalf("secrets over plain HTTP: exit %d: %s", out.Code, out.Stderr)
	}
	out = coordinator(t, context.Background(), append(args, "--hosts", a.addr+","+b.addr, "--tls-ca", ca, "-o", "json")...)
	r := resultOf(t, out)
	up := r.FindPhase("upload")
	if up == nil || len(up.Hosts) != 2 || up.Ops != 2*8 || len(r.Hosts) != 2 {
		t.Fatalf("upload on two hosts: %+v", up)
	}
	for name, text := range map[string]string{"stdout": out.Stdout, "stderr": out.Stderr, "agent log": a.log.String() + b.log.String()} {
		if strings.Contains(text, m.SecretKey) {
			t.Errorf("the secret key appears in the %s", name)
		}
	}
}

// The secret key read from a file (--secret-key-file), which ps does not
// show, serves a run on one host and on agents over TLS, reaches them only
// over TLS, and appears nowhere.
func TestObjbenchSecretKeyFile(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	root := t.TempDir()
	a, b, ca := tlsAgents(t, root)
	plain := startAgent(t, root)
	sk := filepath.Join(t.TempDir(), "secret-key")
	if err := os.WriteFile(sk, []byte(m.SecretKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"objbench", "--storage", "minio", m.URL("secret-file"), "--access-key", m.AccessKey, "--secret-key-file", sk,
		"--skip-functional-tests", "--big-object-size", "4M", "--block-size", "1M", "--small-objects", "4", "--small-object-size", "16K", "-o", "json"}
	out := coordinator(t, context.Background(), append(args, "--hosts", plain.addr)...)
	if out.Code != 2 || !strings.Contains(out.Stderr, "only over TLS") {
		t.Fatalf("a secret file over plain HTTP: exit %d: %s", out.Code, out.Stderr)
	}
	for _, extra := range [][]string{nil, {"--hosts", a.addr + "," + b.addr, "--tls-ca", ca}} {
		out := coordinator(t, context.Background(), append(args, extra...)...)
		if r := resultOf(t, out); r.FindPhase("upload") == nil {
			t.Fatalf("%v: no upload in the result", extra)
		}
		for name, text := range map[string]string{"stdout": out.Stdout, "stderr": out.Stderr, "agent log": a.log.String() + b.log.String()} {
			if strings.Contains(text, m.SecretKey) {
				t.Errorf("%v: the secret key appears in the %s", extra, name)
			}
		}
	}
}

// TestHeaderAsOnOneHost: the table's header names the parameters as a run
// on one host does (labels and sizes travel beside the agents' JSON).
func TestHeaderAsOnOneHost(t *testing.T) {
	root := t.TempDir()
	a, b := startAgent(t, root), startAgent(t, root)
	out := coordinator(t, context.Background(), "bench", root, "--big-file-size", "2M", "--small-file-count", "4",
		"--hosts", hostsFlag(a, b))
	if out.Code != 0 {
		t.Fatalf("exit %d: %s", out.Code, out.Stderr)
	}
	for _, want := range []string{"BlockSize: 1 MiB, BigFileSize: 2 MiB", "Hosts: 2"} {
		if !strings.Contains(out.Stdout, want) {
			t.Errorf("header lacks %q:\n%s", want, out.Stdout)
		}
	}
}

// TestRepeatOnHosts: --repeat stays with the coordinator, which runs the
// job on every host once per run; each run is a merged many-host result,
// and the summary adds up every run's operations.
func TestRepeatOnHosts(t *testing.T) {
	root := t.TempDir()
	a, b := startAgent(t, root), startAgent(t, root)
	out := coordinator(t, context.Background(), "bench", root, "-p", "2", "--big-file-size", "4M", "--small-file-count", "5",
		"--small-file-size", "16K", "--hosts", hostsFlag(a, b), "--repeat", "2", "-o", "json")
	r := resultOf(t, out)
	if len(r.Runs) != 2 || len(r.Phases) != 5 {
		t.Fatalf("%d runs, %d phases", len(r.Runs), len(r.Phases))
	}
	// 2 hosts x 2 threads: 4 blocks of the big file, 5 small files each.
	want := map[string]int64{"write-big": 16, "read-big": 16, "write-small": 20, "read-small": 20, "stat": 20}
	for _, run := range r.Runs {
		for _, p := range run.Phases {
			if len(p.Hosts) != 2 || p.Ops != want[p.Name] {
				t.Errorf("run %d %s: %d hosts, %d ops, want 2 hosts, %d ops", run.Index, p.Name, len(p.Hosts), p.Ops, want[p.Name])
			}
		}
	}
	for _, p := range r.Phases {
		if p.Spread == nil || p.Spread.Runs != 2 || p.Ops != 2*want[p.Name] {
			t.Errorf("%s: spread %+v, ops %d, want 2 runs, %d ops", p.Name, p.Spread, p.Ops, 2*want[p.Name])
		}
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// TestTrainRepeatOnHosts: train's AU over --repeat on many hosts is one
// expectation, judged over the measured steps of every host and run
// together (2 hosts x 9 steps x 2 runs), not over the first run's.
func TestTrainRepeatOnHosts(t *testing.T) {
	root := t.TempDir()
	a, b := startAgent(t, root), startAgent(t, root)
	out := coordinator(t, context.Background(), "train", root, "--dataset-files", "4", "--samples-per-file", "25", "--sample-size", "8K",
		"--batch-size", "5", "--compute-time", "2ms", "--epochs", "1", "--hosts", hostsFlag(a, b), "--repeat", "2", "-o", "json")
	r := resultOf(t, out)
	if len(r.Runs) != 2 || r.Training == nil {
		t.Fatalf("%d runs, training %v", len(r.Runs), r.Training)
	}
	for _, run := range r.Runs {
		if run.Training == nil || run.Training.MeasuredSteps != 18 {
			t.Errorf("run %d: training %+v, want 18 measured steps", run.Index, run.Training)
		}
	}
	var au []report.Expectation
	for _, x := range r.Expectations {
		if x.Metric == "au" {
			au = append(au, x)
		}
	}
	tr := r.Training
	if len(au) != 1 || tr.MeasuredSteps != 36 || au[0].Verdict != report.VerdictTooShort ||
		!strings.Contains(au[0].Reason, "36 measured steps, an AU against 90% needs 100") {
		t.Errorf("AU expectations %+v over %d steps; want one, too short to judge over 36", au, tr.MeasuredSteps)
	}
	if !strings.Contains(out.Stderr, "Warning: au>=90%: too short to judge: 36 measured steps") {
		t.Errorf("no warning on stderr:\n%s", out.Stderr)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}
