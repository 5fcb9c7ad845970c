package testenv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestHPCCompareBadInput runs hpc-compare.sh (the comparison with IOR and
// mdtest, which CI does not run whole) with each setting wrong: it must
// stop with exit status 2 and a one-line error that names the setting,
// before it mounts or touches anything.
func TestHPCCompareBadInput(t *testing.T) {
	scriptRefuses(t, "hpc-compare.sh", nil, []badSetting{
		{"FRESH=2", "hpc-compare.sh: FRESH is 0 or 1, not 2"},
		{"DATA=offset", "hpc-compare.sh: DATA is random or timestamp, not offset"},
		{"DROP=yes", "hpc-compare.sh: DROP is 0 or 1, not yes"},
		{"WARMUP=-1", "hpc-compare.sh: WARMUP is a count of runs, not -1"},
		{"FS=xfs", "hpc-compare.sh: FS is tmpfs, disk or both, not xfs"},
		{"NP=3", "hpc-compare.sh: NP is 2, 4 or both, not 3"},
		{"NP=2 four", "hpc-compare.sh: NP is 2, 4 or both, not four"},
		{"RANKS=hosts", "hpc-compare.sh: RANKS is processes or threads, not hosts"},
		{"EASY_FILES=lots", "hpc-compare.sh: EASY_FILES is a count of at least 1, not lots"},
		{"HARD_SEGS=0", "hpc-compare.sh: HARD_SEGS is a count of at least 1, not 0"},
		// bash reads 010 as octal 8: a leading zero is refused too.
		{"HARD_FILES=010", "hpc-compare.sh: HARD_FILES is a count of at least 1, not 010"},
		// 4 ranks of 100,000,000 MiB, the default ior-hard's 44 MiB and
		// mdtest's 11 MiB, and 512 MiB: no machine's memory holds it.
		{"EASY_MIB=100000000", "hpc-compare.sh: the tmpfs for these amounts needs 400000732 MiB, more than three quarters of the memory available"},
	})
}

// TestFioDropinBadInput: fio-dropin.sh (fio's lines through fio and
// fsbench fio) refuses each wrong setting before it runs either tool.
func TestFioDropinBadInput(t *testing.T) {
	scriptRefuses(t, "fio-dropin.sh", nil, []badSetting{
		{"JOBS=two", "fio-dropin.sh: JOBS is a count of jobs, not two"},
		{"SIZE=1.5g", "fio-dropin.sh: SIZE is a size as fio writes it (256m, 1g), not 1.5g"},
	})
	scriptRefuses(t, "fio-dropin.sh", []string{"06"}, []badSetting{
		{"JOBS=2", "fio-dropin.sh: PAIRS is a count of pairs, not 06"},
	})
}

// TestHardWriteStateBadInput: hard-write-state.sh (mdtest-hard-write
// after IOR's and mdtest's earlier phases) refuses each wrong setting the
// same way, before it makes a file or starts a rank.
func TestHardWriteStateBadInput(t *testing.T) {
	scriptRefuses(t, "hard-write-state.sh", nil, []badSetting{
		{"NP=four", "hard-write-state.sh: NP is a count of ranks, not four"},
		{"NP=0", "hard-write-state.sh: NP is a count of ranks, not 0"},
		{"BIND=yes", "hard-write-state.sh: BIND is 0 or 1, not yes"},
	})
	scriptRefuses(t, "hard-write-state.sh", []string{"0"}, []badSetting{
		{"NP=4", "hard-write-state.sh: PAIRS is a count of pairs, not 0"},
	})
}

// badSetting is one wrong environment setting and the error it must give.
type badSetting struct{ env, want string }

// scriptRefuses runs a comparison script of this directory with each
// setting (and pairs, "1" unless given): exit status 2, stderr the one
// line wanted, nothing on stdout, and its disk directory not made.
func scriptRefuses(t *testing.T, name string, pairs []string, cases []badSetting) {
	t.Helper()
	script := filepath.Join(RepoRoot(), "benchmarks", "scripts", name)
	disk := filepath.Join(t.TempDir(), "disk")
	if pairs == nil {
		pairs = []string{"1"}
	}
	var env []string // the caller's, without the scripts' own settings
	for _, kv := range os.Environ() {
		switch k, _, _ := strings.Cut(kv, "="); k {
		case "FRESH", "DATA", "DROP", "WARMUP", "FS", "RANKS", "NP", "BIND", "EASY_MIB", "HARD_SEGS", "EASY_FILES", "HARD_FILES",
			"SIZE", "JOBS":
		default:
			env = append(env, kv)
		}
	}
	for _, c := range cases {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		args := append(append([]string{script, t.TempDir()}, pairs...), disk)
		cmd := exec.CommandContext(ctx, "bash", args...)
		cmd.Env = append(env[:len(env):len(env)], c.env)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 2 {
			t.Errorf("%s %s: %v, want exit status 2\n%s", name, c.env, err, stderr.String())
			continue
		}
		if got := strings.TrimSpace(stderr.String()); got != c.want {
			t.Errorf("%s %s: stderr %q, want %q", name, c.env, got, c.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("%s %s: printed %q", name, c.env, stdout.String())
		}
		if _, err := os.Stat(disk); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s %s: the disk directory was made (%v)", name, c.env, err)
		}
	}
}
