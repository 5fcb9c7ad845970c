package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// moved is what a run read and wrote: bytes and operations.
type moved struct{ bytes, ops int64 }

// fioMoved runs fio with args in dir and sums what its jobs moved.
func fioMoved(t *testing.T, fio, dir string, args ...string) moved {
	t.Helper()
	cmd := exec.Command(fio, append(args, "--output-format=json")...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("fio %s: %v", strings.Join(args, " "), err)
	}
	var r struct {
		Jobs []map[string]json.RawMessage `json:"jobs"`
	}
	if err := json.Unmarshal(out[strings.Index(string(out), "{"):], &r); err != nil {
		t.Fatalf("fio's JSON: %v", err)
	}
	var m moved
	for _, j := range r.Jobs {
		for _, dir := range []string{"read", "write"} {
			var d struct {
				Bytes int64 `json:"io_bytes"`
				Ops   int64 `json:"total_ios"`
			}
			if err := json.Unmarshal(j[dir], &d); err != nil {
				t.Fatal(err)
			}
			m.bytes += d.Bytes
			m.ops += d.Ops
		}
	}
	return m
}

// fsbenchMoved runs fsbench fio with args and sums what its phases moved.
func fsbenchMoved(t *testing.T, args ...string) (moved, string) {
	t.Helper()
	code, out, errOut := runCLI(t, append([]string{"fio", "--json"}, args...)...)
	if code != 0 {
		t.Fatalf("fsbench fio %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
	}
	var res report.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("result: %v\n%s", err, out)
	}
	var m moved
	for _, p := range res.Phases {
		m.bytes += p.Bytes
		m.ops += p.Ops
	}
	return m, errOut
}

func needFio(t *testing.T) string {
	t.Helper()
	testenv.NeedsServer(t, "fio")
	fio, err := testenv.LookPath("fio")
	if err != nil {
		testenv.Unavailable(t, "fio not installed: %v", err)
	}
	return fio
}

// The four fio lines of JuiceFS's guide, at a smaller size, move as many
// bytes in as many operations through fsbench fio as through fio itself;
// -v adds fio's summary lines.
func TestFioJuiceFSLinesMoveWhatFioMoves(t *testing.T) {
	fio := needFio(t)
	for _, rw := range []string{"write", "read", "randwrite", "randread"} {
		fioDir, ourDir := t.TempDir(), t.TempDir()
		line := func(dir string) []string {
			return []string{"--name=jfs-test", "--directory=" + dir, "--ioengine=libaio", "--rw=" + rw, "--bs=1m",
				"--size=8m", "--numjobs=2", "--direct=1", "--group_reporting"}
		}
		want := fioMoved(t, fio, fioDir, line(fioDir)...)
		got, errOut := fsbenchMoved(t, append(line(ourDir), "-v")...)
		if got != want || want.bytes != 16<<20 {
			t.Errorf("%s: fsbench moved %+v, fio %+v", rw, got, want)
		}
		for _, s := range []string{"jfs-test: (groupid=0, jobs=2)", "IOPS=", "clat percentiles (", "99.99th=[",
			"Note: ioengine=libaio at iodepth 1 runs on fsbench's sync engine"} {
			if !strings.Contains(errOut, s) {
				t.Errorf("%s: stderr lacks %q:\n%s", rw, s, errOut)
			}
		}
		if left, _ := os.ReadDir(ourDir); len(left) != 0 {
			t.Errorf("%s: left %v in the directory", rw, left)
		}
	}
}

