package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/journal"
)

// TestBenchJournalRefusals: --journal without --keep, a relative one or
// one with --repeat with --hosts, with
// --read-existing, or naming a journal that exists is exit 2 in one line.
func TestBenchJournalRefusals(t *testing.T) {
	dir := t.TempDir()
	taken := filepath.Join(t.TempDir(), "taken")
	if err := os.WriteFile(taken, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	j := filepath.Join(t.TempDir(), "j")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", dir, "--journal", j}, "--journal needs --keep"},
		{[]string{"bench", dir, "--journal", "", "--keep"}, "--journal names no file"},
		{[]string{"bench", dir, "--journal", "rel.journal", "--keep", "--hosts", "127.0.0.1:1"}, "give an absolute path"},
		{[]string{"bench", dir, "--journal", j, "--keep", "--repeat", "2", "--hosts", "127.0.0.1:1"}, "--journal with --hosts journals one run: leave out --repeat"},
		{[]string{"objbench", "--storage", "file", dir, "--workload", "put", "--journal", "rel.journal", "--keep", "--hosts", "127.0.0.1:1"}, "give an absolute path"},
		{[]string{"bench", dir, "--journal", j, "--read-existing"}, "--journal does not apply to --read-existing"},
		{[]string{"bench", dir, "--journal", taken, "--keep", "--quick"}, "--journal " + taken + " exists"},
	} {
		code, _, stderr := runCLI(t, c.args...)
		if code != ExitUsage || !strings.HasPrefix(stderr, "fsbench: ") || !strings.Contains(stderr, c.want) || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%s: exit %d, %q; want exit 2 and %q", strings.Join(c.args, " "), code, stderr, c.want)
		}
	}
	if _, err := os.Stat(j); err == nil {
		t.Error("a refused run left a journal")
	}
}

// journalRun runs bench with a journal in a new directory and returns the
// directory and the journal's path.
func journalRun(t *testing.T, extra ...string) (string, string) {
	t.Helper()
	dir, j := t.TempDir(), filepath.Join(t.TempDir(), "run.journal")
	args := append([]string{"bench", dir, "-p", "2", "--big-file-size", "8M", "--block-size", "1M", "--small-file-count", "10",
		"--small-file-size", "16K", "--keep", "--journal", j, "--drop-caches", "never"}, extra...)
	if code, _, stderr := runCLI(t, args...); code != 0 {
		t.Fatalf("bench: exit %d: %s", code, stderr)
	}
	return dir, j
}

// TestBenchJournalRecordsTheRun: a bench run with --journal keeps its
// files and journals every write (2 big files of 8 1 MiB writes, 20 small
// files of one), each fsync with --fsync, and they all verify.
func TestBenchJournalRecordsTheRun(t *testing.T) {
	dir, jp := journalRun(t, "--fsync")
	j, err := journal.ReadFile(jp)
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	counts := map[byte]int{}
	for _, r := range j.Records {
		counts[r.Type]++
	}
	if j.Header.Root != abs || counts[journal.Write] != 36 || counts[journal.Sync] != 22 || counts[journal.Created] != 22 || j.Ignored != 0 {
		t.Fatalf("root %s, records %v, ignored %d", j.Header.Root, counts, j.Ignored)
	}
	s, err := journal.Verify(context.Background(), j, journal.Dir(dir))
	if err != nil || s.Failed() != 0 || s.Held != 36 || s.Unsynced != 0 || s.Files != 22 {
		t.Fatalf("%v %+v", err, s)
	}
}

// TestAgentJournalConfined: on an agent the journal is made in the
// directory its path leads to only when the agent's check accepts that
// directory: one swapped for a link out of the allowed roots after the
// job was taken is refused, and nothing is made where the link leads.
func TestAgentJournalConfined(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "journals")); err != nil {
		t.Fatal(err)
	}
	allowed := func(dir string) error {
		if !strings.HasPrefix(dir+"/", root+"/") {
			return fmt.Errorf("path %s is not under an allowed root", dir)
		}
		return nil
	}
	w, err := openJournal(filepath.Join(root, "journals", "j.host-0"), root, 1, 1, allowed)
	if err == nil {
		w.Close()
		t.Fatal("the journal was made beneath a link out of the allowed roots")
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("made outside the roots: %v", ents)
	}
	w, err = openJournal(filepath.Join(root, "j.host-0"), root, 1, 1, allowed)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
