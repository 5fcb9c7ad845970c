package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// MaxHosts is the most hosts one NewHosts call makes: they share one /24.
const MaxHosts = 250

// netnsDialTimeout bounds each connection attempt of the reachability check.
const netnsDialTimeout = 2 * time.Second

// Hosts is a set of test hosts: Linux network namespaces, each joined by a
// veth pair to a bridge in the root namespace. The bridge has the address
// GatewayAddr, each host one address of the same private /24, and no host
// has a route anywhere else, so traffic only flows between the root
// namespace and the hosts.
type Hosts struct {
	t      testing.TB
	ip     string // path of the ip command
	bridge string
	prefix netip.Prefix
	gw     netip.Addr
	hosts  []*Host

	mu   sync.Mutex
	cmds []*exec.Cmd
	undo []undoStep
}

type undoStep struct {
	what string
	fn   func() error
}

// Host is one test host: a network namespace with one address.
type Host struct {
	hs   *Hosts
	name string // namespace name, also the name of the bridge-side veth
	addr netip.Addr
}

// NewHosts makes n test hosts (1 to MaxHosts) and removes them, with every
// process started in them by Host.Command, when t ends, even if it fails or
// panics. It needs root and the ip command (iproute2); without them the
// test is Unavailable. Before it starts it removes what an earlier test
// process that died left behind (see CleanupStale), and before it returns it
// checks that every host and the root namespace reach each other over TCP.
func NewHosts(t testing.TB, n int) *Hosts {
	t.Helper()
	NeedsServer(t, "network namespaces with fsbench agents")
	if n < 1 || n > MaxHosts {
		t.Fatalf("NewHosts: %d hosts, want 1 to %d", n, MaxHosts)
	}
	RequireRoot(t)
	ip, err := LookPath("ip")
	if err != nil {
		Unavailable(t, "the ip command (iproute2) is not installed")
	}
	ctx := context.Background()
	if err := CleanupStale(ctx); err != nil {
		t.Logf("NewHosts: %v", err)
	}
	hs := &Hosts{t: t, ip: ip}
	t.Cleanup(hs.teardown)
	if err := hs.setup(ctx, n); err != nil {
		if errors.Is(err, errNotPermitted) {
			Unavailable(t, "cannot create network devices here: %v", err)
		}
		t.Fatalf("NewHosts: %v", err)
	}
	if err := hs.checkReachable(ctx); err != nil {
		t.Fatalf("NewHosts: %v", err)
	}
	return hs
}

// GatewayAddr is the root namespace's address on the hosts' network: a
// server listening on it (or on all addresses) is reachable from every host.
func (hs *Hosts) GatewayAddr() string { return hs.gw.String() }

// Subnet is the private network of the hosts and the gateway, such as
// "10.254.7.0/24".
func (hs *Hosts) Subnet() string { return hs.prefix.String() }

// Len is the number of hosts.
func (hs *Hosts) Len() int { return len(hs.hosts) }

// Host returns host i, 0 <= i < Len().
func (hs *Hosts) Host(i int) *Host { return hs.hosts[i] }

// All returns the hosts in order.
func (hs *Hosts) All() []*Host { return append([]*Host(nil), hs.hosts...) }

// Name is the name of the host's network namespace.
func (h *Host) Name() string { return h.name }

// Addr is the host's IPv4 address.
func (h *Host) Addr() string { return h.addr.String() }

// Command returns a command that runs name with args inside the host's
// namespace ("ip netns exec"). The process is killed when the test ends if
// it still runs then; it is also killed if the test process dies. Start
// and wait for it as for exec.CommandContext.
func (h *Host) Command(ctx context.Context, name string, args ...string) *exec.Cmd {
	argv := append([]string{"netns", "exec", h.name, name}, args...)
	cmd := exec.CommandContext(ctx, h.hs.ip, argv...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	h.hs.mu.Lock()
	h.hs.cmds = append(h.hs.cmds, cmd)
	h.hs.mu.Unlock()
	return cmd
}

// Listen announces on the local network address inside the host's
// namespace, as net.Listen does in the root namespace.
func (h *Host) Listen(network, address string) (net.Listener, error) {
	var ln net.Listener
	err := inNetns(h.name, func() (err error) {
		ln, err = net.Listen(network, address)
		return err
	})
	return ln, err
}

// DialContext connects from inside the host's namespace, as
// net.Dialer.DialContext does in the root namespace.
func (h *Host) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	var c net.Conn
	err := inNetns(h.name, func() (err error) {
		var d net.Dialer
		c, err = d.DialContext(ctx, network, address)
		return err
	})
	return c, err
}

// LinkDown cuts the host off: its veth end on the bridge goes down, so
// packets to and from the host are lost until LinkUp.
func (h *Host) LinkDown() error {
	_, err := runIP(context.Background(), h.hs.ip, "link", "set", h.name, "down")
	return err
}

// LinkUp joins the host to the network again after LinkDown.
func (h *Host) LinkUp() error {
	_, err := runIP(context.Background(), h.hs.ip, "link", "set", h.name, "up")
	return err
}

