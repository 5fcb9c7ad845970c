package cli

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/journal"
	"github.com/fsbench/fsbench/internal/testenv"
)

// runFiles are the files a journalled run wrote, relative to its root.
func runFiles(t *testing.T, root string) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			rel, _ := filepath.Rel(root, p)
			files = append(files, rel)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("files of %s: %v %v", root, files, err)
	}
	return files
}

// plantLoss damages one file of root behind fsbench's back, in the i-th
// of four ways, and returns the file and the kinds verify may name it (a
// 4 KiB block zeroed or cut off within a larger write leaves that write
// torn).
func plantLoss(t *testing.T, r *rand.Rand, root string, i int) (string, []string) {
	t.Helper()
	files := runFiles(t, root)
	name := files[r.IntN(len(files))]
	path := filepath.Join(root, name)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	block := r.Int64N(st.Size()/4096) * 4096
	switch i % 4 {
	case 0: // a block overwritten with what was never written
		junk := make([]byte, 4096)
		for k := range junk {
			junk[k] = byte(r.Uint32())
		}
		overwriteAt(t, path, block, junk)
		return name, []string{journal.Unexpected}
	case 1: // a block zeroed
		overwriteAt(t, path, block, make([]byte, 4096))
		return name, []string{journal.Lost, journal.Torn}
	case 2: // truncated
		if err := os.Truncate(path, block); err != nil {
			t.Fatal(err)
		}
		return name, []string{journal.Lost, journal.Torn}
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	return name, []string{journal.Lost}
}

func overwriteAt(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// TestVerifyFindsPlantedLoss: ten runs, each verified intact (exit 0),
// then damaged behind fsbench's back (a block overwritten or zeroed, a
// file truncated or removed) and verified again: exit 3, the file and the
// kind of loss named in the table and the JSON, ten times of ten.
func TestVerifyFindsPlantedLoss(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 1))
	t.Logf("seed %d", seed)
	found := 0
	for i := range 10 {
		dir, j := journalRun(t, "--fsync")
		out, stderr, code := runFsbench(t, "verify", "--journal", j, dir)
		if code != 0 || !strings.HasPrefix(out, "verify: all held: 36 of 36 durable writes held") || stderr != "" {
			t.Fatalf("run %d intact: exit %d\n%s%s", i, code, out, stderr)
		}
		name, kinds := plantLoss(t, r, dir, i)
		out, stderr, code = runFsbench(t, "verify", "--journal", j, dir)
		js, _, jcode := runFsbench(t, "verify", "--journal", j, dir, "-o", "json")
		var s journal.Summary
		if code == ExitExpectation && jcode == ExitExpectation && strings.Contains(out, "LOST WRITES") && strings.Contains(out, " "+name+" ") &&
			strings.HasPrefix(stderr, "fsbench: ") && strings.Contains(stderr, " did not hold (") &&
			json.Unmarshal([]byte(js), &s) == nil && names(s.Findings, name, kinds) {
			found++
			continue
		}
		t.Errorf("run %d (%v, %s): exit %d\n%s%s", i, kinds, name, code, out, stderr)
	}
	if found != 10 {
		t.Fatalf("found %d of 10 planted losses", found)
	}
}

// names reports whether every finding is of file name, durable, and of
// one of kinds.
func names(fs []journal.Finding, name string, kinds []string) bool {
	for _, f := range fs {
		if f.Path != name || !f.Durable || !slices.Contains(kinds, f.Kind) {
			return false
		}
	}
	return len(fs) > 0
}

