package testenv

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Process is a program a test started and watches while it runs: its
// output is collected as it comes, and it can be stopped, resumed and
// signalled at chosen moments.
type Process struct {
	t        testing.TB
	Cmd      *exec.Cmd
	out, err LockedBuffer
	done     chan struct{}
	code     int
	ended    time.Time
}

// StartProcess starts cmd, collecting its stdout and stderr. A process
// still running when the test ends is killed.
func StartProcess(t testing.TB, cmd *exec.Cmd) *Process {
	t.Helper()
	p := &Process{t: t, Cmd: cmd, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = &p.out, &p.err
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %v: %v", cmd.Args, err)
	}
	go func() {
		err := cmd.Wait()
		p.ended = time.Now()
		var ee *exec.ExitError
		switch {
		case errors.As(err, &ee):
			p.code = ee.ExitCode()
		case err != nil:
			p.code = -1
		}
		close(p.done)
	}()
	t.Cleanup(func() {
		if !p.Exited() {
			_ = cmd.Process.Signal(syscall.SIGCONT)
			_ = cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// Stdout and Stderr return what the process wrote so far.
func (p *Process) Stdout() string { return p.out.String() }
func (p *Process) Stderr() string { return p.err.String() }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Signal sends sig to the process; it fails the test if the process has
// ended already.
func (p *Process) Signal(sig os.Signal) {
	p.t.Helper()
	if p.Exited() {
		p.t.Fatalf("%v ended (exit %d) before it could be sent %v; stderr:\n%s", p.Cmd.Args, p.code, sig, p.Stderr())
	}
	if err := p.Cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("signal %v: %v", sig, err)
	}
}

// Await polls cond until it holds, for at most limit; it fails the test
// if the process ends first or the time runs out.
func (p *Process) Await(what string, limit time.Duration, cond func() bool) {
	p.t.Helper()
	if p.poll(limit, cond) {
		return
	}
	if p.Exited() {
		p.t.Fatalf("waiting for %s: %v ended (exit %d); stderr:\n%s", what, p.Cmd.Args, p.code, p.Stderr())
	}
	p.t.Fatalf("waiting for %s: not within %v; stderr:\n%s", what, limit, p.Stderr())
}

// poll polls cond until it holds (true), the process ends or limit
// passes (false).
func (p *Process) poll(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if p.Exited() || time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// Wait waits at most limit for the process to end and returns its exit
// code and when it ended; it fails the test (killing the process) if it
// does not end in time.
func (p *Process) Wait(limit time.Duration) (int, time.Time) {
	p.t.Helper()
	select {
	case <-p.done:
		return p.code, p.ended
	case <-time.After(limit):
		_ = p.Cmd.Process.Signal(syscall.SIGCONT)
		_ = p.Cmd.Process.Kill()
		<-p.done
		p.t.Fatalf("%v did not end within %v; stderr:\n%s", p.Cmd.Args, limit, p.Stderr())
	}
	return 0, time.Time{}
}

// LockedBuffer is a bytes.Buffer written by one goroutine (a process's
// output copier, a command under test) and read by the test at the same
// time.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// terminate sends p SIGTERM and waits for exited to close; after grace it
// kills p and waits again.
func terminate(p *os.Process, exited <-chan struct{}, grace time.Duration) {
	_ = p.Signal(syscall.SIGTERM)
	select {
	case <-exited:
	case <-time.After(grace):
		_ = p.Kill()
		<-exited
	}
}
