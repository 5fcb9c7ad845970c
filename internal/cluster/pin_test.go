//go:build linux

package cluster

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/report"
)

// baseRunner prepares jobs that write RunName/host-0/f in their PATH as
// a real run does: in job.Base when the agent set it, else by name.
type baseRunner struct {
	target  string
	proceed chan struct{} // the run waits for it, when not nil
}

func (b *baseRunner) Prepare(job *Job, _ map[string]string, _ func(string) error) (Prepared, error) {
	return &baseJob{b, job}, nil
}

type baseJob struct {
	*baseRunner
	job *Job
}

func (b *baseJob) Target() string  { return b.target }
func (b *baseJob) Paths() []string { return nil }
func (b *baseJob) Run(context.Context, Gate) (*report.Result, error) {
	if b.proceed != nil {
		<-b.proceed
	}
	base := b.job.Base
	if base == "" {
		base = filepath.Join(b.target, b.job.RunName)
	}
	host := filepath.Join(base, HostDir(b.job.Index))
	if err := os.Mkdir(host, 0o755); err != nil {
		return nil, err
	}
	return &report.Result{}, os.WriteFile(filepath.Join(host, "f"), []byte("x"), 0o644)
}

// pinAgent is an agent allowing root whose jobs work in target.
func pinAgent(t *testing.T, root, target string, proceed chan struct{}) *httptest.Server {
	t.Helper()
	a, err := NewAgent(AgentOptions{Token: "tok", Roots: []string{root}, Runner: &baseRunner{target, proceed}, Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(a)
	t.Cleanup(func() { a.Close(); srv.Close() })
	return srv
}

func postPinJob(t *testing.T, srv *httptest.Server, run string) (int, string) {
	t.Helper()
	body, _ := json.Marshal(Job{Command: "bench", RunName: run, Hosts: 1})
	resp := do(t, srv, "POST", "/v1/jobs", "tok", body)
	var acc Accepted
	if resp.StatusCode != http.StatusOK {
		var e struct{ Error string }
		_ = json.NewDecoder(resp.Body).Decode(&e)
		return resp.StatusCode, e.Error
	}
	_ = json.NewDecoder(resp.Body).Decode(&acc)
	return resp.StatusCode, acc.ID
}

func empty(t *testing.T, dir string) {
	t.Helper()
	if l, _ := os.ReadDir(dir); len(l) > 0 {
		t.Fatalf("written outside the allowed root, in %s: %v", dir, l)
	}
}

// A PATH under an allowed root that is, or passes through, a symbolic
// link to a directory outside it is refused before anything is made.
func TestAgentTargetLinkOutRefused(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "out")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(outside, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, target := range []string{filepath.Join(root, "out"), filepath.Join(root, "out", "in")} {
		srv := pinAgent(t, root, target, nil)
		code, msg := postPinJob(t, srv, "r")
		if code != http.StatusUnprocessableEntity || !strings.Contains(msg, "not under an allowed root") || strings.Contains(msg, "\n") {
			t.Errorf("%s: %d %q, want a one-line refusal", target, code, msg)
		}
	}
	empty(t, filepath.Join(outside, "in"))
}

// exchange swaps two names atomically (renameat2 RENAME_EXCHANGE).
func exchange(t *testing.T, a, b string) {
	t.Helper()
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		t.Skipf("rename exchange: %v", err)
	}
}

// PATH checked, then swapped for a link out of the allowed root before
// the run writes: the run still writes in the directory that was checked.
func TestAgentTargetSwappedAfterCheck(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	target, alt := filepath.Join(root, "d"), filepath.Join(root, "alt")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, alt); err != nil {
		t.Fatal(err)
	}
	proceed := make(chan struct{})
	srv := pinAgent(t, root, target, proceed)
	code, id := postPinJob(t, srv, "r")
	if code != http.StatusOK {
		t.Fatalf("prepare: %d %s", code, id)
	}
	exchange(t, target, alt) // d is now the link out; the checked directory is alt
	close(proceed)
	do(t, srv, "DELETE", "/v1/jobs/"+id, "tok", nil) // waits for the run to end
	empty(t, outside)
	if _, err := os.Stat(filepath.Join(alt, "r", HostDir(0), "f")); err != nil {
		t.Errorf("the run did not write in the checked directory: %v", err)
	}
}

// An error of the run names its directory as PATH/RunName, not by the
// descriptor the run reached it through.
func TestAgentNamesRunDir(t *testing.T) {
	j := &agentJob{job: &Job{Base: "/proc/self/fd/7"}, base: "/mnt/x/r"}
	if got := j.named("create /proc/self/fd/7/host-0/f: no space"); got != "create /mnt/x/r/host-0/f: no space" {
		t.Errorf("named: %q", got)
	}
	j.job.Path = "/proc/self/fd/6"
	if got := j.named("tree /proc/self/fd/6/keep: no space; /proc/self/fd/7/f"); got != "tree /mnt/x/keep: no space; /mnt/x/r/f" {
		t.Errorf("named: %q", got)
	}
}

// PATH flips between a directory and a link out of the allowed root
// while jobs are checked, made and run: every job is refused or works in
// the directory, and nothing outside the root is ever made.
func TestAgentTargetRace(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	target, alt := filepath.Join(root, "d"), filepath.Join(root, "alt")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, alt); err != nil {
		t.Fatal(err)
	}
	exchange(t, target, alt)
	exchange(t, target, alt)
	srv := pinAgent(t, root, target, nil)
	stop := make(chan struct{})
	swapped := make(chan struct{})
	go func() {
		defer close(swapped)
		for {
			select {
			case <-stop:
				return
			default:
				_ = unix.Renameat2(unix.AT_FDCWD, target, unix.AT_FDCWD, alt, unix.RENAME_EXCHANGE)
			}
		}
	}()
	accepted := 0
	for i := range 200 {
		code, id := postPinJob(t, srv, "r"+strconv.Itoa(i)) // a name of its own: the run keeps its file
		if code == http.StatusOK {
			accepted++
			do(t, srv, "DELETE", "/v1/jobs/"+id, "tok", nil)
		}
	}
	close(stop)
	<-swapped
	empty(t, outside)
	t.Logf("%d of 200 jobs accepted", accepted)
}