// TestVerifyBadInput: no journal, not a journal, a journal of another
// directory and a URL are exit 2 in one line; a JSON result is complete.
func TestVerifyBadInput(t *testing.T) {
	dir, j := journalRun(t)
	other := t.TempDir()
	notJournal := filepath.Join(other, "x")
	os.WriteFile(notJournal, []byte("hello\n"), 0o644)
	abs, _ := filepath.Abs(dir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"verify", "--journal", filepath.Join(other, "none"), dir}, "--journal " + filepath.Join(other, "none") + ": no such file or directory"},
		{[]string{"verify", "--journal", notJournal, dir}, "not an fsbench journal"},
		{[]string{"verify", "--journal", j, other}, "records writes below " + abs + ", not " + other},
		{[]string{"verify", dir}, "verify needs --journal FILE"},
		{[]string{"verify", "--journal", filepath.Join(other, "none.*"), dir}, "--journal " + filepath.Join(other, "none.*") + " matches no file"},
		{[]string{"verify", "--journal", j, "--journal", notJournal, dir}, "not an fsbench journal"},
		{[]string{"verify", "--journal", j, "--journal", "", dir}, "--journal names no file"},
		{[]string{"verify", "--journal", j, "s3://bucket/x"}, "records files below " + abs + ", not objects of s3://bucket/x"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != ExitUsage || !strings.HasPrefix(stderr, "fsbench: ") || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, %q; want exit 2 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
	code, out, stderr := runCLI(t, "verify", "--journal", j, dir, "--json")
	var s journal.Summary
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil || s.Root != abs || s.Writes != 36 || s.Unsynced != 36 || s.Findings == nil {
		t.Fatalf("json: exit %d %s %s", code, out, stderr)
	}
}

// tailOnDisk verifies the journal as it is on disk now: whether it holds
// both a durable write and an unsynced tail.
func tailOnDisk(jp, dir string) bool {
	j, err := journal.ReadFile(jp)
	if err != nil {
		return false
	}
	s, err := journal.Verify(context.Background(), j, journal.Dir(dir))
	return err == nil && s.Unsynced > 0 && s.Writes > s.Unsynced
}

// TestVerifyAfterSIGKILL: the writer is killed mid-run (stopped at a
// moment its journal on disk holds synced writes and writes no fsync
// covered yet, then SIGKILLed): verify finds every durable write (exit 0),
// names the unsynced tail and does not count it; a loss planted in the
// tail is named and still not counted, one in a durable write is.
func TestVerifyAfterSIGKILL(t *testing.T) {
	dir, jp := t.TempDir(), filepath.Join(t.TempDir(), "killed.journal")
	cmd := execFsbench(t, "bench", dir, "--rw", "write", "--file-size", "64M", "--xfer-size", "1M", "--files", "2", "-p", "1",
		"--duration", "10m", "--fsync", "--keep", "--journal", jp, "-q")
	p := testenv.StartProcess(t, cmd)
	p.Await("a journal with synced writes and an unsynced tail", 2*time.Minute, func() bool {
		p.Signal(syscall.SIGSTOP)
		if tailOnDisk(jp, dir) {
			return true
		}
		p.Signal(syscall.SIGCONT)
		return false
	})
	p.Signal(syscall.SIGKILL)
	p.Wait(time.Minute)
	out, stderr, code := runFsbench(t, "verify", "--journal", jp, dir)
	if code != 0 || !strings.HasPrefix(out, "verify: all held: ") || !strings.Contains(out, "unsynced tail: ") || !strings.Contains(out, "writes, all held") {
		t.Fatalf("after SIGKILL: exit %d\n%s%s", code, out, stderr)
	}
	j, err := journal.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	tail, off := unsyncedWrite(t, j)
	overwriteAt(t, filepath.Join(dir, tail), off, make([]byte, 4096))
	out, stderr, code = runFsbench(t, "verify", "--journal", jp, dir)
	if code != 0 || !strings.Contains(out, "not held (not counted") || !strings.Contains(out, " no ") {
		t.Fatalf("a loss in the unsynced tail: exit %d\n%s%s", code, out, stderr)
	}
	if err := os.Remove(filepath.Join(dir, tail)); err != nil {
		t.Fatal(err)
	}
	out, _, code = runFsbench(t, "verify", "--journal", jp, dir)
	if code != ExitExpectation || !strings.Contains(out, "file missing") {
		t.Fatalf("a durable loss after the kill: exit %d\n%s", code, out)
	}
}