func (hs *Hosts) setup(ctx context.Context, n int) error {
	tok := nameToken(os.Getpid(), nextNetnsCounter())
	hs.bridge = bridgeName(tok)
	if err := hs.addBridge(ctx); err != nil {
		return err
	}
	for i := 0; i < n; i++ {
		h := &Host{hs: hs, name: hostName(tok, i), addr: hostAddr(hs.prefix, i)}
		hs.hosts = append(hs.hosts, h)
		if err := hs.addHost(ctx, h); err != nil {
			return err
		}
	}
	return nil
}

// addBridge picks a free subnet and puts its first address on a new bridge,
// under a lock shared by all test processes of the machine so that two of
// them cannot pick the same subnet.
func (hs *Hosts) addBridge(ctx context.Context) error {
	unlock, err := lockNetns()
	if err != nil {
		return err
	}
	defer unlock()
	used, err := usedPrefixes(ctx, hs.ip)
	if err != nil {
		return err
	}
	if hs.prefix, err = chooseSubnet(used, os.Getpid()+int(netnsCounter.Load())); err != nil {
		return err
	}
	hs.gw = hs.prefix.Addr().Next()
	if err := hs.do(ctx, "link", "add", hs.bridge, "type", "bridge"); err != nil {
		return err
	}
	hs.pushUndo("bridge "+hs.bridge, func() error { return delLink(hs.ip, hs.bridge) })
	return hs.doAll(ctx,
		[]string{"addr", "add", hs.gw.String() + "/24", "dev", hs.bridge},
		[]string{"link", "set", hs.bridge, "up"})
}

func (hs *Hosts) addHost(ctx context.Context, h *Host) error {
	if err := hs.do(ctx, "netns", "add", h.name); err != nil {
		return err
	}
	hs.pushUndo("namespace "+h.name, func() error { return delNetns(hs.ip, h.name) })
	if err := hs.do(ctx, "link", "add", h.name, "type", "veth", "peer", "name", "eth0", "netns", h.name); err != nil {
		return err
	}
	hs.pushUndo("veth "+h.name, func() error { return delLink(hs.ip, h.name) })
	return hs.doAll(ctx,
		[]string{"link", "set", h.name, "master", hs.bridge, "up"},
		[]string{"-n", h.name, "addr", "add", h.addr.String() + "/24", "dev", "eth0"},
		[]string{"-n", h.name, "link", "set", "eth0", "up"},
		[]string{"-n", h.name, "link", "set", "lo", "up"})
}

func (hs *Hosts) do(ctx context.Context, args ...string) error {
	_, err := runIP(ctx, hs.ip, args...)
	return err
}

func (hs *Hosts) doAll(ctx context.Context, cmds ...[]string) error {
	for _, args := range cmds {
		if err := hs.do(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

func (hs *Hosts) pushUndo(what string, fn func() error) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	hs.undo = append(hs.undo, undoStep{what, fn})
}

// checkReachable connects from the root namespace to a listener in every
// host and back, retrying for a few seconds while the bridge ports come up.
func (hs *Hosts) checkReachable(ctx context.Context) error {
	for _, h := range hs.hosts {
		var err error
		ok := waitFor(5*time.Second, func() bool {
			err = hs.checkHost(ctx, h)
			return err == nil
		})
		if !ok {
			return fmt.Errorf("host %s (%s) unreachable: %w", h.name, h.addr, err)
		}
	}
	return nil
}

func (hs *Hosts) checkHost(ctx context.Context, h *Host) error {
	ctx, cancel := context.WithTimeout(ctx, netnsDialTimeout)
	defer cancel()
	in, err := h.Listen("tcp", net.JoinHostPort(h.Addr(), "0"))
	if err != nil {
		return err
	}
	defer in.Close()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", in.Addr().String())
	if err != nil {
		return fmt.Errorf("root to host: %w", err)
	}
	c.Close()
	out, err := net.Listen("tcp", net.JoinHostPort(hs.GatewayAddr(), "0"))
	if err != nil {
		return err
	}
	defer out.Close()
	if c, err = h.DialContext(ctx, "tcp", out.Addr().String()); err != nil {
		return fmt.Errorf("host to root: %w", err)
	}
	return c.Close()
}

// teardown kills what runs in the hosts, then removes what setup made, in
// the reverse order.
func (hs *Hosts) teardown() {
	hs.mu.Lock()
	cmds, undo := hs.cmds, hs.undo
	hs.cmds, hs.undo = nil, nil
	hs.mu.Unlock()
	for _, cmd := range cmds {
		if cmd.Process != nil {
			_ = cmd.Process.Kill() // fails only if it has ended
		}
	}
	var errs []string
	for _, h := range hs.hosts {
		if err := killNetnsPids(context.Background(), hs.ip, h.name); err != nil {
			errs = append(errs, err.Error())
		}
	}
	for i := len(undo) - 1; i >= 0; i-- {
		if err := undo[i].fn(); err != nil {
			errs = append(errs, fmt.Sprintf("remove %s: %v", undo[i].what, err))
		}
	}
	if len(errs) > 0 {
		hs.t.Errorf("test hosts teardown: %s", strings.Join(errs, "; "))
	}
}
