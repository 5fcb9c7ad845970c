package cluster_test

// Runs on real test hosts: network namespaces made by the test, each with
// its own address on a bridge, running a real `fsbench agent`; the
// coordinator runs outside, as on a machine of its own.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
)

// nsAgents starts an agent in each of n test hosts, all serving root (a
// tmpfs the test mounts, seen by every namespace).
func nsAgents(t *testing.T, n int, extra ...string) (*testenv.Hosts, []*agent, string) {
	t.Helper()
	hosts := testenv.NewHosts(t, n)
	root := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512m", "fsbench-test", root).CombinedOutput(); err != nil {
		testenv.Unavailable(t, "mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", root).Run() })
	return hosts, nsAgentsOn(t, hosts, root, nil, extra...), root
}

// nsAgentsOn starts an agent in each of the test hosts, serving root,
// with env added to its environment.
func nsAgentsOn(t *testing.T, hosts *testenv.Hosts, root string, env []string, extra ...string) []*agent {
	t.Helper()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(testToken), 0o600); err != nil {
		t.Fatal(err)
	}
	var agents []*agent
	for _, h := range hosts.All() {
		addr := net.JoinHostPort(h.Addr(), "7781")
		args := append([]string{"agent", "--listen", addr, "--token-file", tok, "--allow-root", root}, extra...)
		cmd := h.Command(context.Background(), testenv.Binary(t), args...)
		cmd.Env = append(os.Environ(), env...)
		a := &agent{addr: addr, cmd: cmd, log: &bytes.Buffer{}}
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		started := make(chan struct{})
		go func() {
			sc := bufio.NewScanner(stderr)
			for sc.Scan() {
				if strings.Contains(sc.Text(), "serving") {
					close(started)
				}
				a.log.WriteString(sc.Text() + "\n")
			}
		}()
		select {
		case <-started:
		case <-time.After(20 * time.Second):
			t.Fatalf("agent on %s did not start", h.Name())
		}
		agents = append(agents, a)
	}
	return agents
}

