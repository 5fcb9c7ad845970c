package testenv

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// Job files in the style of fio's examples/ folder, written for this
// test: fio-examples.sh reads a checkout's examples/ the same way.
var fioExamples = map[string]string{
	"tiobench-like.fio": `; four phases of 4 threads, one after another
[global]
direct=1
size=512m
bsrange=4k-4k
timeout=60
numjobs=4
[f1]
rw=write
[f2]
stonewall
rw=randwrite
[f3]
stonewall
rw=read
[f4]
stonewall
rw=randread
`,
	"same-at-once.fio": `; identical jobs at the same time: one phase of their threads
[global]
ioengine=psync
rw=randread
bs=16k
size=512m
[t0]
[t1]
[t2]
`,
	"abs-file.fio": `[global]
filename=/tmp/testfile
bs=64k
[w]
rw=write
size=512m
verify=md5
`,
	"think.fio": `[job]
rw=read
size=512m
thinktime=2000
`,
	"timed.fio": `[job]
rw=randrw
rwmixread=70
size=512m
time_based
runtime=900
`,
}

// fio-examples.sh runs each job file through fsbench fio and fio with
// sizes scaled down: the files fsbench takes move the same bytes and
// operations (an absolute filename lands in the run's directory, not in
// /tmp), a time-based one is said to be, and one with an option fsbench
// cannot honour is refused by name without fio being run on it.
func TestFioExamplesScript(t *testing.T) {
	NeedsServer(t, "fio")
	fio, err := LookPath("fio")
	if err != nil {
		Unavailable(t, "fio not installed: %v", err)
	}
	if _, err := LookPath("python3"); err != nil {
		Unavailable(t, "python3: %v", err)
	}
	src := t.TempDir()
	if err := os.Mkdir(filepath.Join(src, "examples"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, text := range fioExamples {
		if err := os.WriteFile(filepath.Join(src, "examples", name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	work := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(RepoRoot(), "benchmarks", "scripts", "fio-examples.sh"), src, work)
	cmd.Env = append(os.Environ(), "FSBENCH="+Binary(t), "FIO="+fio, "SIZE=1m", "RUNTIME=1")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("fio-examples.sh: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		`(?m)^tiobench-like.fio +16777216/4096 +16777216/4096 +same$`,
		`(?m)^same-at-once.fio +3145728/192 +3145728/192 +same$`,
		`(?m)^abs-file.fio +2097152/32 +2097152/32 +same$`,
		`(?m)^think.fio +- +- +refused: think.fio:4: thinktime=2000: fsbench's threads do not pause between operations$`,
		`(?m)^timed.fio +\d+/\d+ +\d+/\d+ +time-based \(1s\)`,
		`(?m)^same: 3, time-based: 1, refused: 1, differ: 0$`,
	} {
		if !regexp.MustCompile(want).MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if left, _ := os.ReadDir(work); len(left) != 5 {
		t.Errorf("work directory holds %d entries, want the 5 examples' directories", len(left))
	}
}
