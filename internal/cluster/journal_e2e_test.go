package cluster_test

// --journal on many hosts: each agent writes its own journal on its host,
// and verify checks them all against the shared directory.

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/journal"
	"github.com/fsbench/fsbench/internal/testenv"
)

// verifyRun runs fsbench verify with args.
func verifyRun(t *testing.T, args ...string) testenv.Output {
	t.Helper()
	return testenv.Run(t, context.Background(), nil, append([]string{"verify"}, args...)...)
}

// hostFiles are the regular files host i of the run in root wrote,
// relative to root.
func hostFiles(t *testing.T, root string, i int) []string {
	t.Helper()
	var files []string
	dirs, _ := filepath.Glob(filepath.Join(root, "*", "host-"+string(rune('0'+i))))
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e os.DirEntry, err error) error {
			if err == nil && e.Type().IsRegular() {
				rel, _ := filepath.Rel(root, p)
				files = append(files, rel)
			}
			return err
		})
	}
	if len(files) == 0 {
		t.Fatalf("host %d wrote no file in %s", i, root)
	}
	return files
}

// TestJournalOnHosts: two agents on loopback write a shared directory
// with --journal: each keeps its own journal beneath its allowed root,
// the result and the coordinator say where, and verify of both (by a
// pattern, or each given) finds every durable write (exit 0). A file of
// the second host truncated behind fsbench's back: exit 3, the file named,
// the loss in that host's journal's verdict and not the other's.
func TestJournalOnHosts(t *testing.T) {
	root, jdir := t.TempDir(), t.TempDir()
	a, b := startAgent(t, root, "--allow-root", jdir), startAgent(t, root, "--allow-root", jdir)
	jf := filepath.Join(jdir, "run.journal")
	out := coordinator(t, context.Background(), "bench", root, "-p", "2", "--big-file-size", "8M", "--block-size", "1M",
		"--small-file-count", "10", "--small-file-size", "16K", "--fsync", "--keep", "--drop-caches", "never",
		"--journal", jf, "--hosts", hostsFlag(a, b), "-o", "json")
	r := resultOf(t, out)
	for i, h := range r.Hosts {
		if want := jf + ".host-" + string(rune('0'+i)); h.Journal != want || !strings.Contains(out.Stderr, h.Address+" "+want) {
			t.Errorf("host %d: journal %q, want %q said on stderr:\n%s", i, h.Journal, want, out.Stderr)
		}
	}
	if !strings.Contains(out.Stderr, "fsbench verify --journal '"+jf+".host-*' "+root) {
		t.Errorf("no verify command on stderr:\n%s", out.Stderr)
	}
	v := verifyRun(t, "--journal", jf+".host-*", root)
	if v.Code != 0 || !strings.HasPrefix(v.Stdout, "verify: all held: 72 of 72 durable writes held") ||
		strings.Count(v.Stdout, "all held: 36 of 36") != 2 {
		t.Fatalf("intact: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	victim := hostFiles(t, root, 1)[0]
	if err := os.Truncate(filepath.Join(root, victim), 4096); err != nil {
		t.Fatal(err)
	}
	v = verifyRun(t, "--journal", jf+".host-0", "--journal", jf+".host-1", root)
	if v.Code != 3 || !strings.Contains(v.Stdout, "LOST WRITES") || !strings.Contains(v.Stdout, " "+victim+" ") ||
		!strings.Contains(v.Stderr, "did not hold") {
		t.Fatalf("truncated %s: exit %d\n%s%s", victim, v.Code, v.Stdout, v.Stderr)
	}
	js := verifyRun(t, "--journal", jf+".host-*", root, "-o", "json")
	var s journal.Summary
	if err := json.Unmarshal([]byte(js.Stdout), &s); err != nil || js.Code != 3 || len(s.Journals) != 2 ||
		s.Journals[0].Failed != 0 || s.Journals[1].Failed == 0 || s.Journals[1].Failed != s.Failed() || s.Writes != 72 {
		t.Fatalf("json: exit %d %v\n%s", js.Code, err, js.Stdout)
	}
}

// TestJournalOnHostsConfined: an agent writes a journal only beneath its
// allowed roots, and never over one that exists (the run fails before
// any phase, and names no journal to verify).
func TestJournalOnHostsConfined(t *testing.T) {
	root, jdir := t.TempDir(), t.TempDir()
	a := startAgent(t, root)
	args := []string{"bench", root, "--big-file-size", "1M", "--small-file-count", "1", "--keep", "--hosts", a.addr}
	out := coordinator(t, context.Background(), append(args, "--journal", filepath.Join(jdir, "j"))...)
	if out.Code == 0 || !strings.Contains(out.Stderr, "outside the allowed roots") {
		t.Errorf("a journal outside the roots: exit %d\n%s", out.Code, out.Stderr)
	}
	if _, err := os.Stat(filepath.Join(jdir, "j.host-0")); err == nil {
		t.Error("the agent wrote a journal outside its roots")
	}
	taken := filepath.Join(root, "taken")
	if err := os.WriteFile(taken+".host-0", []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	out = coordinator(t, context.Background(), append(args, "--journal", taken)...)
	if out.Code == 0 || !strings.Contains(out.Stderr, taken+".host-0 exists") || strings.Contains(out.Stderr, "Journal: ") {
		t.Errorf("a journal that exists: exit %d\n%s", out.Code, out.Stderr)
	}
}

// synced reports whether the journal jp, as on disk now, holds a durable
// write and an unsynced tail of the files below root.
func synced(jp, root string) bool {
	j, err := journal.ReadFile(jp)
	if err != nil {
		return false
	}
	s, err := journal.Verify(context.Background(), j, journal.Dir(root))
	return err == nil && s.Unsynced > 0 && s.Writes > s.Unsynced
}

// TestJournalHostKilled: one agent SIGKILLed mid-run, stopped at a moment
// its journal on disk holds synced writes and an unsynced tail: the run
// fails and names each host's journal, and the killed host's, as the kill left it, verifies with the other
// host's (exit 0), the unsynced tail counted apart; a block of the tail
// zeroed is named and not counted (exit 0). A durable write of the killed
// host removed afterwards: exit 3.
func TestJournalHostKilled(t *testing.T) {
	root, jdir := t.TempDir(), t.TempDir()
	a, b := startAgent(t, root, "--allow-root", jdir), startAgent(t, root, "--allow-root", jdir)
	jf := filepath.Join(jdir, "run.journal")
	cmd := exec.Command(testenv.Binary(t), "bench", root, "--rw", "write", "--file-size", "64M", "--xfer-size", "1M",
		"--files", "2", "-p", "1", "--duration", "10m", "--fsync", "--keep", "--journal", jf, "--hosts", hostsFlag(a, b))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "FSBENCH_TOKEN=" + testToken}
	coord := testenv.StartProcess(t, cmd)
	killed := jf + ".host-1"
	coord.Await("host 1's journal with synced writes and an unsynced tail", 2*time.Minute, func() bool {
		_ = b.cmd.Process.Signal(syscall.SIGSTOP)
		if synced(killed, root) {
			return true
		}
		_ = b.cmd.Process.Signal(syscall.SIGCONT)
		return false
	})
	_ = b.cmd.Process.Signal(syscall.SIGKILL)
	if code, _ := coord.Wait(2 * time.Minute); code == 0 {
		t.Fatalf("the run went on without a host: %s", coord.Stderr())
	}
	if !strings.Contains(coord.Stderr(), "Journal: one on each host: ") || !strings.Contains(coord.Stderr(), b.addr+" "+killed) {
		t.Errorf("the failed run does not say where the journals are:\n%s", coord.Stderr())
	}
	v := verifyRun(t, "--journal", jf+".host-*", root)
	if v.Code != 0 || !strings.HasPrefix(v.Stdout, "verify: all held: ") || !strings.Contains(v.Stdout, "unsynced tail: ") ||
		!strings.Contains(v.Stdout, killed+" (host ") {
		t.Fatalf("after the kill: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	t.Logf("after the kill:\n%s", v.Stdout)
	j, err := journal.ReadFile(killed)
	if err != nil {
		t.Fatal(err)
	}
	var durable string
	last := map[string]journal.Record{}
	for _, r := range j.Records {
		if r.Type == journal.Sync {
			durable = r.Path
		}
		if r.Type == journal.Write || r.Type == journal.Sync {
			last[r.Path] = r
		}
	}
	if durable == "" {
		t.Fatal("no fsync in the killed host's journal")
	}
	for p, r := range last { // a write of the tail zeroed: named, not counted
		if r.Type == journal.Write {
			zeroAt(t, filepath.Join(root, p), r.Off)
			break
		}
	}
	v = verifyRun(t, "--journal", jf+".host-*", root)
	if v.Code != 0 || !strings.Contains(v.Stdout, "not held (not counted") || !strings.Contains(v.Stdout, " no ") {
		t.Fatalf("a loss in the unsynced tail: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	if err := os.Remove(filepath.Join(root, durable)); err != nil {
		t.Fatal(err)
	}
	v = verifyRun(t, "--journal", jf+".host-*", root)
	if v.Code != 3 || !strings.Contains(v.Stdout, durable) || !strings.Contains(v.Stdout, "file missing") {
		t.Fatalf("a durable write of the killed host removed: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
}

// zeroAt zeroes the 4 KiB at off of the file path.
func zeroAt(t *testing.T, path string, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(make([]byte, 4096), off); err != nil {
		t.Fatal(err)
	}
}

// TestObjJournalOnHosts: objbench's puts on two agents into a file store
// with --journal: each host journals its own, verify of both finds every
// put (exit 0), and names an object removed behind fsbench's back (exit 3).
func TestObjJournalOnHosts(t *testing.T) {
	root, jdir := t.TempDir(), t.TempDir()
	a, b := startAgent(t, root, "--allow-root", jdir), startAgent(t, root, "--allow-root", jdir)
	jf := filepath.Join(jdir, "obj.journal")
	out := coordinator(t, context.Background(), "objbench", "--storage", "file", root, "--workload", "put", "--obj-size", "16K",
		"--ops", "20", "-p", "2", "--keep", "--journal", jf, "--hosts", hostsFlag(a, b), "-o", "json")
	r := resultOf(t, out)
	if len(r.Hosts) != 2 || r.Hosts[1].Journal != jf+".host-1" || !strings.Contains(out.Stderr, "the objects stay for") {
		t.Fatalf("hosts %+v\n%s", r.Hosts, out.Stderr)
	}
	v := verifyRun(t, "--journal", jf+".host-*", root)
	if v.Code != 0 || !strings.HasPrefix(v.Stdout, "verify: all held: 40 of 40 durable writes held") {
		t.Fatalf("intact: exit %d\n%s%s", v.Code, v.Stdout, v.Stderr)
	}
	victim := hostFiles(t, root, 0)[0]
	if err := os.Remove(filepath.Join(root, victim)); err != nil {
		t.Fatal(err)
	}
	v = verifyRun(t, "--journal", jf+".host-*", root)
	if v.Code != 3 || !strings.Contains(v.Stdout, " "+victim+" ") || !strings.Contains(v.Stdout, "object missing") {
		t.Fatalf("%s removed: exit %d\n%s%s", victim, v.Code, v.Stdout, v.Stderr)
	}
}
