package cluster_test

// The rendezvous of launched ranks met with hostile or stale directories,
// mismatched world sizes and ranks that do not answer: every rank ends,
// non-zero, with one line saying why, and takes no token it should not.

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/launch"
	"github.com/fsbench/fsbench/internal/testenv"
)

// errLine is the last line of a rank's stderr, its error.
func errLine(p *rankProc) string {
	lines := strings.Split(strings.TrimSpace(p.err.String()), "\n")
	return lines[len(lines)-1]
}

// TestLaunchedRendezvousOfAnotherUser: in a directory every user may
// write to, nobody makes the rendezvous root's run will use, with a token
// of its choosing. Root's rank 1 refuses it at once, naming it and its
// owner, and neither joins nor serves an agent (it would wait for the
// hour of its timeout otherwise).
func TestLaunchedRendezvousOfAnotherUser(t *testing.T) {
	testenv.NeedsServer(t, "launched ranks")
	testenv.RequireRoot(t)
	root := t.TempDir()
	// As /tmp or a shared scratch directory: nobody reaches it and
	// writes in it.
	for _, d := range []string{filepath.Dir(root), root} {
		if err := os.Chmod(d, 0o1777); err != nil {
			t.Fatal(err)
		}
	}
	rv := filepath.Join(root, ".fsbench-rendezvous-slurm-7010.0")
	plant := exec.Command("sh", "-c", `umask 077 && mkdir "$1" && printf '{"token":"chosen","size":2}' >"$1/token" && echo 0 >"$1/beat"`, "sh", rv)
	plant.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	if out, err := plant.CombinedOutput(); err != nil {
		t.Fatalf("as nobody: %v: %s", err, out)
	}
	// Were it taken, the beat would be made to change, as rank 0 does.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			_ = os.WriteFile(filepath.Join(rv, "beat"), []byte(strings.Repeat("1", i%9+1)), 0o600)
		}
	}()
	ps := startRanks(t, nil, "7010", []int{1}, 2, append([]string{"bench", root, "--rendezvous-timeout", "1h"}, smallBench...)...)
	waitRanks(t, ps, 2*time.Minute)
	if line := errLine(ps[0]); ps[0].code != 1 || !strings.Contains(line, rv+": owner uid 65534") || !strings.Contains(line, "refused") {
		t.Errorf("rank 1: exit %d, %q; want 1 and a refusal naming the owner:\n%s", ps[0].code, line, ps[0].err.String())
	}
	if m, _ := filepath.Glob(filepath.Join(rv, "rank-*")); len(m) != 0 {
		t.Errorf("rank 1 joined the rendezvous of another user: %v", m)
	}
}

// TestLaunchedStaleRendezvous: a run's rank 0 is killed while it waits;
// its rendezvous stays. The next run with the same id fails on every
// rank with the command that removes it, and its rank 1 does not take
// the old token. Once it is removed, the run goes.
func TestLaunchedStaleRendezvous(t *testing.T) {
	testenv.NeedsServer(t, "launched ranks")
	root := t.TempDir()
	rv := filepath.Join(root, ".fsbench-rendezvous-slurm-7011.0")
	old := startRanks(t, nil, "7011", []int{0}, 2, "bench", root, "--rendezvous-timeout", "1h")
	waitFor(t, 2*time.Minute, func() bool {
		_, err := os.Stat(filepath.Join(rv, "token"))
		return err == nil
	})
	_ = old[0].cmd.Process.Kill()
	waitRanks(t, old, 2*time.Minute)

	args := append([]string{"bench", root, "--rendezvous-timeout", "3s"}, smallBench...)
	ps := startRanks(t, nil, "7011", []int{0, 1}, 2, args...)
	waitRanks(t, ps, 2*time.Minute)
	for i, want := range []string{"is already there", "is stale"} {
		if line := errLine(ps[i]); ps[i].code != 1 || !strings.Contains(line, want) || !strings.Contains(line, "rm -rf "+rv) {
			t.Errorf("rank %d: exit %d, %q; want 1, %q and rm -rf %s", i, ps[i].code, line, want, rv)
		}
	}
	if m, _ := filepath.Glob(filepath.Join(rv, "rank-*")); len(m) != 0 {
		t.Errorf("rank 1 joined the stale rendezvous: %v", m)
	}
	if err := os.RemoveAll(rv); err != nil {
		t.Fatal(err)
	}
	ps = startRanks(t, nil, "7011", []int{0, 1}, 2, append([]string{"bench", root}, smallBench...)...)
	waitRanks(t, ps, 3*time.Minute)
	for i, p := range ps {
		if p.code != 0 {
			t.Errorf("rank %d after rm -rf: exit %d:\n%s", i, p.code, p.err.String())
		}
	}
}

// TestLaunchedWorldSizeMismatch: rank 0 is told 2 ranks, the others 3,
// and the other way round: every rank fails, saying so.
func TestLaunchedWorldSizeMismatch(t *testing.T) {
	testenv.NeedsServer(t, "launched ranks")
	for _, c := range []struct {
		job          string
		size0, other int
	}{{"7012", 2, 3}, {"7013", 3, 2}} {
		root := t.TempDir()
		args := append([]string{"bench", root, "--rendezvous-timeout", "5m"}, smallBench...)
		ps := startRanks(t, nil, c.job, []int{0}, c.size0, args...)
		var ranks []int
		for i := 1; i < c.other; i++ {
			ranks = append(ranks, i)
		}
		ps = append(ps, startRanks(t, nil, c.job, ranks, c.other, args...)...)
		waitRanks(t, ps, 3*time.Minute) // each would wait 5m or run
		for i, p := range ps {
			if line := errLine(p); p.code != 1 || !strings.Contains(line, "world size mismatch") {
				t.Errorf("%d ranks on rank 0, %d on the others: rank %d: exit %d, %q", c.size0, c.other, i, p.code, line)
			}
		}
		if l := left(t, root); len(l) != 0 {
			t.Errorf("left behind: %v", l)
		}
	}
}

