package replay

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/testenv"
)

// hostileLog removes the replay's own directory, then makes, writes and
// removes below it: were the removal replayed and the later operations
// done by path, whoever plants a link with the run directory's name in
// PATH would have them done where it points. Replayed as recorded
// (--speed 1), it waits 10 ms after the removal: time for a planter.
const hostileLog = `2026.11.26 18:38:51.000001 [uid:0,gid:0,pid:7] rmdir (/) - OK <0.000004>
2026.11.26 18:38:51.010003 [uid:0,gid:0,pid:7] mkdir (/d) - OK <0.000004>
2026.11.26 18:38:51.010004 [uid:0,gid:0,pid:7] create (/d/f) - OK <0.000004>
2026.11.26 18:38:51.010005 [uid:0,gid:0,pid:7] write (/d/f,4096,0): 4096 - OK <0.000004>
2026.11.26 18:38:51.010006 [uid:0,gid:0,pid:7] close (/d/f) - OK <0.000004>
2026.11.26 18:38:51.010007 [uid:0,gid:0,pid:7] create (/victim) - OK <0.000004>
2026.11.26 18:38:51.010008 [uid:0,gid:0,pid:7] write (/victim,4096,0): 4096 - OK <0.000004>
2026.11.26 18:38:51.010009 [uid:0,gid:0,pid:7] close (/victim) - OK <0.000004>
2026.11.26 18:38:51.010010 [uid:0,gid:0,pid:7] unlink (/d/f) - OK <0.000004>
2026.11.26 18:38:51.010011 [uid:0,gid:0,pid:7] rmdir (/d) - OK <0.000004>
2026.11.26 18:38:51.010012 [uid:0,gid:0,pid:7] mkdir (/keep) - OK <0.000004>
2026.11.26 18:38:51.010013 [uid:0,gid:0,pid:7] rmdir (/keep) - OK <0.000004>
`

// sentinel makes a directory tree outside PATH, with a file named as
// one the log writes and a directory as one it removes, and returns it
// with what it holds.
func sentinel(t *testing.T, dir string) (string, string) {
	t.Helper()
	s := filepath.Join(dir, "sentinel")
	for _, d := range []string{"keep/sub", "d"} {
		if err := os.MkdirAll(filepath.Join(s, d), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"victim", "keep/sub/data", "d/f"} {
		if err := os.WriteFile(filepath.Join(s, f), []byte("sentinel "+f), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(s, 0o777); err != nil {
		t.Fatal(err)
	}
	return s, treeState(t, s)
}

// treeState lists a tree: each entry's name, type, size, modification
// time and contents.
func treeState(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		st, err := os.Lstat(p)
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s %v %d %d", p, st.Mode(), st.Size(), st.ModTime().UnixNano())
		if st.Mode().IsRegular() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %q", data)
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// hostileRuns replays hostileLog in path n times while plant runs, and
// checks that the sentinel tree is as it was.
func hostileRuns(t *testing.T, path, sentinelDir, before string, n int) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), "hostile.log")
	if err := os.WriteFile(logPath, []byte(hostileLog), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		var res report.Result
		err := Run(context.Background(), Options{Log: logPath, Path: path, Speed: 1, DropCaches: runenv.DropNever}, &res)
		var re *runenv.Error
		if err != nil && !errors.As(err, &re) {
			t.Fatalf("run %d: %v", i, err)
		}
		if i%100 == 99 || i == n-1 {
			if after := treeState(t, sentinelDir); after != before {
				t.Fatalf("run %d touched the tree outside PATH:\nbefore:\n%s\nafter:\n%s", i, before, after)
			}
		}
	}
}

// TestReplayHostileSwap: while the replay runs, another program of the
// same user moves the run directory away and puts a link to a directory
// outside PATH in its place, 1,000 times: no operation of the replay
// reaches that directory (each resolves beneath the run directory's
// handle), and the log's removal of the run directory is not replayed.
func TestReplayHostileSwap(t *testing.T) {
	base := t.TempDir()
	path := filepath.Join(base, "path")
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
	sdir, before := sentinel(t, base)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for k := 0; ; k++ {
			runtime.Gosched()
			select {
			case <-stop:
				return
			default:
			}
			ents, _ := os.ReadDir(path)
			for _, e := range ents {
				name := filepath.Join(path, e.Name())
				if !strings.HasPrefix(e.Name(), "fsbench-") || e.Type()&fs.ModeSymlink != 0 {
					continue
				}
				if os.Rename(name, filepath.Join(base, fmt.Sprint("moved-", k))) == nil {
					_ = os.Symlink(sdir, name)
				}
			}
		}
	}()
	hostileRuns(t, path, sdir, before, 1000)
	close(stop)
	wg.Wait()
}