// A job file with $VAR sizes, several phases, an fsynced write, mixed
// random I/O over two loops and io_uring: the same bytes and operations as
// fio moves for it.
func TestFioJobFileMovesWhatFioMoves(t *testing.T) {
	fio := needFio(t)
	job := filepath.Join(t.TempDir(), "mixed.fio")
	src := `; phases in sequence, as fio's stonewall
[global]
directory=${DIR}
bs=64k
size=${SIZE}
numjobs=2
group_reporting
end_fsync=1

[seq-write]
rw=write

[rand-read]
stonewall
rw=randread
ioengine=io_uring
iodepth=4

[mixed]
stonewall
rw=randrw
rwmixread=70
loops=2
`
	if err := os.WriteFile(job, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	fioDir, ourDir := t.TempDir(), t.TempDir()
	t.Setenv("SIZE", "2m")
	t.Setenv("DIR", fioDir)
	want := fioMoved(t, fio, fioDir, job)
	t.Setenv("DIR", ourDir)
	got, _ := fsbenchMoved(t, job)
	// 2 threads x 2 MiB: written, read, then twice mixed.
	if got != want || want.bytes != 4*4<<20 {
		t.Errorf("fsbench moved %+v, fio %+v", got, want)
	}
}

// verify= on a write reads back what was written, as fio does: the
// same bytes, and a verified read phase.
func TestFioVerifiedWriteMovesWhatFioMoves(t *testing.T) {
	fio := needFio(t)
	fioDir, ourDir := t.TempDir(), t.TempDir()
	line := func(dir string) []string {
		return []string{"--name=v", "--directory=" + dir, "--rw=randwrite", "--bs=16k", "--size=1m", "--verify=crc32c"}
	}
	want := fioMoved(t, fio, fioDir, line(fioDir)...)
	got, _ := fsbenchMoved(t, line(ourDir)...)
	if got != want || want.bytes != 2<<20 {
		t.Errorf("fsbench moved %+v, fio %+v", got, want)
	}
}

// An option fsbench cannot honour is refused by name, with exit 2, before
// anything is created; so is a file fio runs at the same time as another
// that differs from it.
func TestFioRefusesBeforeRunning(t *testing.T) {
	dir := t.TempDir()
	for args, want := range map[string]string{
		"--name=a --directory=DIR --size=1m --thinktime=100":                                    "thinktime=100: fsbench's threads do not pause between operations",
		"--name=a --directory=DIR --size=1m --random_distribution=zoned_abs:60/10M:40/6M":       "zoned_abs: fsbench's zones are percentages",
		"--name=a --directory=DIR --size=1m --name=b --size=1m --iodepth=8 --ioengine=io_uring": "jobs that run at the same time (no stonewall between them), [a] and [b], differ in iodepth",
		"--name=a --directory=DIR --size=1m --zonemode=zbd":                                     "zonemode: zoned access is not supported",
	} {
		code, out, errOut := runCLI(t, append([]string{"fio"}, strings.Fields(strings.ReplaceAll(args, "DIR", dir))...)...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, want) || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 2 and one line with %q", args, code, out, errOut, want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("a refused job left %v", left)
	}
}

// bench --job with a fio job file points to fsbench fio, in one line.
func TestBenchJobPointsFioFilesToFio(t *testing.T) {
	dir := t.TempDir()
	job := filepath.Join(dir, "seq.fio")
	if err := os.WriteFile(job, []byte("[global]\nbs=1m\n[seq]\nrw=read\nsize=1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runCLI(t, "bench", dir, "--job", job)
	want := "-f " + job + " is a fio job file; -f takes fsbench's workload file (YAML): run it with `fsbench fio " + job + "`"
	if code != ExitUsage || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want exit 2 and %q", code, errOut, want)
	}
}

// fsbench's own flags mix with fio's options: --expect judges the run.
func TestFioTakesFsbenchFlags(t *testing.T) {
	dir := t.TempDir()
	code, _, errOut := runCLI(t, "fio", "--name=w", "--directory="+dir, "--rw=write", "--size=256k", "-q", "--expect", "w.errors>0")
	if code != ExitExpectation {
		t.Errorf("exit %d (want 3: the run had no errors)\n%s", code, errOut)
	}
	code, out, _ := runCLI(t, "fio", "--help")
	if code != 0 || !strings.Contains(out, "fio's command line or fio job files") {
		t.Errorf("--help: exit %d\n%s", code, out)
	}
}

// runtime without time_based ends the one pass early, as in fio; a pass
// that is done first ends the phase: here 1 MiB in 4 KiB reads, not an
// hour of reading.
func TestFioRuntimeEndsThePassEarlyOnly(t *testing.T) {
	got, _ := fsbenchMoved(t, "--name=o", "--directory="+t.TempDir(), "--size=1m", "--runtime=1h")
	if got != (moved{1 << 20, 256}) {
		t.Errorf("moved %+v, want 1 MiB in 256 reads", got)
	}
}