// TestLaunchedRankSilent: rank 1 joins, but its agent accepts
// connections and never answers, at each of many addresses. Rank 0 does
// not try them one after the other for minutes: it gives up within its
// bound, naming rank 1, and exits 1.
func TestLaunchedRankSilent(t *testing.T) {
	testenv.NeedsServer(t, "launched ranks")
	root := t.TempDir()
	ln, err := net.Listen("tcp", "127.0.0.1:0") // never accepts
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ps := startRanks(t, nil, "7014", []int{0}, 2, append([]string{"bench", root, "--rendezvous-timeout", "5m"}, smallBench...)...)
	r1 := &launch.Rendezvous{Path: filepath.Join(root, ".fsbench-rendezvous-slurm-7014.0"), Rank: 1, Size: 2}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := r1.Join(ctx, 2*time.Minute); err != nil {
		t.Fatal(err)
	}
	addrs := make([]string, 200) // 3s each would be 10 minutes
	for i := range addrs {
		addrs[i] = ln.Addr().String()
	}
	if err := r1.Register(launch.Member{Rank: 1, Addrs: addrs, ID: "silent", Host: "h1"}); err != nil {
		t.Fatal(err)
	}
	r1.Close()
	waitRanks(t, ps, 3*time.Minute)
	if line := errLine(ps[0]); ps[0].code != 1 || !strings.Contains(line, "rank 1 (host h1) is not reachable") {
		t.Errorf("rank 0: exit %d, %q; want 1, rank 1 not reachable", ps[0].code, line)
	}
}

// TestLaunchedStorageStalls: the storage of the rendezvous stops
// answering (its FUSE daemon frozen, as a server or a disk minutes
// behind looks to the ranks) while rank 0 waits for a rank that never
// comes. Rank 0 ends all the same once its timeout and the removal's
// grace are past, while the storage is still frozen: it names the rank
// that did not join and the rendezvous it could not remove.
func TestLaunchedStorageStalls(t *testing.T) {
	testenv.NeedsServer(t, "launched ranks")
	back := t.TempDir()
	mnt := testenv.Bindfs(t, back)
	daemon := bindfsDaemon(t, mnt)
	ps := startRanks(t, nil, "7015", []int{0}, 2, append([]string{"bench", mnt, "--rendezvous-timeout", "5s"}, smallBench...)...)
	waitFor(t, time.Minute, func() bool {
		_, err := os.Stat(filepath.Join(back, ".fsbench-rendezvous-slurm-7015.0", "token"))
		return err == nil
	})
	stallStorage(t, daemon, ps[0].cmd.Process.Pid)
	waitRanks(t, ps, 2*time.Minute) // a hang guard only: 24 times the timeout
	rv := filepath.Join(mnt, ".fsbench-rendezvous-slurm-7015.0")
	if line := errLine(ps[0]); ps[0].code != 1 || !strings.Contains(line, "rank 1 of 2 did not join within 5s") {
		t.Errorf("rank 0: exit %d, %q; want 1, rank 1 not joined", ps[0].code, line)
	}
	if e := ps[0].err.String(); !strings.Contains(e, "removing it did not end") || !strings.Contains(e, "rm -rf "+rv) {
		t.Errorf("rank 0 does not say the rendezvous is left behind:\n%s", e)
	}
}

// stallStorage freezes the FUSE daemon (SIGSTOP) between two requests of
// process pid, until the test ends: pid is stopped first, the daemon
// answers what pid asked until it waits for more, and then it is
// stopped and pid let go. Each request pid makes then waits for an
// answer in the kernel's queue, where a signal can end it, as it would
// for storage that stopped answering; none was taken by the daemon and
// left unanswered, which not even SIGKILL ends.
func stallStorage(t *testing.T, daemon, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, func() bool { return allThreads(pid, func(th thread) bool { return th.state == "T" }) })
	stopDaemon(t, daemon)
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
}

// stopDaemon stops the FUSE daemon (SIGSTOP) once every thread of it
// waits for the next request, until the test ends: a request made of its
// mount then waits in the kernel's queue, where a signal can end it.
func stopDaemon(t *testing.T, daemon int) {
	t.Helper()
	waitFor(t, time.Minute, func() bool { return allThreads(daemon, func(th thread) bool { return th.wchan == "fuse_dev_do_read" }) })
	if err := syscall.Kill(daemon, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(daemon, syscall.SIGCONT) }) // before the unmount
	// Stopped, not only signalled: a thread woken by the signal in its
	// read of the next request would otherwise take one.
	waitFor(t, time.Minute, func() bool { return allThreads(daemon, func(th thread) bool { return th.state == "T" }) })
}

// allThreads tells whether ok holds for every thread of process pid.
func allThreads(pid int, ok func(th thread) bool) bool {
	ts := threadsOf(pid)
	for _, th := range ts {
		if !ok(th) {
			return false
		}
	}
	return len(ts) > 0
}

// bindfsDaemon is the process of the bindfs mount on mnt.
func bindfsDaemon(t *testing.T, mnt string) int {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		b, _ := os.ReadFile(p)
		args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
		if filepath.Base(args[0]) == "bindfs" && args[len(args)-1] == mnt {
			pid, _ := strconv.Atoi(filepath.Base(filepath.Dir(p)))
			return pid
		}
	}
	t.Fatalf("no bindfs process serves %s", mnt)
	return 0
}
