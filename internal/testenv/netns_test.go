package testenv

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The helper process: the test binary run again inside a namespace. It
// prints the address it listens on, answers each connection with its own
// addresses, reports them to FSBENCH_NETNS_DIAL if set, and ends when its
// standard input closes (or after a minute).
const helperEnv = "FSBENCH_NETNS_HELPER"

func TestHelperProcess(t *testing.T) {
	if os.Getenv(helperEnv) != "1" {
		return
	}
	ln, err := net.Listen("tcp", os.Getenv("FSBENCH_NETNS_LISTEN"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println(ln.Addr())
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fmt.Fprintln(c, ownAddrs())
			c.Close()
		}
	}()
	if dial := os.Getenv("FSBENCH_NETNS_DIAL"); dial != "" {
		if c, err := net.DialTimeout("tcp", dial, netnsDialTimeout); err == nil {
			fmt.Fprintln(c, ownAddrs())
			c.Close()
		}
	}
	done := make(chan struct{})
	go func() { _, _ = io.Copy(io.Discard, os.Stdin); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
	}
	os.Exit(0)
}

func ownAddrs() string {
	addrs, _ := net.InterfaceAddrs()
	var s []string
	for _, a := range addrs {
		s = append(s, a.String())
	}
	return strings.Join(s, " ")
}

// helper is a helper process running in a host.
type helper struct {
	cmd   *exec.Cmd
	stdin io.Closer
	addr  string // where it listens
}

func startHelper(t *testing.T, ctx context.Context, h *Host, dial string) *helper {
	t.Helper()
	cmd := h.Command(ctx, os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"=1",
		"FSBENCH_NETNS_LISTEN="+net.JoinHostPort(h.Addr(), "0"), "FSBENCH_NETNS_DIAL="+dial)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start helper in %s: %v", h.Name(), err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("helper in %s: no address: %v", h.Name(), err)
	}
	return &helper{cmd: cmd, stdin: stdin, addr: strings.TrimSpace(line)}
}

