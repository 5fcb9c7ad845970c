package launch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func envOf(kv ...string) func(string) string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) string { return m[k] }
}

func TestDetect(t *testing.T) {
	ompi := []string{"OMPI_COMM_WORLD_RANK", "2", "OMPI_COMM_WORLD_SIZE", "4", "OMPI_MCA_ess_base_jobid", "713293825", "PMIX_RANK", "2"}
	srun := []string{"SLURM_PROCID", "1", "SLURM_STEP_ID", "0", "SLURM_STEP_NUM_TASKS", "3", "SLURM_NTASKS", "8", "SLURM_JOB_ID", "42"}
	cases := []struct {
		name, kind string
		env        []string
		size       int
		want       Env // Kind "" means a plain run
		err        string
	}{
		{"plain", Auto, nil, 0, Env{}, ""},
		{"none ignores mpirun", None, ompi, 0, Env{}, ""},
		{"mpirun", Auto, ompi, 0, Env{Kind: MPI, Rank: 2, Size: 4, RunID: "mpi-713293825"}, ""},
		{"mpirun one rank", Auto, []string{"OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "1", "OMPI_MCA_ess_base_jobid", "1"}, 0, Env{}, ""},
		{"pmi", MPI, []string{"PMI_RANK", "1", "PMI_SIZE", "2", "FSBENCH_RUN_ID", "x"}, 0, Env{Kind: MPI, Rank: 1, Size: 2, RunID: "x"}, ""},
		{"pmi without run id", Auto, []string{"PMI_RANK", "1", "PMI_SIZE", "2"}, 0, Env{}, "set FSBENCH_RUN_ID"},
		{"srun", Auto, srun, 0, Env{Kind: Slurm, Rank: 1, Size: 3, RunID: "slurm-42.0"}, ""},
		{"srun with pmix and no size", Auto, append([]string{"PMIX_RANK", "1", "PMIX_NAMESPACE", "slurm.pmix.42.0"}, srun...), 0, Env{Kind: Slurm, Rank: 1, Size: 3, RunID: "slurm-42.0"}, ""},
		{"batch script is a plain run", Auto, []string{"SLURM_PROCID", "0", "SLURM_NTASKS", "8", "SLURM_JOB_ID", "42"}, 0, Env{}, ""},
		{"explicit slurm in a batch script", Slurm, []string{"SLURM_PROCID", "0", "SLURM_NTASKS", "8", "SLURM_JOB_ID", "42"}, 0, Env{Kind: Slurm, Rank: 0, Size: 8, RunID: "slurm-42."}, ""},
		{"slurm not there", Slurm, nil, 0, Env{}, "SLURM_PROCID is not set"},
		{"mpi not there", MPI, srun, 0, Env{}, "is fsbench started by mpirun"},
		{"k8s", Auto, []string{"JOB_COMPLETION_INDEX", "3", "FSBENCH_WORLD_SIZE", "5", "FSBENCH_RUN_ID", "uid-1"}, 0, Env{Kind: K8s, Rank: 3, Size: 5, RunID: "uid-1"}, ""},
		{"k8s size flag", K8s, []string{"JOB_COMPLETION_INDEX", "0", "FSBENCH_RUN_ID", "uid-1"}, 4, Env{Kind: K8s, Rank: 0, Size: 4, RunID: "uid-1"}, ""},
		{"k8s without size under auto", Auto, []string{"JOB_COMPLETION_INDEX", "3"}, 0, Env{}, ""},
		{"k8s without size", K8s, []string{"JOB_COMPLETION_INDEX", "3"}, 0, Env{}, "--world-size"},
		{"k8s without run id", K8s, []string{"JOB_COMPLETION_INDEX", "3"}, 4, Env{}, "set FSBENCH_RUN_ID"},
		{"rank beyond size", Auto, []string{"OMPI_COMM_WORLD_RANK", "4", "OMPI_COMM_WORLD_SIZE", "4"}, 0, Env{}, "not below the world size 4"},
		{"bad rank", Auto, []string{"OMPI_COMM_WORLD_RANK", "x", "OMPI_COMM_WORLD_SIZE", "4"}, 0, Env{}, `OMPI_COMM_WORLD_RANK="x" is not a rank`},
		{"bad size", Auto, []string{"OMPI_COMM_WORLD_RANK", "0", "OMPI_COMM_WORLD_SIZE", "0"}, 0, Env{}, "is not a world size"},
		{"unknown kind", "pbs", ompi, 0, Env{}, `--launcher "pbs"`},
		{"run id made a file name", Auto, []string{"PMI_RANK", "0", "PMI_SIZE", "2", "FSBENCH_RUN_ID", "../x"}, 0, Env{Kind: MPI, Rank: 0, Size: 2, RunID: "_x-"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok, err := Detect(c.kind, envOf(c.env...), c.size)
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one with %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if ok != (c.want.Kind != "") {
				t.Fatalf("launched %v, want %v (%+v)", ok, !ok, got)
			}
			if !ok {
				return
			}
			if got.Kind != c.want.Kind || got.Rank != c.want.Rank || got.Size != c.want.Size ||
				!strings.HasPrefix(got.RunID, c.want.RunID) || strings.ContainsAny(got.RunID, "/") {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

// members runs rank 0's wait in the background, as the other ranks join.
func members(r0 *Rendezvous, timeout time.Duration) chan error {
	done := make(chan error, 1)
	go func() {
		_, err := r0.Members(context.Background(), timeout)
		done <- err
	}()
	return done
}

func TestRendezvous(t *testing.T) {
	dir := t.TempDir()
	path := Dir(dir, "run1")
	r0 := &Rendezvous{Path: path, Rank: 0, Size: 3, From: "test"}
	tok, err := r0.Open(Notice{Host: "h0", Addrs: []string{"10.0.0.9"}})
	if err != nil {
		t.Fatal(err)
	}
	for p, mode := range map[string]os.FileMode{path: 0o700 | os.ModeDir, filepath.Join(path, "token"): 0o600} {
		if st, err := os.Stat(p); err != nil || st.Mode() != mode {
			t.Fatalf("%s: mode %v, %v; want %v", p, st.Mode(), err, mode)
		}
	}
	if _, err := (&Rendezvous{Path: path, Size: 3}).Open(Notice{}); err == nil || !strings.Contains(err.Error(), "rm -rf "+path) {
		t.Fatalf("a second rank 0 with the same run id: %v", err)
	}
	var ms []Member
	done := make(chan error, 1)
	go func() {
		var err error
		ms, err = r0.Members(context.Background(), time.Hour)
		done <- err
	}()
	ctx := context.Background()
	for i := 1; i < 3; i++ {
		r := &Rendezvous{Path: path, Rank: i, Size: 3}
		n, err := r.Join(ctx, time.Hour)
		if err != nil || n.Token != tok || n.Host != "h0" || n.Addrs[0] != "10.0.0.9" {
			t.Fatalf("rank %d joined with %+v, %v", i, n, err)
		}
		if err := r.Register(Member{Rank: i, Addrs: []string{"10.0.0.1:1"}, ID: "a"}); err != nil {
			t.Fatal(err)
		}
		r.Close()
	}
	if err := <-done; err != nil || len(ms) != 3 || ms[2].Addrs[0] != "10.0.0.1:1" {
		t.Fatalf("members %+v, %v", ms, err)
	}
	if err := r0.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the rendezvous is still there: %v", err)
	}
}

func TestRendezvousMissingRanks(t *testing.T) {
	path := Dir(t.TempDir(), "run2")
	r0 := &Rendezvous{Path: path, Rank: 0, Size: 4}
	if _, err := r0.Open(Notice{}); err != nil {
		t.Fatal(err)
	}
	if err := (&Rendezvous{Path: path, Rank: 2, Size: 4, dir: r0.dir}).Register(Member{Rank: 2, Addrs: []string{"x:1"}}); err != nil {
		t.Fatal(err)
	}
	_, err := r0.Members(context.Background(), 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "ranks 1, 3 of 4 did not join within 300ms") {
		t.Fatalf("error %v, want one naming ranks 1 and 3", err)
	}
	if ms, _ := r0.Members(context.Background(), 0); ms[2].Addrs[0] != "x:1" || ms[1].Addrs != nil || ms[3].Addrs != nil {
		t.Errorf("the ranks that joined: %+v", ms)
	}
	if err := r0.Remove(); err != nil {
		t.Fatal(err)
	}
	_, err = (&Rendezvous{Path: path, Rank: 1, Size: 4}).Join(context.Background(), 300*time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "rank 0 of 4 did not open the rendezvous") {
		t.Fatalf("a rank without rank 0: %v", err)
	}
}

// TestRendezvousStale: the rendezvous of a run killed before it removed
// it is named, with the command that removes it, by rank 0, and the
// other ranks do not take its old token: no rank 0 counts in it.
func TestRendezvousStale(t *testing.T) {
	path := Dir(t.TempDir(), "run3")
	old := &Rendezvous{Path: path, Rank: 0, Size: 2}
	if _, err := old.Open(Notice{}); err != nil {
		t.Fatal(err)
	}
	old.Close() // killed: never removed
	_, err := (&Rendezvous{Path: path, Rank: 0, Size: 2}).Open(Notice{})
	if err == nil || !strings.Contains(err.Error(), "is already there") || !strings.Contains(err.Error(), "rm -rf "+path) {
		t.Errorf("rank 0 on a stale rendezvous: %v", err)
	}
	n, err := (&Rendezvous{Path: path, Rank: 1, Size: 2}).Join(context.Background(), 500*time.Millisecond)
	if err == nil || n.Token != "" || !strings.Contains(err.Error(), "is stale") || !strings.Contains(err.Error(), "rm -rf "+path) {
		t.Errorf("rank 1 on a stale rendezvous: %+v, %v", n, err)
	}
}

// TestRendezvousWorldSize: ranks given another world size than rank 0's
// each fail saying so, and so does rank 0, which waits for the ranks of
// the other size to have looked.
func TestRendezvousWorldSize(t *testing.T) {
	for _, c := range []struct{ size0, size int }{{2, 3}, {3, 2}} {
		path := Dir(t.TempDir(), "run4")
		r0 := &Rendezvous{Path: path, Rank: 0, Size: c.size0, From: "A"}
		if _, err := r0.Open(Notice{}); err != nil {
			t.Fatal(err)
		}
		done := members(r0, time.Hour)
		for i := 1; i < c.size; i++ {
			_, err := (&Rendezvous{Path: path, Rank: i, Size: c.size, From: "B"}).Join(context.Background(), time.Hour)
			if err == nil || !strings.Contains(err.Error(), "world size mismatch") {
				t.Errorf("%d and %d: rank %d: %v", c.size0, c.size, i, err)
			}
		}
		if err := <-done; err == nil || !strings.Contains(err.Error(), "world size mismatch") {
			t.Errorf("%d and %d: rank 0: %v", c.size0, c.size, err)
		}
		_ = r0.Remove()
	}
}

// TestRendezvousNotOurs: a rendezvous another user made (or one whose
// modes are not rank 0's, or a symbolic link) is refused at once, by its
// path, and its token is not returned.
func TestRendezvousNotOurs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root, to make files of another user")
	}
	cases := []struct {
		name string
		make func(t *testing.T, path string)
		want string
	}{
		{"nobody's directory", func(t *testing.T, path string) {
			mustRendezvous(t, path, 0o700, 0o600)
			chownAll(t, path, 65534)
		}, "owner uid 65534"},
		{"nobody's token", func(t *testing.T, path string) {
			mustRendezvous(t, path, 0o700, 0o600)
			if err := os.Lchown(filepath.Join(path, "token"), 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "owner uid 65534"},
		{"open directory", func(t *testing.T, path string) { mustRendezvous(t, path, 0o777, 0o600) }, "mode 0777"},
		{"readable token", func(t *testing.T, path string) { mustRendezvous(t, path, 0o700, 0o644) }, "mode 0644"},
		{"symbolic link", func(t *testing.T, path string) {
			real := path + "-real"
			mustRendezvous(t, real, 0o700, 0o600)
			if err := os.Symlink(real, path); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
		{"token a symbolic link", func(t *testing.T, path string) {
			mustRendezvous(t, path, 0o700, 0o600)
			tok := filepath.Join(path, "token")
			if err := os.Rename(tok, tok+"-real"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(tok+"-real", tok); err != nil {
				t.Fatal(err)
			}
		}, "symbolic link"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := Dir(t.TempDir(), "run5")
			c.make(t, path)
			n, err := (&Rendezvous{Path: path, Rank: 1, Size: 2}).Join(context.Background(), time.Hour)
			if err == nil || n.Token != "" || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "rm -rf "+path) {
				t.Errorf("joined %+v, %v; want a refusal with %q", n, err, c.want)
			}
		})
	}
}

// mustRendezvous makes what rank 0 makes, with the given modes, and a
// beat that never changes.
func mustRendezvous(t *testing.T, path string, dirMode, tokMode os.FileMode) {
	t.Helper()
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string]string{"token": `{"token":"attacker","size":2}`, "beat": "0"} {
		if err := os.WriteFile(filepath.Join(path, name), []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(path, "token"), tokMode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, dirMode); err != nil {
		t.Fatal(err)
	}
}

func chownAll(t *testing.T, path string, uid int) {
	t.Helper()
	err := filepath.Walk(path, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, uid)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestWaitLastLook: interrupted between two polls, a wait looks once more,
// so a rank that joined in that interval is among the members rank 0
// tells the end to; with nothing new, the error says it was interrupted.
func TestWaitLastLook(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	err := wait(ctx, time.Hour, func() (bool, error) { calls++; return calls > 1, nil }, func() error { return nil })
	if err != nil || calls != 2 {
		t.Errorf("wait: %v after %d looks; want nil after 2 (the last look found it)", err, calls)
	}
	err = wait(ctx, time.Hour, func() (bool, error) { return false, nil }, func() error { return nil })
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted while waiting") {
		t.Errorf("wait with nothing new: %v", err)
	}
}

// TestWaitBlockedLook: a look at the rendezvous that blocks (a file
// system that stopped answering) does not hold a wait past its timeout,
// nor past an interruption.
func TestWaitBlockedLook(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	try := func() (bool, error) { <-block; return true, nil }
	late := errors.New("late")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, c := range []struct {
		name    string
		ctx     context.Context
		timeout time.Duration
		want    error
	}{{"timeout", context.Background(), 200 * time.Millisecond, late}, {"interrupted", ctx, time.Hour, context.Canceled}} {
		done := make(chan error, 1)
		go func() { done <- wait(c.ctx, c.timeout, try, func() error { return late }) }()
		if c.ctx == ctx {
			cancel()
		}
		select {
		case err := <-done:
			if !errors.Is(err, c.want) {
				t.Errorf("%s: %v, want %v", c.name, err, c.want)
			}
		case <-time.After(time.Minute): // a hang guard, far beyond the timeout
			t.Fatalf("%s: wait did not end with its look blocked", c.name)
		}
	}
}

// TestRendezvousStepStalled: a step on the storage outside the waits
// that does not return (a file system that stopped answering) is left
// behind grace past the Deadline, with an error that says so and how to
// remove what it may leave; without a Deadline it runs to its end; and a
// wait with a long timeout ends by the Deadline.
func TestRendezvousStepStalled(t *testing.T) {
	path := Dir(t.TempDir(), "run9")
	block := make(chan struct{})
	defer close(block)
	r := &Rendezvous{Path: path, Size: 2, Deadline: time.Now().Add(100 * time.Millisecond)}
	done := make(chan error, 1)
	go func() { done <- r.step("removing it", func() error { <-block; return nil }) }()
	select {
	case err := <-done:
		if !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "removing it did not end") || !strings.Contains(err.Error(), "rm -rf "+path) {
			t.Errorf("stalled step: %v", err)
		}
	case <-time.After(time.Minute): // a hang guard, far beyond the bound
		t.Fatal("a stalled step was not left behind")
	}
	if err := (&Rendezvous{Path: path}).step("x", func() error { return errNoRank }); err != errNoRank {
		t.Errorf("a step without a deadline: %v, want its own error", err)
	}
	if _, err := r.Open(Notice{}); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := r.Members(context.Background(), time.Hour)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "rank 1 of 2 did not join") {
			t.Errorf("Members past the Deadline: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("Members waited past the Deadline")
	}
	if err := r.Remove(); err != nil {
		t.Fatal(err)
	}
}

var errNoRank = errors.New("no rank")

// TestRendezvousThousandRanks: the ranks of an Indexed Job of 1,000
// completions (or mpirun -np 1000) meet in one directory: 999 ranks join
// at once, as goroutines, and rank 0 gets every member, each rank's own,
// then removes the directory. The wait is bounded: a rendezvous that does
// not complete fails here rather than hang.
func TestRendezvousThousandRanks(t *testing.T) {
	const n = 1000
	path := Dir(t.TempDir(), "indexed-job")
	r0 := &Rendezvous{Path: path, Rank: 0, Size: n, From: "FSBENCH_WORLD_SIZE"}
	tok, err := r0.Open(Notice{Host: "pod-0", Addrs: []string{"10.0.0.1"}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	joined := make(chan error, n)
	for i := 1; i < n; i++ {
		go func() {
			r := &Rendezvous{Path: path, Rank: i, Size: n, From: "FSBENCH_WORLD_SIZE"}
			defer r.Close()
			got, err := r.Join(ctx, 5*time.Minute)
			if err == nil && got.Token != tok {
				err = fmt.Errorf("rank %d read token %q", i, got.Token)
			}
			if err == nil {
				err = r.Register(Member{Rank: i, Addrs: []string{fmt.Sprintf("10.0.%d.%d:7781", i/250, i%250)}, ID: fmt.Sprint(i), Host: fmt.Sprintf("pod-%d", i)})
			}
			joined <- err
		}()
	}
	ms, err := r0.Members(ctx, 5*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i < n; i++ {
		if err := <-joined; err != nil {
			t.Fatal(err)
		}
	}
	if len(ms) != n {
		t.Fatalf("%d members, want %d", len(ms), n)
	}
	for i := 1; i < n; i++ {
		if want := fmt.Sprintf("10.0.%d.%d:7781", i/250, i%250); ms[i].Rank != i || len(ms[i].Addrs) != 1 || ms[i].Addrs[0] != want || ms[i].ID != fmt.Sprint(i) {
			t.Fatalf("member %d: %+v, want rank %d at %s", i, ms[i], i, want)
		}
	}
	if err := r0.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("the rendezvous is still there: %v", err)
	}
}
