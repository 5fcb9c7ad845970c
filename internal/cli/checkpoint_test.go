package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/live"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
)

// parseCheckpoint runs the checkpoint command's flag handling and captures
// the options.
func parseCheckpoint(t *testing.T, args ...string) (*CheckpointOptions, int, string) {
	t.Helper()
	return parseWith(t, newCheckpointCmdWith, args)
}

func TestCheckpointFlags(t *testing.T) {
	dir := t.TempDir()
	o, code, msg := parseCheckpoint(t, dir)
	if code != 0 {
		t.Fatalf("defaults: exit %d: %s", code, msg)
	}
	if o.Model.Name != "llama3-8b" || o.ranks() != 8 || o.Size != units.GiB || o.BlockSize != units.MiB || o.DropCaches != "auto" {
		t.Errorf("defaults = %+v", o.Options)
	}
	o, code, _ = parseCheckpoint(t, dir, "--model", "llama3-405b", "--size", "full", "--direct", "--block-size", "4M")
	if code != 0 || o.ranks() != 512 || o.Size != 5290e9 || !o.Direct || o.BlockSize != 4*units.MiB {
		t.Errorf("llama3-405b, full size: %+v (exit %d)", o.Options, code)
	}
	o, code, _ = parseCheckpoint(t, dir, "--model", "llama3-1t", "-p", "16", "--size", "2G", "--quick")
	if code != 0 || o.ranks() != 16 || o.Size != 2*units.GiB {
		t.Errorf("-p 16 --size 2G --quick: %+v (exit %d)", o.Options, code)
	}
	// DLIO's checkpoints: their ranks and, in full, what DLIO writes.
	o, code, msg = parseCheckpoint(t, dir, "--model", "megatron-deepspeed", "--size", "full")
	if o == nil {
		t.Fatalf("megatron-deepspeed, full size: exit %d: %s", code, msg)
	}
	if code != 0 || o.ranks() != 32 || o.Size != 190504120320 {
		t.Errorf("megatron-deepspeed, full size: %+v (exit %d)", o.Options, code)
	}
	o, code, _ = parseCheckpoint(t, dir, "--model", "bert")
	if code != 0 || o.ranks() != 2 || o.Size != units.GiB {
		t.Errorf("bert: %+v (exit %d)", o.Options, code)
	}
}

// TestCheckpointBadInput: each mistake is a usage error (exit 2) of one
// line that says what is wrong.
func TestCheckpointBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{dir, "-p", "0"}, "-p/--threads must be at least 1 (got 0)"},
		{[]string{dir, "-p", "-2"}, "-p/--threads must be at least 1"},
		{[]string{dir, "-p", "1"}, "-p/--threads must be at least 2 on one host"},
		{[]string{dir, "-p", "2", "--ranks", "4"}, "give the ranks once"},
		{[]string{dir, "--size", "0"}, "--size must be greater than 0"},
		{[]string{dir, "--size", "lots"}, "--size"},
		{[]string{dir, "--size", "16K", "-p", "8"}, "less than 4 KiB per rank"},
		{[]string{dir, "--model", "gpt-5"}, `unknown model "gpt-5" (want one of llama3-8b, llama3-70b, llama3-405b, llama3-1t, unet3d, bert, llama-7b, megatron-deepspeed)`},
		{[]string{dir, "--block-size", "0"}, "--block-size must be greater than 0"},
		{[]string{dir, "--drop-caches", "maybe"}, "--drop-caches"},
		{[]string{dir, "--expect", "stat>1"}, "stat"},
		{[]string{dir, "--hosts", "a:1,b:1,c:1"}, "8 ranks do not divide evenly over 3 hosts: give -p N"},
		{[]string{file}, "not a directory"},
		{[]string{}, "PATH"},
	} {
		_, code, msg := parseCheckpoint(t, tc.args...)
		if code != ExitUsage || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", tc.args, code, msg, tc.want)
		}
	}
}

