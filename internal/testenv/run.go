package testenv

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// Output is what a run of the fsbench binary printed and how it ended.
type Output struct {
	Stdout, Stderr string
	Code           int // exit code
	Took           time.Duration
}

// Run runs the fsbench binary with args, in a clean environment (PATH,
// HOME, NO_COLOR=1) plus env, and waits for it. Cancelling ctx sends
// SIGINT, as Ctrl-C would, and the run is given 30 s to end after it.
func Run(t testing.TB, ctx context.Context, env []string, args ...string) Output {
	t.Helper()
	cmd := exec.CommandContext(ctx, Binary(t), args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "NO_COLOR=1"}, env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGINT) }
	cmd.WaitDelay = 30 * time.Second
	t0 := time.Now()
	err := cmd.Run()
	r := Output{Stdout: out.String(), Stderr: errb.String(), Took: time.Since(t0)}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		r.Code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return r
}