// planterEnv makes the test binary a planter (TestMain): it plants, in
// the directory it names, links to the directory in plantTarget with
// the names of the replay's run directories, as soon as they are free.
const planterEnv, plantTarget = "FSBENCH_TEST_PLANT_IN", "FSBENCH_TEST_PLANT_TO"

func TestMain(m *testing.M) {
	if dir := os.Getenv(planterEnv); dir != "" {
		plant(dir, os.Getenv(plantTarget))
		return
	}
	os.Exit(m.Run())
}

// plant is the planter: it runs until its parent dies (Pdeathsig) or
// standard input closes.
func plant(dir, target string) {
	go func() {
		var b [1]byte
		os.Stdin.Read(b[:])
		os.Exit(0)
	}()
	var live []string // the run directories of the last listing
	for {
		runtime.Gosched()
		for _, name := range live {
			if os.Symlink(target, filepath.Join(dir, name)) == nil {
				os.Stdout.WriteString("planted " + name + "\n")
			}
		}
		ents, _ := os.ReadDir(dir)
		live = live[:0]
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "fsbench-") && e.IsDir() {
				live = append(live, e.Name())
			}
		}
	}
}

// TestReplayHostileNobody: the attack as another user makes it. PATH is
// a shared scratch directory all may write in; a process of the user
// nobody plants links to a directory outside PATH with the run
// directories' names as soon as they are free, while the replay (as
// root) replays a log that removes its own directory and then makes,
// writes and removes below it, 1,000 times: the tree outside PATH is
// untouched.
func TestReplayHostileNobody(t *testing.T) {
	testenv.RequireRoot(t)
	base, err := os.MkdirTemp("/tmp", "fsbench-hostile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(base, "path")
	if err := os.Mkdir(path, 0o777); err != nil {
		t.Fatal(err)
	}
	// Not sticky: in a sticky directory the kernel (fs.protected_symlinks)
	// refuses to follow another user's link, which would hide the attack.
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	sdir, before := sentinel(t, base)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe) // a copy nobody can run: the build's directory is root's only
	if err != nil {
		t.Fatal(err)
	}
	planter := filepath.Join(base, "planter")
	if err := os.WriteFile(planter, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(planter)
	cmd.Env = append(os.Environ(), planterEnv+"="+path, plantTarget+"="+sdir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}, Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		testenv.Unavailable(t, "start a process as nobody: %v", err)
	}
	defer func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(time.Minute):
			cmd.Process.Kill()
		}
	}()
	hostileRuns(t, path, sdir, before, 1000)
}

// TestRootRemovalNotReplayed: a log's removal of its root, the run
// directory, is not replayed (as its rename is not), in fsbench's and
// strace's formats.
func TestRootRemovalNotReplayed(t *testing.T) {
	for _, log := range []string{
		"2026.11.26 18:38:51.000001 [uid:0,gid:0,pid:7] rmdir (/) - OK <0.000004>\n" +
			"2026.11.26 18:38:51.000002 [uid:0,gid:0,pid:7] unlink (/) - OK <0.000004>\n" +
			"2026.11.26 18:38:51.000003 [uid:0,gid:0,pid:7] mkdir (/d) - OK <0.000004>\n",
		"7 1764180000.000001 rmdir(\"/\") = 0 <0.000004>\n" +
			"7 1764180000.000002 unlink(\"/\") = 0 <0.000004>\n" +
			"7 1764180000.000003 mkdir(\"/d\", 0755) = 0 <0.000004>\n",
	} {
		tr, err := load([]byte(log))
		if err != nil {
			t.Fatal(err)
		}
		if tr.Skipped.Unsupported["rmdir"] != 1 || tr.Skipped.Unsupported["unlink"] != 1 || tr.Ops() != 1 {
			t.Errorf("%s log: %d ops, not replayed %v; want only the mkdir replayed", tr.Format, tr.Ops(), tr.Skipped.Unsupported)
		}
	}
}
