package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// existingTree makes a small tree of files that fsbench did not write.
func existingTree(t *testing.T, dir string) {
	t.Helper()
	for name, n := range map[string]int{"a/x": 10, "a/b/y": 70 << 10, "z": 3 << 20} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReadExistingBinaryRefusals: the flags that would write, check data
// of fsbench's own, or put a file into the tree are usage errors (exit 2)
// that say why, and nothing is added to the tree.
func TestReadExistingBinaryRefusals(t *testing.T) {
	dir := t.TempDir()
	existingTree(t, dir)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--verify"}, "not its own"},
		{[]string{"--fsync"}, "writes nothing"},
		{[]string{"--keep"}, "writes nothing"},
		{[]string{"--small-file-count", "3"}, "--small-file-count does not apply"},
		{[]string{"--rw", "read"}, "workload"},
		{[]string{"--hosts", "h1:7781"}, "--hosts"},
		{[]string{"--sample", "0"}, "--sample"},
		{[]string{"--result-file", filepath.Join(dir, "a", "r.json")}, "inside"},
		{[]string{"--access-log", filepath.Join(dir, "log")}, "inside"},
		{[]string{"--expect", "read-big>=1MiB/s"}, "not measured"},
	} {
		args := append([]string{"bench", dir, "--read-existing"}, tc.args...)
		_, stderr, code := runFsbenchEnv(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, stderr, tc.want)
		}
	}
	if _, stderr, code := runFsbenchEnv(t, nil, "bench", dir, "--sample", "3"); code != 2 || !strings.Contains(stderr, "--read-existing") {
		t.Errorf("--sample alone: exit %d, %q", code, stderr)
	}
	var n int
	filepath.WalkDir(dir, func(string, os.DirEntry, error) error { n++; return nil })
	if n != 6 {
		t.Errorf("the tree has %d entries after the refused runs, want 6", n)
	}
}

// TestReadExistingBinaryJSON reads the tree with expectations on both
// phases and checks the result's figures.
func TestReadExistingBinaryJSON(t *testing.T) {
	dir := t.TempDir()
	existingTree(t, dir)
	stdout, stderr, code := runFsbenchEnv(t, nil, "bench", dir, "--read-existing", "-p", "2", "--block-size", "64K", "--json",
		"--expect", "read-existing-small.errors==0", "--expect", "read-existing-big>=1KiB/s")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var res report.Result
	if err := json.Unmarshal([]byte(stdout), &res); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int64{"read-existing-small": {1, 10}, "read-existing-big": {2, 70<<10 + 3<<20}}
	for _, p := range res.Phases {
		if w := want[p.Name]; p.Items != w[0] || p.Bytes != w[1] {
			t.Errorf("%s: %d files, %d bytes; want %v", p.Name, p.Items, p.Bytes, w)
		}
		delete(want, p.Name)
	}
	if len(want) != 0 || res.Parameters.Get("open") != "noatime" {
		t.Errorf("phases missing: %v; parameters %v", want, res.Parameters)
	}
}

// TestReadExistingNotOwner reads, as an unprivileged user, files that
// belong to root: O_NOATIME is refused (EPERM), the files are opened
// plainly, and the result says so.
func TestReadExistingNotOwner(t *testing.T) {
	testenv.RequireRoot(t)
	dir, err := os.MkdirTemp("", "fsbench-notowner-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	existingTree(t, filepath.Join(dir, "tree"))
	bin := filepath.Join(dir, "fsbench")
	data, err := os.ReadFile(testenv.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "bench", filepath.Join(dir, "tree"), "--read-existing", "--json", "--drop-caches", "never")
	cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_RUNTIME_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var errb strings.Builder
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, errb.String())
	}
	var res report.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if res.Parameters.Get("open") != "plain" || !strings.Contains(errb.String(), "O_NOATIME refused") {
		t.Errorf("open = %v, stderr %q; want plain opens, with a warning", res.Parameters.Get("open"), errb.String())
	}
}

// TestListExistingBinaryRefusals: objbench's flags that write or verify
// are usage errors with --list-existing, and --prefix needs it.
func TestListExistingBinaryRefusals(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--list-existing", "--verify"}, "not its own"},
		{[]string{"--list-existing", "--small-objects", "3"}, "writes nothing"},
		{[]string{"--list-existing", "--workload", "get"}, "writes nothing"},
		{[]string{"--list-existing", "--hosts", "h1:7781"}, "--hosts"},
		{[]string{"--prefix", "a/"}, "--list-existing"},
		{[]string{"--list-existing", "--expect", "download>=1MiB/s"}, "download"},
	} {
		args := append([]string{"objbench", dir}, tc.args...)
		_, stderr, code := runFsbenchEnv(t, nil, args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit 2 saying %q", tc.args, code, stderr, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the refused runs left %d entries", len(entries))
	}
}
