package testenv

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Every bridge, veth and namespace made by NewHosts is named
// netnsPrefix + pid + "-" + counter + "-" + (index | "br"), the numbers in
// base 36, so that CleanupStale can tell which process made it. With
// Linux's largest pid (4194304, "2hwhs") and the largest counter and index
// the name has 15 characters, the most an interface name may have.
const netnsPrefix = "fsbt"

// netnsName matches exactly the names NewHosts makes; the group is the pid.
var netnsName = regexp.MustCompile(`^` + netnsPrefix + `([0-9a-z]{1,5})-[0-9a-z]{1,2}-(br|[0-9a-z]{1,2})$`)

var netnsCounter atomic.Int64

const (
	netnsIPTimeout   = 10 * time.Second // per ip command
	netnsLockTimeout = 60 * time.Second
	netnsLockFile    = "fsbench-testenv-netns.lock"
)

// errNotPermitted marks an ip command the kernel refused.
var errNotPermitted = errors.New("operation not permitted")

func nextNetnsCounter() int64 { return netnsCounter.Add(1) % (36 * 36) }

func nameToken(pid int, counter int64) string {
	return strconv.FormatInt(int64(pid), 36) + "-" + strconv.FormatInt(counter, 36)
}

func bridgeName(token string) string { return netnsPrefix + token + "-br" }

func hostName(token string, i int) string {
	return netnsPrefix + token + "-" + strconv.FormatInt(int64(i), 36)
}

// hostAddr is the address of host i: the gateway has .1, the hosts .2 on.
func hostAddr(p netip.Prefix, i int) netip.Addr {
	a := p.Addr().As4()
	a[3] = byte(i + 2)
	return netip.AddrFrom4(a)
}

// ownerPid returns the pid encoded in a name NewHosts made.
func ownerPid(name string) (int, bool) {
	m := netnsName.FindStringSubmatch(name)
	if m == nil {
		return 0, false
	}
	pid, err := strconv.ParseInt(m[1], 36, 32)
	return int(pid), err == nil && pid > 0
}

// chooseSubnet returns a /24 of 10.254.0.0/16, or else 192.168.254.0/24,
// that overlaps none of the used prefixes (default routes aside). The
// search starts at a place given by seed, to spread test processes.
func chooseSubnet(used []netip.Prefix, seed int) (netip.Prefix, error) {
	for k := 0; k < 254; k++ {
		x := (seed+k)%254 + 1
		p := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 254, byte(x), 0}), 24)
		if subnetFree(p, used) {
			return p, nil
		}
	}
	p := netip.MustParsePrefix("192.168.254.0/24")
	if subnetFree(p, used) {
		return p, nil
	}
	return netip.Prefix{}, errors.New("no free test subnet in 10.254.0.0/16 or 192.168.254.0/24")
}

func subnetFree(p netip.Prefix, used []netip.Prefix) bool {
	for _, u := range used {
		if u.Bits() > 0 && u.Overlaps(p) {
			return false
		}
	}
	return true
}

// usedPrefixes lists the IPv4 networks of the machine's addresses and routes.
func usedPrefixes(ctx context.Context, ip string) ([]netip.Prefix, error) {
	addrs, err := runIP(ctx, ip, "-o", "-4", "addr", "show")
	if err != nil {
		return nil, err
	}
	routes, err := runIP(ctx, ip, "-4", "route", "show", "table", "all")
	if err != nil {
		return nil, err
	}
	var used []netip.Prefix
	for _, line := range strings.Split(addrs, "\n") {
		f := strings.Fields(line)
		if len(f) >= 4 && f[2] == "inet" {
			if p, err := netip.ParsePrefix(f[3]); err == nil {
				used = append(used, p.Masked())
			}
		}
	}
	for _, line := range strings.Split(routes, "\n") {
		if p, ok := routeDst(line); ok {
			used = append(used, p)
		}
	}
	return used, nil
}

// routeTypes are the words "ip route" may print before a destination.
var routeTypes = map[string]bool{"unicast": true, "local": true, "broadcast": true,
	"multicast": true, "anycast": true, "blackhole": true, "unreachable": true,
	"prohibit": true, "throw": true, "nat": true}

// routeDst parses the destination of one line of "ip route show".
func routeDst(line string) (netip.Prefix, bool) {
	f := strings.Fields(line)
	if len(f) > 1 && routeTypes[f[0]] {
		f = f[1:]
	}
	if len(f) == 0 || f[0] == "default" {
		return netip.Prefix{}, false
	}
	if !strings.Contains(f[0], "/") {
		f[0] += "/32"
	}
	p, err := netip.ParsePrefix(f[0])
	return p.Masked(), err == nil
}