// TestCheckpointBinary runs the real binary: the JSON result, the table
// with a row per rank under -v, CSV, an expectation, a size larger than
// the free space, and the result read back by compare and report.
func TestCheckpointBinary(t *testing.T) {
	dir := t.TempDir()
	resFile := filepath.Join(t.TempDir(), "r.json")
	args := []string{"checkpoint", dir, "-p", "4", "--size", "16M", "-q"}
	stdout, stderr, code := runFsbenchEnv(t, nil, append(args, "-o", "json", "--result-file", resFile, "--expect", "read>0MiB/s")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	r, err := report.ReadJSON(strings.NewReader(stdout))
	if err != nil || r.Command != "checkpoint" || len(r.Phases) != 3 || len(r.Expectations) != 1 || !r.Expectations[0].Pass {
		t.Fatalf("result %+v: %v", r, err)
	}
	if got := r.Phases[2]; got.Name != "read" || got.Bytes != 16*units.MiB || got.Items != 4 || len(got.Ranks) != 4 {
		t.Errorf("read-back: %+v", got)
	}
	stdout, _, code = runFsbenchEnv(t, nil, append(args, "-v")...)
	for _, want := range []string{"Sequential write (1 stream)", "Checkpoint write", "Checkpoint read-back", "rank 3", "own shard", "shard of rank 0"} {
		if code != 0 || !strings.Contains(stdout, want) {
			t.Errorf("-v table (exit %d) lacks %q:\n%s", code, want, stdout)
		}
	}
	stdout, _, code = runFsbenchEnv(t, nil, append(args, "-o", "csv")...)
	if code != 0 || !strings.HasPrefix(stdout, "name,title") || strings.Count(stdout, "\n") != 4 {
		t.Errorf("csv (exit %d):\n%s", code, stdout)
	}
	_, stderr, code = runFsbenchEnv(t, nil, "checkpoint", dir, "--size", "1P")
	if code != ExitUsage || !strings.Contains(stderr, "free") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("1 PiB: exit %d, %q; want exit 2 and one line, before any banner", code, stderr)
	}
	stdout, stderr, code = runFsbenchEnv(t, nil, "compare", resFile, resFile)
	if code != 0 || !strings.Contains(stdout, "read") {
		t.Errorf("compare: exit %d: %s %s", code, stdout, stderr)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if _, stderr, code = runFsbenchEnv(t, nil, "report", resFile, "-o", html); code != 0 {
		t.Errorf("report: exit %d: %s", code, stderr)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestCheckpointInterruptEachPhase: Ctrl-C in each phase: exit 130, the
// result so far with that phase incomplete, nothing left behind but the
// user's file, untouched.
func TestCheckpointInterruptEachPhase(t *testing.T) {
	for _, phase := range []string{"seq-write", "write", "read"} {
		t.Run(phase, func(t *testing.T) {
			dir := t.TempDir()
			check := plant(t, dir)
			b := &benchRun{t: t, dir: dir, liveDir: t.TempDir()}
			cmd := exec.Command(testenv.Binary(t), "checkpoint", dir, "--size", "2G", "-p", "4", "--json")
			cmd.Env = append(os.Environ(), live.DirEnv+"="+b.liveDir, "NO_COLOR=1")
			b.Process = testenv.StartProcess(t, cmd)
			b.freezeIn(phase, 1)
			b.interrupt()
			code, _ := b.Wait(2 * time.Minute)
			r := b.result()
			if code != ExitInterrupted || !r.Interrupted {
				t.Fatalf("exit %d, interrupted %v; want 130\n%s", code, r.Interrupted, b.Stderr())
			}
			if last := r.Phases[len(r.Phases)-1]; last.Name != phase || !last.Incomplete {
				t.Errorf("last phase %s (incomplete %v), want %s interrupted", last.Name, last.Incomplete, phase)
			}
			check()
		})
	}
}

// TestCheckpointCorruptShard: shards changed on the storage while the
// read-back runs (the last byte of each, not yet read) fail the run: exit
// 1, one line naming a shard, the JSON result with the error and the
// read-back's errors.
func TestCheckpointCorruptShard(t *testing.T) {
	dir := t.TempDir()
	b := &benchRun{t: t, dir: dir, liveDir: t.TempDir()}
	cmd := exec.Command(testenv.Binary(t), "checkpoint", dir, "--size", "2G", "-p", "4", "--json", "-q")
	cmd.Env = append(os.Environ(), live.DirEnv+"="+b.liveDir, "NO_COLOR=1")
	b.Process = testenv.StartProcess(t, cmd)
	b.freezeIn("read", 1)
	shards, _ := filepath.Glob(filepath.Join(b.runDir(), "rank-*.shard"))
	if len(shards) != 4 {
		t.Fatalf("shards %v", shards)
	}
	for _, s := range shards {
		f, err := os.OpenFile(s, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		var last [1]byte
		g, _ := os.Open(s)
		g.ReadAt(last[:], st.Size()-1)
		g.Close()
		last[0] ^= 0xff
		if _, err := f.WriteAt(last[:], st.Size()-1); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	b.Signal(syscall.SIGCONT)
	code, _ := b.Wait(2 * time.Minute)
	stderr := strings.TrimSpace(b.Stderr())
	if code != 1 || strings.Contains(stderr, "\n") || !strings.Contains(stderr, "Checkpoint read-back: 4 of 4 shards differ from what was written: data mismatch in "+dir) {
		t.Fatalf("exit %d, stderr %q; want 1 and one line naming a shard", code, stderr)
	}
	r := b.result()
	if read := r.Phases[len(r.Phases)-1]; read.Name != "read" || read.Errors != 4 || !strings.Contains(r.Error, "differ") {
		t.Errorf("result: error %q, last phase %s with %d errors", r.Error, read.Name, read.Errors)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