// unsyncedWrite is a file whose last write no fsync covered, and where
// that write starts.
func unsyncedWrite(t *testing.T, j *journal.Journal) (string, int64) {
	t.Helper()
	last := map[string]journal.Record{}
	for _, r := range j.Records {
		if r.Type == journal.Write || r.Type == journal.Sync {
			last[r.Path] = r
		}
	}
	for p, r := range last {
		if r.Type == journal.Write {
			return p, r.Off
		}
	}
	t.Fatal("no unsynced write")
	return "", 0
}

// TestVerifyFUSEDaemonKilled: a run on a bindfs FUSE mount whose daemon is
// SIGKILLed mid-run (the run fails: the mount is dead), then remounted:
// every durable write the journal holds is there (exit 0); a file removed
// behind the mount is found (exit 3).
func TestVerifyFUSEDaemonKilled(t *testing.T) {
	src := t.TempDir()
	mnt := testenv.Bindfs(t, src)
	jp := filepath.Join(t.TempDir(), "fuse.journal")
	cmd := execFsbench(t, "bench", mnt, "--rw", "write", "--file-size", "16M", "--xfer-size", "1M", "--files", "4", "-p", "2",
		"--duration", "10m", "--fsync", "--keep", "--journal", jp, "-q")
	p := testenv.StartProcess(t, cmd)
	p.Await("synced writes in the journal", 2*time.Minute, func() bool { return syncedOnDisk(jp) })
	testenv.KillBindfs(t, mnt)
	if code, _ := p.Wait(time.Minute); code != ExitRuntime {
		t.Fatalf("bench on a dead mount: exit %d, want 1\n%s", code, p.Stderr())
	}
	testenv.RemountBindfs(t, src, mnt)
	out, stderr, code := runFsbench(t, "verify", "--journal", jp, mnt)
	if code != 0 || !strings.HasPrefix(out, "verify: all held: ") {
		t.Fatalf("after the remount: exit %d\n%s%s", code, out, stderr)
	}
	name := runFiles(t, src)[0]
	os.Remove(filepath.Join(src, name))
	out, _, code = runFsbench(t, "verify", "--journal", jp, mnt)
	if code != ExitExpectation || !strings.Contains(out, name) {
		t.Fatalf("a file removed behind the mount: exit %d\n%s", code, out)
	}
}

// syncedOnDisk reports whether the journal on disk holds an fsync.
func syncedOnDisk(jp string) bool {
	j, err := journal.ReadFile(jp)
	if err != nil {
		return false
	}
	for _, r := range j.Records {
		if r.Type == journal.Sync {
			return true
		}
	}
	return false
}

// execFsbench is the built binary's command for args.
func execFsbench(t *testing.T, args ...string) *exec.Cmd {
	t.Helper()
	return exec.Command(testenv.Binary(t), args...)
}

// TestJournalAfterInterrupt: a run stopped with SIGINT (exit 130) closes
// its journal whole (no torn tail), and every write in it verifies.
func TestJournalAfterInterrupt(t *testing.T) {
	dir, jp := t.TempDir(), filepath.Join(t.TempDir(), "int.journal")
	p := testenv.StartProcess(t, execFsbench(t, "bench", dir, "--rw", "write", "--file-size", "16M", "--xfer-size", "64K", "--files", "2",
		"-p", "2", "--duration", "10m", "--fsync", "--keep", "--journal", jp, "-q"))
	p.Await("synced writes in the journal", 2*time.Minute, func() bool { return syncedOnDisk(jp) })
	p.Signal(os.Interrupt)
	if code, _ := p.Wait(time.Minute); code != ExitInterrupted {
		t.Fatalf("interrupted bench: exit %d\n%s", code, p.Stderr())
	}
	j, err := journal.ReadFile(jp)
	if err != nil || j.Ignored != 0 {
		t.Fatalf("journal after SIGINT: %v, %d bytes ignored", err, j.Ignored)
	}
	out, stderr, code := runFsbench(t, "verify", "--journal", jp, dir)
	if code != 0 || !strings.HasPrefix(out, "verify: all held: ") || strings.Contains(out, "journal: its last") {
		t.Fatalf("verify after SIGINT: exit %d\n%s%s", code, out, stderr)
	}
}