// readFrom dials addr from the root namespace and returns the line it sends.
func readFrom(addr string) (string, error) {
	c, err := net.DialTimeout("tcp", addr, netnsDialTimeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	return bufio.NewReader(c).ReadString('\n')
}

// acceptLine accepts one connection on ln and returns the line it sends.
func acceptLine(ln *net.TCPListener) (string, error) {
	_ = ln.SetDeadline(time.Now().Add(10 * time.Second))
	c, err := ln.Accept()
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	return bufio.NewReader(c).ReadString('\n')
}

func TestNetnsHosts(t *testing.T) {
	var names []string
	var leftover *exec.Cmd
	t.Run("hosts", func(t *testing.T) {
		hs := NewHosts(t, 2)
		names = append(names, hs.bridge, hs.Host(0).Name(), hs.Host(1).Name())
		checkLayout(t, hs)
		leftover = checkTraffic(t, hs)
		checkLinkDown(t, hs, leftover)
	})
	if t.Failed() || len(names) == 0 {
		return
	}
	checkGone(t, names)
	if leftover == nil {
		t.Fatal("no helper process was started")
	}
	waited := make(chan error, 1)
	go func() { waited <- leftover.Wait() }()
	select {
	case err := <-waited:
		if err == nil {
			t.Error("helper left running at the end of the test exited by itself, want it killed")
		}
	case <-time.After(10 * time.Second):
		t.Error("helper left running at the end of the test still runs 10 s later")
	}
}

func checkLayout(t *testing.T, hs *Hosts) {
	prefix := netip.MustParsePrefix(hs.Subnet())
	gw := netip.MustParseAddr(hs.GatewayAddr())
	if !prefix.Contains(gw) || hs.Len() != 2 || len(hs.All()) != 2 {
		t.Fatalf("gateway %s, subnet %s, %d hosts", gw, prefix, hs.Len())
	}
	seen := map[string]bool{gw.String(): true}
	for _, h := range hs.All() {
		a := netip.MustParseAddr(h.Addr())
		if !prefix.Contains(a) || seen[h.Addr()] {
			t.Errorf("host %s: address %s not in %s or used twice", h.Name(), a, prefix)
		}
		seen[h.Addr()] = true
		if len(h.Name()) > 15 || !strings.HasPrefix(h.Name(), netnsPrefix) {
			t.Errorf("host name %q", h.Name())
		}
		out, err := h.Command(context.Background(), "ip", "-4", "route", "show").Output()
		if err != nil || strings.Contains(string(out), "default") {
			t.Errorf("routes in %s: %v\n%s", h.Name(), err, out)
		}
	}
}

// checkTraffic runs a helper in each host and checks both directions with
// it; it returns the helper of host 1, left running for teardown to kill.
func checkTraffic(t *testing.T, hs *Hosts) *exec.Cmd {
	ln, err := net.Listen("tcp", net.JoinHostPort(hs.GatewayAddr(), strconv.Itoa(FreePort(t))))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var cmd *exec.Cmd
	for i, h := range hs.All() {
		hp := startHelper(t, context.Background(), h, ln.Addr().String())
		got, err := acceptLine(ln.(*net.TCPListener))
		if err != nil || !hasAddr(got, h.Addr()) || hasAddr(got, hs.GatewayAddr()) {
			t.Errorf("host %s to root: %q, %v", h.Name(), got, err)
		}
		got, err = readFrom(hp.addr)
		if err != nil || !hasAddr(got, h.Addr()) {
			t.Errorf("root to host %s: %q, %v", h.Name(), got, err)
		}
		if i == 0 {
			t.Cleanup(func() { hp.stdin.Close(); _ = hp.cmd.Wait() })
		} else {
			cmd = hp.cmd
		}
	}
	return cmd
}

func hasAddr(line, addr string) bool {
	return slices.ContainsFunc(strings.Fields(line), func(f string) bool {
		return strings.HasPrefix(f, addr+"/")
	})
}

// checkLinkDown cuts host 0 off and joins it again; host 1, whose helper
// runs, stays reachable all along.
func checkLinkDown(t *testing.T, hs *Hosts, h1helper *exec.Cmd) {
	h0 := hs.Host(0)
	in, err := h0.Listen("tcp", net.JoinHostPort(h0.Addr(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if err := h0.LinkDown(); err != nil {
		t.Fatal(err)
	}
	_, err = net.DialTimeout("tcp", in.Addr().String(), netnsDialTimeout)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("dial host %s with its link down: %v, want a timeout", h0.Name(), err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), netnsDialTimeout)
	defer cancel()
	if c, err := h0.DialContext(ctx, "tcp", net.JoinHostPort(hs.GatewayAddr(), "9")); err == nil {
		c.Close()
		t.Errorf("host %s with its link down reached the gateway", h0.Name())
	}
	if err := hs.Host(1).checkFromRoot(); err != nil {
		t.Errorf("host 1 while host 0 is cut off: %v", err)
	}
	if err := h0.LinkUp(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return h0.checkFromRoot() == nil }) {
		t.Errorf("host %s unreachable after LinkUp: %v", h0.Name(), h0.checkFromRoot())
	}
}

func (h *Host) checkFromRoot() error {
	return h.hs.checkHost(context.Background(), h)
}

// checkGone asserts that no namespace or interface of the names is left.
func checkGone(t *testing.T, names []string) {
	ns, err := exec.Command("ip", "netns", "list").Output()
	if err != nil {
		t.Fatal(err)
	}
	links, err := exec.Command("ip", "-o", "link", "show").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names {
		if slices.Contains(strings.Fields(string(ns)), name) {
			t.Errorf("namespace %s left after the test", name)
		}
		if slices.Contains(strings.Fields(linkNames(string(links))), name) {
			t.Errorf("interface %s left after the test", name)
		}
	}
}

// TestNetnsCleanupStale makes leftovers in the name of a process that has
// ended and of this one, and things of other names; CleanupStale must
// remove the first only.
func TestNetnsCleanupStale(t *testing.T) {
	RequireRoot(t)
	if _, err := LookPath("ip"); err != nil {
		Unavailable(t, "the ip command (iproute2) is not installed")
	}
	dead := exec.Command(os.Args[0], "-test.run=^$")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	deadTok := nameToken(dead.Process.Pid, 7)
	liveTok := nameToken(os.Getpid(), 36*36-1)
	stale := []string{bridgeName(deadTok), hostName(deadTok, 0)}
	kept := []string{bridgeName(liveTok), hostName(liveTok, 0), netnsPrefix + "other"}
	for _, name := range append(slices.Clone(stale), kept...) {
		makeLeftover(t, name)
	}
	if err := CleanupStale(context.Background()); err != nil {
		t.Fatal(err)
	}
	checkGone(t, stale)
	ns, _ := exec.Command("ip", "netns", "list").Output()
	for _, name := range kept {
		if !linkExists(context.Background(), "ip", name) {
			t.Errorf("CleanupStale removed interface %s", name)
		}
		if name != bridgeName(liveTok) && !slices.Contains(strings.Fields(string(ns)), name) {
			t.Errorf("CleanupStale removed namespace %s", name)
		}
	}
}

// makeLeftover makes a bridge, or a namespace and a veth, of the name as
// NewHosts would, and removes them when the test ends.
func makeLeftover(t *testing.T, name string) {
	ctx := context.Background()
	if strings.HasSuffix(name, "-br") {
		mustIP(t, "link", "add", name, "type", "bridge")
		t.Cleanup(func() { _ = delLink("ip", name) })
		return
	}
	mustIP(t, "netns", "add", name)
	t.Cleanup(func() { _ = delNetns("ip", name) })
	mustIP(t, "link", "add", name, "type", "veth", "peer", "name", "eth0", "netns", name)
	t.Cleanup(func() { _ = delLink("ip", name) })
	if !linkExists(ctx, "ip", name) {
		t.Fatalf("veth %s not made", name)
	}
}

func mustIP(t *testing.T, args ...string) {
	t.Helper()
	if _, err := runIP(context.Background(), "ip", args...); err != nil {
		t.Fatal(err)
	}
}

func TestNetnsNames(t *testing.T) {
	tok := nameToken(4194304, 36*36-1) // the largest pid and counter
	for _, name := range []string{bridgeName(tok), hostName(tok, MaxHosts-1)} {
		if len(name) > 15 {
			t.Errorf("%q has %d characters, more than an interface name may", name, len(name))
		}
		if pid, ok := ownerPid(name); !ok || pid != 4194304 {
			t.Errorf("ownerPid(%q) = %d, %v", name, pid, ok)
		}
	}
	if bridgeName(tok) == hostName(tok, MaxHosts-1) {
		t.Error("bridge and host have the same name")
	}
	for _, name := range []string{"eth0", "fsbt", "fsbtother", "fsbt12-3-br0", "xfsbt12-3-br", "fsbt12-3-4-5"} {
		if _, ok := ownerPid(name); ok {
			t.Errorf("ownerPid(%q) claims a name NewHosts does not make", name)
		}
	}
}

func TestNetnsSubnet(t *testing.T) {
	pp := netip.MustParsePrefix
	used := []netip.Prefix{pp("0.0.0.0/0"), pp("10.254.5.0/24"), pp("10.254.6.7/32"), pp("192.0.2.0/24")}
	got, err := chooseSubnet(used, 3) // starts at 10.254.4.0
	if err != nil || got != pp("10.254.4.0/24") {
		t.Errorf("chooseSubnet = %v, %v; want 10.254.4.0/24", got, err)
	}
	got, err = chooseSubnet(used, 4) // 5 and 6 are taken
	if err != nil || got != pp("10.254.7.0/24") {
		t.Errorf("chooseSubnet = %v, %v; want 10.254.7.0/24", got, err)
	}
	got, err = chooseSubnet([]netip.Prefix{pp("10.0.0.0/8")}, 0)
	if err != nil || got != pp("192.168.254.0/24") {
		t.Errorf("chooseSubnet with 10/8 routed = %v, %v; want 192.168.254.0/24", got, err)
	}
	if got, err = chooseSubnet([]netip.Prefix{pp("10.0.0.0/8"), pp("192.168.0.0/16")}, 0); err == nil {
		t.Errorf("chooseSubnet with all taken = %v, want an error", got)
	}
	for line, want := range map[string]string{
		"default via 192.0.2.1 dev eth0":                               "",
		"10.254.3.0/24 dev br0 proto kernel scope link src 10.254.3.1": "10.254.3.0/24",
		"local 10.254.3.1 dev br0 table local proto kernel":            "10.254.3.1/32",
		"broadcast 10.254.3.255 dev br0 table local":                   "10.254.3.255/32",
	} {
		p, ok := routeDst(line)
		if (want == "") == ok || (ok && p.String() != want) {
			t.Errorf("routeDst(%q) = %v, %v; want %q", line, p, ok, want)
		}
	}
}
