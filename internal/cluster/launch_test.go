package cluster_test

// Runs started by launchers: mpirun itself, and processes given the
// variables srun sets, one per rank, in network namespaces or on this
// machine. Every process is the plain binary; nothing else is started.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// smallBench is a default bench small enough for many ranks on 2 CPUs.
var smallBench = []string{"-p", "1", "--big-file-size", "8M", "--small-file-count", "10", "--small-file-size", "16K"}

// checkHostOps checks that every phase of r ran on n hosts and counts
// exactly what smallBench does on each (8 blocks, 10 files).
func checkHostOps(t *testing.T, r *report.Result, n int) {
	t.Helper()
	want := map[string]int64{"write-big": 8, "read-big": 8, "write-small": 10, "read-small": 10, "stat": 10}
	if len(r.Hosts) != n || len(r.Phases) != 5 {
		t.Fatalf("%d hosts, %d phases; want %d hosts, 5 phases", len(r.Hosts), len(r.Phases), n)
	}
	for _, p := range r.Phases {
		if len(p.Hosts) != n || p.Ops != int64(n)*want[p.Name] || p.Errors != 0 {
			t.Errorf("%s: %d hosts, %d ops, %d errors; want %d hosts, %d ops", p.Name, len(p.Hosts), p.Ops, p.Errors, n, int64(n)*want[p.Name])
		}
	}
}

