package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestTrainInterruptEachPhase: Ctrl-C to the binary while it generates
// the dataset and while it trains: exit 130, the result so far printed
// with the phase marked incomplete, the run's directory removed, the
// user's file untouched.
func TestTrainInterruptEachPhase(t *testing.T) {
	for _, phase := range []string{"generate", "train"} {
		t.Run(phase, func(t *testing.T) {
			dir := testenv.Tmpfs(t, "1g")
			check := plant(t, dir)
			cmd := exec.Command(testenv.Binary(t), "train", dir, "--json", "--dataset-files", "20000", "--samples-per-file", "1",
				"--sample-size", "16K", "--batch-size", "10", "-p", "2", "--compute-time", "100ms", "--gen-threads", "1")
			cmd.Env = append(os.Environ(), "NO_COLOR=1")
			p := testenv.StartProcess(t, cmd)
			if phase == "generate" {
				p.Await("files generated", time.Minute, func() bool {
					m, _ := filepath.Glob(filepath.Join(dir, "fsbench-*", "sample-*"))
					return len(m) >= 10
				})
			} else {
				p.Await("training", 2*time.Minute, func() bool { return strings.Contains(p.Stderr(), "Generate:") })
			}
			p.Signal(syscall.SIGSTOP)
			if phase == "generate" && strings.Contains(p.Stderr(), "Generate:") {
				t.Fatal("the generation ended before it could be interrupted")
			}
			p.Signal(syscall.SIGINT)
			p.Signal(syscall.SIGCONT)
			code, _ := p.Wait(2 * time.Minute)
			b := &benchRun{Process: p, t: t}
			r := b.result()
			last := r.Phases[len(r.Phases)-1]
			if code != ExitInterrupted || !r.Interrupted || last.Name != phase || !last.Incomplete {
				t.Errorf("exit %d, interrupted %v, last phase %s incomplete %v; want 130 in %s\n%s", code, r.Interrupted, last.Name, last.Incomplete, phase, p.Stderr())
			}
			check()
		})
	}
}
