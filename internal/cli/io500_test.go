package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/io500"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

func parseIO500(t *testing.T, args ...string) (*IO500Options, int, string) {
	t.Helper()
	return parseWith(t, newIO500CmdWith, args)
}

func TestIO500Flags(t *testing.T) {
	dir := t.TempDir()
	o, code, msg := parseIO500(t, dir, "-p", "3", "--quick", "--mdtest-hard-files", "77", "--stonewall", "20s", "--verify", "--ior-easy-xfer", "1M", "--drop-caches", "auto", "--data-packet-type", "timestamp")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	q := io500.Quick()
	if o.Path != dir || o.Threads != 3 || o.Stonewall != 20*time.Second || !o.Verify || !o.Quick || o.Sizes.EasyXfer != 1<<20 ||
		o.Sizes.HardFiles != 77 || o.Sizes.EasyFiles != q.EasyFiles || o.Sizes.HardSegments != q.HardSegments || o.DropCaches != "auto" ||
		o.DataPacketType != "timestamp" {
		t.Errorf("options = %+v", o.Options)
	}
	o, _, _ = parseIO500(t, dir)
	if o.Sizes != io500.Standard() || o.Stonewall != 300*time.Second || o.Quick || o.DropCaches != "never" || o.DataPacketType != "random" {
		t.Errorf("defaults = %+v", o.Options)
	}
}

// Each mistake is one line, exit 2, before anything is made.
func TestIO500BadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{dir, "-p", "0"}, "--threads must be at least 1"},
		{[]string{dir, "--stonewall", "0s"}, "--stonewall must be greater than 0"},
		{[]string{dir, "--drop-caches", "sometimes"}, `--drop-caches must be auto, always or never (got "sometimes")`},
		{[]string{dir, "--data-packet-type", "offset"}, `--data-packet-type must be random or timestamp (got "offset")`},
		{[]string{dir, "--ior-easy-xfer", "lots"}, "--ior-easy-xfer"},
		{[]string{dir, "--ior-easy-xfer", "0"}, "--ior-easy-xfer must be greater than 0"},
		{[]string{dir, "--mdtest-easy-files", "0"}, "at least 1"},
		{[]string{file}, "not a directory"},
		{[]string{dir, "--expect", "write-big>1MiB/s"}, `io500 measures no metric "write-big"`},
	} {
		_, code, msg := parseIO500(t, tc.args...)
		if code != ExitUsage || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", tc.args, code, msg, tc.want)
		}
	}
}

// A quick run on tmpfs and on a FUSE mount: every phase in the JSON, as
// the schema has it, the reads' origins, the scores as computed from them, the note that this is no official
// result, nothing left behind; compare and report take the result.
func TestIO500Runs(t *testing.T) {
	var results []string
	for _, fs := range []string{"tmpfs", "fuse"} {
		var dir string
		if fs == "tmpfs" {
			dir = testenv.Tmpfs(t, "256m")
		} else {
			dir = testenv.Bindfs(t, t.TempDir())
		}
		stdout, stderr, code := runFsbenchEnv(t, nil, "io500", dir, "--quick", "-p", "2", "--verify", "-q", "-o", "json", "--expect", "ior-hard-read.errors==0")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", fs, code, stderr)
		}
		checkSchema(t, "io500 on "+fs, []byte(stdout))
		var r report.Result
		if err := json.Unmarshal([]byte(stdout), &r); err != nil {
			t.Fatal(err)
		}
		if p := r.FindPhase("ior-easy-read"); p == nil || p.Origin == nil || p.Origin.ReadBytes != p.Bytes {
			t.Errorf("%s: ior-easy-read says nothing of where its bytes came from: %+v", fs, p)
		}
		if len(r.Phases) != len(io500.Order) || r.IO500 == nil || !strings.Contains(r.IO500.Note, "not an official IO500") {
			t.Fatalf("%s: %d phases, %+v", fs, len(r.Phases), r.IO500)
		}
		s := io500.ScoresOf(r.Phases)
		if r.IO500.Score != s.Total || r.IO500.Bandwidth != s.Bandwidth || s.Total <= 0 {
			t.Errorf("%s: scores %+v, from the phases %+v", fs, r.IO500, s)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s: left behind %v", fs, ents)
		}
		out := filepath.Join(t.TempDir(), fs+".json")
		os.WriteFile(out, []byte(stdout), 0o600)
		results = append(results, out)
	}
	stdout, stderr, code := runFsbenchEnv(t, nil, "compare", results[0], results[1])
	if code != 0 || !strings.Contains(stdout, "mdtest-hard-write") {
		t.Errorf("compare: exit %d: %s%s", code, stdout, stderr)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if _, stderr, code := runFsbenchEnv(t, nil, "report", results[0], results[1], "-o", html); code != 0 {
		t.Errorf("report: exit %d: %s", code, stderr)
	}
	if b, _ := os.ReadFile(html); !strings.Contains(string(b), "ior-hard-write") {
		t.Errorf("the report names no ior-hard-write")
	}
}

// TestIO500NoRoom: on an 8 MiB tmpfs, --quick (whose amounts are 114 MiB
// a rank) is refused before anything is written: exit 2, one line naming
// what it needs and what is free, nothing made. --no-space-check lets it
// run into the full file system, as it did before; amounts that fit run.
func TestIO500NoRoom(t *testing.T) {
	dir := testenv.Tmpfs(t, "8m")
	_, stderr, code := runFsbench(t, "io500", dir, "--quick", "--stonewall", "20s")
	want := "io500 writes up to 113.81 MiB (1 rank: ior-easy 64 MiB, ior-hard 45.91 MiB, mdtest-hard 3.91 MiB) and " + dir + " has 8 MiB free"
	if code != ExitUsage || !strings.Contains(stderr, want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("exit %d, want 2 and one line with %q; stderr:\n%s", code, want, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("left in PATH: %v", ents)
	}
	_, stderr, code = runFsbench(t, "io500", dir, "--quick", "--stonewall", "20s", "--no-space-check", "-q")
	if code != 1 || !strings.Contains(stderr, "no space left on device") {
		t.Errorf("--no-space-check: exit %d, want 1 with the file system full; stderr:\n%s", code, stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Fatalf("--no-space-check: left in PATH: %v", ents)
	}
	_, stderr, code = runFsbench(t, "io500", dir, "-p", "2", "--ior-easy-xfer", "256k", "--ior-easy-transfers", "4",
		"--ior-hard-segments", "20", "--mdtest-easy-files", "50", "--mdtest-hard-files", "100", "--stonewall", "20s", "-q")
	if code != 0 {
		t.Errorf("amounts that fit: exit %d; stderr:\n%s", code, stderr)
	}
}