// mpirun runs the binary under Open MPI's mpirun with np ranks.
func mpirun(t *testing.T, np int, args ...string) testenv.Output {
	t.Helper()
	testenv.NeedsServer(t, "mpirun")
	mpi, err := testenv.LookPath("mpirun")
	if err != nil {
		testenv.Unavailable(t, "Open MPI's mpirun is not installed (internal/testenv/install.sh installs it)")
	}
	argv := append([]string{"--allow-run-as-root", "--oversubscribe", "-np", strconv.Itoa(np), testenv.Binary(t)}, args...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, mpi, argv...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NO_COLOR=1"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	o := testenv.Output{Stdout: out.String(), Stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		o.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestMpirunFourRanks: mpirun -np 4 fsbench bench gives one merged result
// of 4 hosts, printed once (rank 0), with another rank's data verified by
// each, and nothing left behind, the rendezvous included.
func TestMpirunFourRanks(t *testing.T) {
	root := t.TempDir()
	out := mpirun(t, 4, append([]string{"bench", root, "--read-others", "--verify", "-o", "json"}, smallBench...)...)
	r := resultOf(t, out)
	checkHostOps(t, r, 4)
	if n := strings.Count(out.Stdout, `"command"`); n != 1 {
		t.Errorf("%d results on stdout, want rank 0's alone", n)
	}
	if !strings.Contains(out.Stderr, "rank 0 of 4 (OMPI_COMM_WORLD_RANK, OMPI_COMM_WORLD_SIZE)") {
		t.Errorf("rank 0 does not say where its place comes from:\n%s", out.Stderr)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// TestMpirunCommands: a workload, train and checkpoint under mpirun, each
// one merged result of both ranks.
func TestMpirunCommands(t *testing.T) {
	cases := []struct {
		name string
		args []string
		ok   func(r *report.Result) error
	}{
		{"workload", []string{"bench", "--rw", "randwrite", "--file-size", "4M", "--xfer-size", "64K", "--ops", "40", "-p", "2"},
			func(r *report.Result) error {
				if len(r.Phases) == 0 || r.Phases[0].Ops != 2*40 || len(r.Phases[0].Hosts) != 2 {
					return fmt.Errorf("phases %d, first %d ops on %d hosts; want 80 on 2 (40 a host)", len(r.Phases), r.Phases[0].Ops, len(r.Phases[0].Hosts))
				}
				return nil
			}},
		{"train", []string{"train", "--dataset-files", "4", "--samples-per-file", "25", "--sample-size", "8K", "--batch-size", "5",
			"--compute-time", "2ms", "--epochs", "1"},
			func(r *report.Result) error {
				if r.Training == nil || r.Training.MeasuredSteps != 18 {
					return fmt.Errorf("training %+v, want 18 measured steps (2 hosts x 9)", r.Training)
				}
				return nil
			}},
		{"io500", []string{"io500", "--quick", "--mdtest-easy-files", "60", "--mdtest-hard-files", "40", "--ior-hard-segments", "20"},
			func(r *report.Result) error {
				// The first rank's process walks for both ranks, as
				// IO500's find runs on every rank, and on both ranks'
				// cores, where mpirun binds each rank to one.
				f := r.FindPhase("find")
				if f == nil {
					return errors.New("no find phase")
				}
				var cpus int
				if _, err := fmt.Sscanf(f.LatencyOf, "entries looked at by 2 walkers on %d CPUs", &cpus); err != nil || f.Items < 2*(60+40) || cpus < min(2, runtime.NumCPU()) {
					return fmt.Errorf("find: %+v", f)
				}
				if p := r.FindPhase("mdtest-hard-write"); p == nil || p.Items != 2*40 || len(p.Hosts) != 2 {
					return fmt.Errorf("mdtest-hard-write: %+v", p)
				}
				return nil
			}},
		{"checkpoint", []string{"checkpoint", "--model", "llama3-8b", "-p", "2", "--size", "32M", "--block-size", "256K"},
			func(r *report.Result) error {
				for _, p := range r.Phases {
					if p.Bytes != 32<<20 || len(p.Hosts) != 2 || p.Errors != 0 {
						return fmt.Errorf("%s: %d bytes on %d hosts, %d errors", p.Name, p.Bytes, len(p.Hosts), p.Errors)
					}
				}
				return nil
			}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			args := append([]string{c.args[0], root, "-o", "json"}, c.args[1:]...)
			r := resultOf(t, mpirun(t, 2, args...))
			if len(r.Hosts) != 2 {
				t.Errorf("%d hosts, want 2", len(r.Hosts))
			}
			if err := c.ok(r); err != nil {
				t.Error(err)
			}
			if l := left(t, root); len(l) != 0 {
				t.Errorf("left behind: %v", l)
			}
		})
	}
}

// rankProc is one rank started with a launcher's variables.
type rankProc struct {
	cmd      *exec.Cmd
	out, err bytes.Buffer
	code     int
}

// srunEnv is what srun gives task rank of size in job step 0 of job.
func srunEnv(job string, rank, size int) []string {
	return []string{"SLURM_JOB_ID=" + job, "SLURM_STEP_ID=0", "SLURM_PROCID=" + strconv.Itoa(rank),
		"SLURM_STEP_NUM_TASKS=" + strconv.Itoa(size), "SLURM_NTASKS=" + strconv.Itoa(size)}
}

// startRanks starts the given ranks of size as srun would (in hosts[i]'s
// network namespace when hosts is not nil), each with args.
func startRanks(t *testing.T, hosts *testenv.Hosts, job string, ranks []int, size int, args ...string) []*rankProc {
	t.Helper()
	var ps []*rankProc
	for _, rank := range ranks {
		var cmd *exec.Cmd
		if hosts != nil {
			cmd = hosts.Host(rank).Command(context.Background(), testenv.Binary(t), args...)
		} else {
			cmd = exec.Command(testenv.Binary(t), args...)
			cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		}
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NO_COLOR=1"}, srunEnv(job, rank, size)...)
		p := &rankProc{cmd: cmd}
		cmd.Stdout, cmd.Stderr = &p.out, &p.err
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		ps = append(ps, p)
	}
	return ps
}

// waitRanks waits for every rank to exit, within limit: a guard against
// a hang only. Past it, the ranks still running are asked for their
// goroutines (SIGQUIT), then killed; a rank that does not end even then
// (a thread the kernel holds in a request to storage that does not
// answer) is named with where the kernel holds it, and not waited for.
func waitRanks(t *testing.T, ps []*rankProc, limit time.Duration) {
	t.Helper()
	done := make([]chan struct{}, len(ps))
	for i, p := range ps {
		done[i] = make(chan struct{})
		go func() {
			defer close(done[i])
			err := p.cmd.Wait()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				p.code = ee.ExitCode()
			} else if err != nil {
				p.code = -1
			}
		}()
	}
	guard := time.After(limit)
	for i := range ps {
		select {
		case <-done[i]:
		case <-guard:
			endRanks(t, ps, done)
			t.Fatalf("the ranks did not all exit within %v", limit)
		}
	}
}

// endRanks ends the ranks still running, and logs what each said or
// where the kernel holds one that would not end.
func endRanks(t *testing.T, ps []*rankProc, done []chan struct{}) {
	t.Helper()
	for _, sig := range []syscall.Signal{syscall.SIGQUIT, syscall.SIGKILL} {
		for i, p := range ps {
			select {
			case <-done[i]:
			default:
				_ = p.cmd.Process.Signal(sig)
			}
		}
		grace := time.After(30 * time.Second)
		for i := range ps {
			select {
			case <-done[i]:
			case <-grace:
			}
		}
	}
	for i, p := range ps {
		select {
		case <-done[i]:
			t.Logf("rank process %d: exit %d\n%s", i, p.code, p.err.String())
		default:
			t.Logf("rank process %d (pid %d) did not end when killed:\n%s", i, p.cmd.Process.Pid, kernelWaits(p.cmd.Process.Pid))
		}
	}
}

// thread is one thread of a process, as the kernel shows it.
type thread struct{ id, state, wchan, stack string }

// threadsOf are the threads of process pid: none once it has ended.
func threadsOf(pid int) []thread {
	var ts []thread
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*", pid))
	for _, task := range tasks {
		stat, err := os.ReadFile(filepath.Join(task, "stat"))
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if err != nil || len(f) == 0 {
			continue
		}
		wchan, _ := os.ReadFile(filepath.Join(task, "wchan"))
		stack, _ := os.ReadFile(filepath.Join(task, "stack"))
		ts = append(ts, thread{filepath.Base(task), f[0], string(wchan), string(stack)})
	}
	return ts
}

// kernelWaits says where the kernel holds each thread of process pid.
func kernelWaits(pid int) string {
	var b strings.Builder
	for _, th := range threadsOf(pid) {
		fmt.Fprintf(&b, "thread %s: state %s, in %s\n%s", th.id, th.state, th.wchan, th.stack)
	}
	return b.String()
}

// TestNetnsLaunchedThreeHosts: three test hosts, each running one rank
// with srun's variables, give one merged result of 3 hosts; rank 0 reaches
// the others at their own addresses.
func TestNetnsLaunchedThreeHosts(t *testing.T) {
	hosts, root := nsHostsWithTmpfs(t, 3)
	args := append([]string{"bench", root, "--read-others", "--verify", "-o", "json"}, smallBench...)
	ps := startRanks(t, hosts, "7001", []int{0, 1, 2}, 3, args...)
	waitRanks(t, ps, 4*time.Minute)
	for i, p := range ps {
		if p.code != 0 {
			t.Fatalf("rank %d: exit %d:\n%s", i, p.code, p.err.String())
		}
		if i > 0 && p.out.Len() != 0 {
			t.Errorf("rank %d printed on stdout: %s", i, p.out.String())
		}
	}
	r, err := report.ReadJSON(&ps[0].out)
	if err != nil {
		t.Fatal(err)
	}
	checkHostOps(t, r, 3)
	for i, h := range r.Hosts[1:] {
		if !strings.HasPrefix(h.Address, hosts.Host(i+1).Addr()+":") {
			t.Errorf("rank %d reached at %s, want its host's address %s", i+1, h.Address, hosts.Host(i+1).Addr())
		}
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// nsHostsWithTmpfs makes n test hosts sharing a tmpfs.
func nsHostsWithTmpfs(t *testing.T, n int) (*testenv.Hosts, string) {
	t.Helper()
	hosts := testenv.NewHosts(t, n)
	root := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256m", "fsbench-test", root).CombinedOutput(); err != nil {
		testenv.Unavailable(t, "mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", root).Run() })
	return hosts, root
}

// TestLaunchedMissingRank: rank 2 of 3 never starts: rank 0 says so by
// its number once the rendezvous times out, and both ranks that ran exit
// non-zero, leaving nothing behind. The run's token is in a file only
// its owner reads, and in no output.
func TestLaunchedMissingRank(t *testing.T) {
	testenv.NeedsServer(t, "launched ranks")
	root := t.TempDir()
	// Long enough for rank 1 to join on a busy machine, and for the
	// rendezvous to be looked at before rank 0 gives up on rank 2.
	args := append([]string{"bench", root, "--rendezvous-timeout", "20s"}, smallBench...)
	ps := startRanks(t, nil, "7002", []int{0, 1}, 3, args...)
	rv := filepath.Join(root, ".fsbench-rendezvous-slurm-7002.0")
	var token []byte
	waitFor(t, time.Minute, func() bool {
		var err error
		token, err = os.ReadFile(filepath.Join(rv, "token"))
		return err == nil && len(token) > 0
	})
	for p, mode := range map[string]os.FileMode{rv: os.ModeDir | 0o700, filepath.Join(rv, "token"): 0o600} {
		if st, err := os.Stat(p); err != nil || st.Mode() != mode {
			t.Errorf("%s: %v, %v; want mode %v", p, st.Mode(), err, mode)
		}
	}
	waitRanks(t, ps, 2*time.Minute)
	for i, p := range ps {
		if bytes.Contains(p.out.Bytes(), token) || bytes.Contains(p.err.Bytes(), token) {
			t.Errorf("rank %d printed the token", i)
		}
	}
	if ps[0].code != 1 || !strings.Contains(ps[0].err.String(), "rank 2 of 3 did not join within 20s") {
		t.Errorf("rank 0: exit %d, want 1 naming rank 2:\n%s", ps[0].code, ps[0].err.String())
	}
	if ps[1].code != 1 || !strings.Contains(ps[1].err.String(), "rank 0 ended it with exit code 1") {
		t.Errorf("rank 1: exit %d, want 1 with rank 0's code:\n%s", ps[1].code, ps[1].err.String())
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// TestLaunchedFailureEndsEveryRank: an expectation that fails on rank 0
// ends every rank with its exit code (3); a lone rank whose rank 0 never
// comes says so.
func TestLaunchedFailureEndsEveryRank(t *testing.T) {
	testenv.NeedsServer(t, "launched ranks")
	root := t.TempDir()
	args := append([]string{"bench", root, "--expect", "write-big>=1000000GiB/s"}, smallBench...)
	ps := startRanks(t, nil, "7003", []int{0, 1, 2}, 3, args...)
	waitRanks(t, ps, 3*time.Minute)
	for i, p := range ps {
		if p.code != 3 {
			t.Errorf("rank %d: exit %d, want 3:\n%s", i, p.code, p.err.String())
		}
	}
	alone := startRanks(t, nil, "7004", []int{1}, 2, "bench", root, "--rendezvous-timeout", "1s")
	waitRanks(t, alone, time.Minute)
	if alone[0].code != 1 || !strings.Contains(alone[0].err.String(), "rank 0 of 2 did not open the rendezvous") {
		t.Errorf("rank 1 without rank 0: exit %d:\n%s", alone[0].code, alone[0].err.String())
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// TestLaunchedTerminated: SIGTERM to every rank mid-phase, as scancel
// sends it: rank 0 prints what was measured, every rank exits 130, and no
// file of the run is left, the rendezvous included.
func TestLaunchedTerminated(t *testing.T) {
	testenv.NeedsServer(t, "launched ranks")
	root := t.TempDir()
	ps := startRanks(t, nil, "7005", []int{0, 1, 2}, 3, "bench", root, "-p", "1", "--big-file-size", "1G", "--small-file-count", "10")
	waitFor(t, 2*time.Minute, func() bool {
		m, _ := filepath.Glob(filepath.Join(root, "fsbench-hosts-*", "host-2", "*"))
		return len(m) > 0
	})
	for _, p := range ps {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	waitRanks(t, ps, 2*time.Minute)
	for i, p := range ps {
		if p.code != 130 {
			t.Errorf("rank %d: exit %d, want 130:\n%s", i, p.code, p.err.String())
		}
	}
	if !strings.Contains(ps[0].out.String(), "Benchmark interrupted!") {
		t.Errorf("rank 0 printed no partial result:\n%s", ps[0].out.String())
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// TestMpirunRankKilled: rank 2 killed (SIGKILL) mid-phase under mpirun.
// Rank 0 names it as lost and the run fails; the rendezvous, removed once
// every rank had joined, is not left behind though mpirun kills the
// other ranks soon after.
func TestMpirunRankKilled(t *testing.T) {
	testenv.NeedsServer(t, "mpirun")
	mpi, err := testenv.LookPath("mpirun")
	if err != nil {
		testenv.Unavailable(t, "Open MPI's mpirun is not installed (internal/testenv/install.sh installs it)")
	}
	root := t.TempDir()
	cmd := exec.Command(mpi, "--allow-run-as-root", "--oversubscribe", "-np", "3", testenv.Binary(t), "bench", root,
		"-p", "1", "--big-file-size", "1G", "--small-file-count", "10")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NO_COLOR=1"}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	waitFor(t, 2*time.Minute, func() bool {
		m, _ := filepath.Glob(filepath.Join(root, "fsbench-hosts-*", "host-2", "*"))
		return len(m) > 0
	})
	victim := rankPid(t, cmd.Process.Pid, "2")
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("mpirun did not end:\n%s", errb.String())
	}
	if err == nil || !strings.Contains(errb.String(), "lost") {
		t.Errorf("mpirun: %v; want a failure naming the lost host:\n%s", err, errb.String())
	}
	if m, _ := filepath.Glob(filepath.Join(root, ".fsbench-rendezvous-*")); len(m) != 0 {
		t.Errorf("rendezvous left behind: %v", m)
	}
}

// rankPid is the process of the given rank among mpirun's children.
func rankPid(t *testing.T, mpirun int, rank string) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", mpirun, mpirun))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(b)) {
		env, _ := os.ReadFile("/proc/" + f + "/environ")
		if bytes.Contains(env, []byte("\x00OMPI_COMM_WORLD_RANK="+rank+"\x00")) {
			pid, _ := strconv.Atoi(f)
			return pid
		}
	}
	t.Fatalf("no rank %s among mpirun's children %q", rank, b)
	return 0
}

// TestLaunchedInterruptedWaiting: rank 0 stopped (Ctrl-C) while it waits
// for a rank that never comes: the rank that did join is told at once and
// ends with 130 too, rather than wait out its silence; nothing is left.
func TestLaunchedInterruptedWaiting(t *testing.T) {
	testenv.NeedsServer(t, "launched ranks")
	root := t.TempDir()
	ps := startRanks(t, nil, "7006", []int{0, 1}, 3, "bench", root, "--rendezvous-timeout", "5m")
	waitFor(t, time.Minute, func() bool {
		_, err := os.Stat(filepath.Join(root, ".fsbench-rendezvous-slurm-7006.0", "rank-1.json"))
		return err == nil
	})
	_ = ps[0].cmd.Process.Signal(os.Interrupt)
	waitRanks(t, ps, 2*time.Minute) // rank 1 alone would wait 5m and more
	for i, p := range ps {
		if p.code != 130 {
			t.Errorf("rank %d: exit %d, want 130:\n%s", i, p.code, p.err.String())
		}
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// TestMpirunMetricsOnePort: every rank is given the same --metrics-listen
// address, as a launcher passes one command line to all; rank 0 alone
// serves it (the others' counts come with their heartbeats), so ranks on
// one host do not fight over the port and the run succeeds.
func TestMpirunMetricsOnePort(t *testing.T) {
	root := t.TempDir()
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	out := mpirun(t, 2, append([]string{"bench", root, "--metrics-listen", addr, "-o", "json"}, smallBench...)...)
	r := resultOf(t, out)
	checkHostOps(t, r, 2)
	if n := strings.Count(out.Stderr, "Live metrics at"); n != 1 {
		t.Errorf("%d ranks serve metrics, want rank 0 alone:\n%s", n, out.Stderr)
	}
}
