package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestBenchCompare runs bench-compare.sh with one measured run and one
// warm-up per row, small files, on ext4 (O_DIRECT): it must print the four
// rows of -p 1 with fio's figure, fsbench's, their ratios and the count of
// pairs fsbench was ahead in (one pair: 0/1 or 1/1), count only
// the measured runs (the warm-up is not among them), report fsbench's
// peak memory, print the io_uring rows at two depths and the device's
// limit, with CPU and voluntary context switches per I/O, and leave
// nothing in the directory it was given.
func TestBenchCompare(t *testing.T) {
	fio, err := LookPath("fio")
	if err != nil {
		Unavailable(t, "fio not installed: %v", err)
	}
	if _, err := LookPath("python3"); err != nil {
		Unavailable(t, "python3: %v", err)
	}
	dir := Ext4(t, "2G")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(RepoRoot(), "benchmarks", "scripts", "bench-compare.sh"), dir)
	cmd.Env = append(os.Environ(), "FSBENCH="+Binary(t), "PATH="+filepath.Dir(fio)+":"+os.Getenv("PATH"),
		"SIZE=16M", "JOBS=1", "RUNS=1", "WARMUP=1", "URING_DEPTHS=1 8", "URING_RUNTIME=1", "URING_LIMIT_JOBS=2")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("bench-compare: %v\n%s", err, stderr.String())
	}
	num, ratio, ahead := `[0-9]+\.[0-9]`, `[0-9]+\.[0-9]{2}`, `[01]/1`
	for _, mode := range []string{"buffered", "direct"} {
		write := regexp.MustCompile(`(?m)^write ` + mode + ` -p 1\s+` + num + `\s+` + num + `\s+` + ratio + `\s+` + num + `\s+` + ratio + `\s+` + ratio + `\s+` + ahead + `$`)
		read := regexp.MustCompile(`(?m)^read ` + mode + ` -p 1\s+` + num + `\s+` + num + `\s+` + ratio + `\s+-\s+-\s+` + ratio + `\s+` + ahead + `$`)
		if !write.MatchString(stdout.String()) || !read.MatchString(stdout.String()) {
			t.Errorf("no write and read rows for %s -p 1 with figures and ratios:\n%s", mode, stdout.String())
		}
	}
	// One figure per tool and kind: the warm-up runs are not counted.
	runs := regexp.MustCompile(`(?m)^  runs, -p 1 direct=[01]: fio write (\S+) \| fsbench write (\S+) \| fio read (\S+) \| fsbench read (\S+)$`)
	if got := runs.FindAllString(stderr.String(), -1); len(got) != 2 {
		t.Errorf("want one measured run of each tool per row, got %d rows:\n%s", len(got), stderr.String())
	}
	if !regexp.MustCompile(`(?m)^fsbench peak memory at -p 16 .*: [1-9][0-9]* MiB$`).MatchString(stdout.String()) {
		t.Errorf("no peak memory line:\n%s", stdout.String())
	}
	// The io_uring rows: fio's and fsbench's IOPS, CPU and voluntary
	// context switches per I/O at each depth and at the device's limit,
	// with their ratios and the pairs fsbench was ahead in.
	cs := `[0-9]+\.[0-9]{3}`
	for _, d := range []string{"qd 1", "qd 8", "limit"} {
		row := regexp.MustCompile(`(?m)^randread 4K direct ext4 ` + d + `\s+[1-9][0-9]*\s+[1-9][0-9]*\s+` + ratio + `\s+` + ratio + `\s+` + ratio + `\s+` + ratio +
			`\s+` + cs + `\s+` + cs + `\s+` + ahead + `\s+[0-9.]+/[0-9.]+$`)
		if !row.MatchString(stdout.String()) {
			t.Errorf("no io_uring row %s:\n%s", d, stdout.String())
		}
	}
	ents, err := os.ReadDir(dir)
	var left []string
	for _, e := range ents {
		if e.Name() != "lost+found" { // a new ext4's own
			left = append(left, e.Name())
		}
	}
	if err != nil || len(left) != 0 {
		t.Errorf("bench-compare left %s in its directory (%v)", strings.Join(left, ", "), err)
	}
}