// CleanupStale removes the bridges, veths and namespaces NewHosts made in a
// test process that has ended without removing them (it was killed, say),
// with every process still running in those namespaces. It touches only
// names of NewHosts' own form whose process is gone.
func CleanupStale(ctx context.Context) error {
	ip, err := LookPath("ip")
	if err != nil {
		return fmt.Errorf("clean up test hosts: ip command: %w", err)
	}
	var errs []error
	out, err := runIP(ctx, ip, "netns", "list")
	if err != nil {
		return err
	}
	for _, name := range staleNames(out) {
		if err := killNetnsPids(ctx, ip, name); err != nil {
			errs = append(errs, err)
		}
		errs = append(errs, delNetns(ip, name))
	}
	if out, err = runIP(ctx, ip, "-o", "link", "show"); err != nil {
		return err
	}
	for _, name := range staleNames(linkNames(out)) {
		errs = append(errs, delLink(ip, name))
	}
	return errors.Join(errs...)
}

// staleNames returns the first word of each line if it is a name NewHosts
// made in a process that no longer runs.
func staleNames(list string) []string {
	var names []string
	for _, line := range strings.Split(list, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if pid, ok := ownerPid(f[0]); ok && !processAlive(pid) {
			names = append(names, f[0])
		}
	}
	return names
}

// linkNames turns "ip -o link show" into one interface name a line.
func linkNames(out string) string {
	var b strings.Builder
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimSuffix(f[1], ":"), "@")
		b.WriteString(name + "\n")
	}
	return b.String()
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// killNetnsPids kills every process in the namespace and waits (a few
// seconds at most) until none is left.
func killNetnsPids(ctx context.Context, ip, ns string) error {
	for range 50 {
		out, err := runIP(ctx, ip, "netns", "pids", ns)
		if err != nil || strings.TrimSpace(out) == "" {
			return nil // a namespace that is gone has no processes
		}
		for _, f := range strings.Fields(out) {
			if pid, err := strconv.Atoi(f); err == nil && pid > 1 && pid != os.Getpid() {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	return fmt.Errorf("processes in namespace %s survive SIGKILL", ns)
}

// delLink deletes an interface; one already gone (a veth goes with its
// peer's namespace) is no error.
func delLink(ip, name string) error {
	ctx := context.Background()
	_, err := runIP(ctx, ip, "link", "del", name)
	if err != nil && !linkExists(ctx, ip, name) {
		return nil
	}
	return err
}

func linkExists(ctx context.Context, ip, name string) bool {
	_, err := runIP(ctx, ip, "link", "show", "dev", name)
	return err == nil
}

func delNetns(ip, name string) error {
	_, err := runIP(context.Background(), ip, "netns", "del", name)
	if err != nil {
		if _, serr := os.Stat(filepath.Join("/run/netns", name)); os.IsNotExist(serr) {
			return nil
		}
	}
	return err
}

// runIP runs the ip command and returns its output; its error carries the
// arguments and what ip printed.
func runIP(ctx context.Context, ip string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, netnsIPTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, ip, args...).CombinedOutput()
	if err == nil {
		return string(out), nil
	}
	msg := strings.TrimSpace(string(out))
	err = fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, msg)
	if strings.Contains(msg, "Operation not permitted") {
		err = fmt.Errorf("%w: %w", errNotPermitted, err)
	}
	return "", err
}

// lockNetns takes a machine-wide lock, waiting a bounded time for it.
func lockNetns() (unlock func(), err error) {
	path := filepath.Join(os.TempDir(), netnsLockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	deadline := time.Now().Add(netnsLockTimeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) || time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// inNetns runs fn on an OS thread that has entered the namespace ns, so
// that the sockets fn opens belong to ns. The thread is given back to the
// Go runtime only if it could return to its own namespace; otherwise it
// ends with its goroutine.
func inNetns(ns string, fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		restored, err := enterNetns(ns, fn)
		if restored {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

func enterNetns(ns string, fn func() error) (restored bool, err error) {
	self, err := os.Open(fmt.Sprintf("/proc/self/task/%d/ns/net", unix.Gettid()))
	if err != nil {
		return true, fmt.Errorf("namespace %s: %w", ns, err)
	}
	defer self.Close()
	target, err := os.Open(filepath.Join("/run/netns", ns))
	if err != nil {
		return true, fmt.Errorf("namespace %s: %w", ns, err)
	}
	defer target.Close()
	if err := unix.Setns(int(target.Fd()), unix.CLONE_NEWNET); err != nil {
		return true, fmt.Errorf("enter namespace %s: %w", ns, err)
	}
	ferr := fn()
	if err := unix.Setns(int(self.Fd()), unix.CLONE_NEWNET); err != nil {
		return false, fmt.Errorf("leave namespace %s: %w", ns, err)
	}
	return true, ferr
}
