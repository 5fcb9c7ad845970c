//go:build linux

package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// Where a seccomp profile refuses io_uring (Docker's default profile
// fails io_uring_setup with EPERM; some fail it with ENOSYS), bench says
// so in one line, suggests the sync engine, exits as for bad input and
// creates nothing.
func TestIOUringRefusedBinary(t *testing.T) {
	testenv.NeedsServer(t, "the fsbench binary under a seccomp filter")
	bin := testenv.Binary(t)
	for _, c := range []struct {
		errno syscall.Errno
		want  string
	}{
		{unix.EPERM, `io_uring_setup is not permitted: a seccomp profile blocks it \(as Docker's default profile does\)`},
		{unix.ENOSYS, `io_uring_setup is not implemented: the kernel is built without io_uring, or a seccomp profile blocks it`},
	} {
		dir := t.TempDir()
		cmd := testenv.Denying(t, unix.SYS_IO_URING_SETUP, c.errno, bin, "bench", dir, "--rw", "randread", "--file-size", "4M",
			"--xfer-size", "4K", "--ioengine", "io_uring", "--iodepth", "32", "-q")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		re := regexp.MustCompile(`^fsbench: io_uring is not available: ` + c.want + `; use --ioengine sync \(see 'fsbench bench --help'\)\n$`)
		if code := cmd.ProcessState.ExitCode(); code != ExitUsage || !re.MatchString(stderr.String()) || stdout.Len() != 0 {
			t.Errorf("%v: exit %d (%v), stderr %q, stdout %q", c.errno, code, err, stderr.String(), stdout.String())
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("%v: left behind: %v", c.errno, left)
		}
		// The same filter with the sync engine: the run works, so the
		// error above is io_uring's and no other.
		cmd = testenv.Denying(t, unix.SYS_IO_URING_SETUP, c.errno, bin, "bench", dir, "--rw", "randread", "--file-size", "4M",
			"--xfer-size", "4K", "--ioengine", "sync", "-q")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%v: sync engine under the filter: %v\n%s", c.errno, err, out)
		}
	}
}

// bench --ioengine io_uring --iodepth N does exactly the operations asked
// for, verified, and says how it issued them.
func TestIOUringBenchBinary(t *testing.T) {
	testenv.NeedsServer(t, "the fsbench binary")
	bin := testenv.Binary(t)
	dir := t.TempDir()
	out, err := exec.Command(bin, "bench", dir, "--rw", "randrw", "--file-size", "8M", "--xfer-size", "4K", "--ops", "4321",
		"--ioengine", "io_uring", "--iodepth", "24", "-p", "2", "--verify", "--json", "-q").Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var res report.Result
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	p := res.Phases[len(res.Phases)-1]
	if p.Ops != 4321 || p.Errors != 0 || !strings.Contains(p.LatencyOf, "io_uring at depth 24") {
		t.Errorf("phase %s: ops %d errors %d, latency of %q", p.Name, p.Ops, p.Errors, p.LatencyOf)
	}
	for _, c := range []struct{ args, want string }{
		{"--iodepth 8", "iodepth 8 needs ioengine io_uring"},
		{"--ioengine libaio", "--ioengine libaio is fio's engine; here --ioengine is sync"},
		{"--ioengine nosuch", `--ioengine: want sync or io_uring, got "nosuch"`},
		{"--ioengine io_uring --iodepth 0", "--iodepth must be in 1..4096"},
	} {
		args := append([]string{"bench", dir, "--rw", "randread", "--file-size", "4M", "-q"}, strings.Fields(c.args)...)
		out, err := exec.Command(bin, args...).CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) || strings.Count(string(out), "\n") != 1 {
			t.Errorf("%s: %v, %q", c.args, err, out)
		}
	}
}