func TestNetnsThreeHosts(t *testing.T) {
	_, agents, root := nsAgents(t, 3)
	out := coordinator(t, context.Background(), "bench", root, "-p", "2", "--big-file-size", "16M", "--small-file-count", "20",
		"--small-file-size", "16K", "--hosts", hostsFlag(agents...), "--read-others", "--verify", "-o", "json")
	r := resultOf(t, out)
	for _, p := range r.Phases {
		var sum int64
		for _, h := range p.Hosts {
			sum += h.Ops
		}
		h, _ := p.LatencyHistogram()
		want := int64(3 * 2 * 20)
		if strings.HasSuffix(p.Name, "-big") {
			want = 3 * 2 * 16
		}
		if p.Ops != want || sum != want || h == nil || h.Count() != want || p.Errors != 0 {
			t.Errorf("%s: %d ops, hosts add to %d, histogram %v, errors %d; want %d", p.Name, p.Ops, sum, h, p.Errors, want)
		}
	}
	for i, a := range agents {
		if r.Hosts[i].Address != a.addr {
			t.Errorf("host %d is %s, want %s", i, r.Hosts[i].Address, a.addr)
		}
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// kill -9 of one agent, and a cut link of another, mid-phase: each is
// named within 10 s, the others stop and clean up, the coordinator exits 1.
func TestNetnsHostFailures(t *testing.T) {
	for _, how := range []string{"kill", "link down"} {
		t.Run(how, func(t *testing.T) {
			hosts, agents, root := nsAgents(t, 3, "--orphan-after", "5s")
			victim := agents[1]
			go func() {
				waitFor(t, time.Minute, func() bool { return writing(root, 0) && writing(root, 1) && writing(root, 2) })
				if how == "kill" {
					_ = victim.cmd.Process.Signal(syscall.SIGKILL)
				} else {
					_ = hosts.Host(1).LinkDown()
				}
			}()
			out := coordinator(t, context.Background(), "bench", root, "--rw", "write", "--file-size", "4M", "--xfer-size", "64K",
				"--duration", "120s", "--hosts", hostsFlag(agents...))
			if out.Code != 1 || !strings.Contains(out.Stderr, victim.addr) || !strings.Contains(out.Stderr, "lost") {
				t.Fatalf("exit %d, want 1 naming %s as lost:\n%s", out.Code, victim.addr, out.Stderr)
			}
			if !strings.Contains(out.Stdout, "write") {
				t.Errorf("what was measured is not shown:\n%s", out.Stdout)
			}
			// The survivors removed their files at once; the cut-off host
			// removes its own when it stops hearing the coordinator.
			wait := 10 * time.Second
			if how == "link down" {
				wait = 30 * time.Second
			}
			waitFor(t, wait, func() bool {
				dirs, _ := filepath.Glob(filepath.Join(root, "fsbench-hosts-*", "host-*"))
				return len(dirs) == 0 || how == "kill" && len(dirs) == 1 && filepath.Base(dirs[0]) == "host-1"
			})
			if out.Took > 30*time.Second {
				t.Errorf("the coordinator took %v to report the lost host", out.Took)
			}
			t.Logf("reported after %v", out.Took.Round(100*time.Millisecond))
		})
	}
}

// Refusals on real hosts: wrong token, a path outside the allowed root, an
// agent of another protocol; then Ctrl-C of a running coordinator.
func TestNetnsRefusalsAndInterrupt(t *testing.T) {
	hosts, agents, root := nsAgents(t, 2)
	other := t.TempDir()
	for name, c := range map[string]struct {
		args []string
		want string
	}{
		"outside root": {[]string{"bench", other, "--hosts", hostsFlag(agents...)}, "not under an allowed root"},
		"wrong token":  {[]string{"bench", root, "--hosts", hostsFlag(agents...), "--token-file", "/dev/null"}, "token"},
	} {
		out := coordinator(t, context.Background(), append(c.args, "--big-file-size", "1M", "--small-file-count", "1")...)
		if out.Code == 0 || !strings.Contains(out.Stderr, c.want) {
			t.Errorf("%s: exit %d, want an error with %q: %s", name, out.Code, c.want, out.Stderr)
		}
	}
	old := hosts.Host(0).Command(context.Background(), testenv.Binary(t), "agent", "--listen", net.JoinHostPort(hosts.Host(0).Addr(), "7782"),
		"--allow-root", root, "--protocol", "99")
	old.Env = append(os.Environ(), "FSBENCH_TOKEN="+testToken)
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	oldAddr := net.JoinHostPort(hosts.Host(0).Addr(), "7782")
	waitFor(t, 10*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", oldAddr, time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
	out := coordinator(t, context.Background(), "bench", root, "--hosts", agents[1].addr+","+oldAddr, "--big-file-size", "1M")
	if out.Code == 0 || !strings.Contains(out.Stderr, fmt.Sprintf("%s: speaks agent protocol", oldAddr)) {
		t.Errorf("protocol mismatch: exit %d: %s", out.Code, out.Stderr)
	}
	if l := left(t, root); len(l) != 0 || len(left(t, other)) != 0 {
		t.Fatalf("a refused run wrote %v %v", l, left(t, other))
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, time.Minute, func() bool { return writing(root, 0) && writing(root, 1) })
		cancel()
	}()
	out = coordinator(t, ctx, "bench", root, "--rw", "write", "--file-size", "4M", "--xfer-size", "64K", "--duration", "60s",
		"--hosts", hostsFlag(agents...))
	if out.Code != 130 {
		t.Fatalf("Ctrl-C: exit %d: %s", out.Code, out.Stderr)
	}
	waitFor(t, 15*time.Second, func() bool { return len(left(t, root)) == 0 })
}
