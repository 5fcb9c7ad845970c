package cluster_test

// What an agent refuses to a client that holds the token: real agents
// over HTTP.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// postJob sends a job to the agent as any client with the token could,
// and returns the answer's status and body. A job taken is removed again.
func postJob(t *testing.T, a *agent, job map[string]any) (int, string) {
	t.Helper()
	body, _ := json.Marshal(job)
	req, _ := http.NewRequest("POST", "http://"+a.addr+"/v1/jobs", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST /v1/jobs %v: %v\nagent log:\n%s", job["args"], err, a.log)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var acc struct{ ID string }
	if resp.StatusCode == http.StatusOK && json.Unmarshal(b, &acc) == nil && acc.ID != "" {
		del, _ := http.NewRequest("DELETE", "http://"+a.addr+"/v1/jobs/"+acc.ID, nil)
		del.Header.Set("Authorization", "Bearer "+testToken)
		if r, err := http.DefaultClient.Do(del); err == nil {
			r.Body.Close()
		}
	}
	return resp.StatusCode, string(b)
}

func job(command string, args ...string) map[string]any {
	return map[string]any{"command": command, "args": args, "run_name": "x", "index": 0, "hosts": 1, "seed": 1}
}

// A job may not make an agent read a file of its host, whatever flag
// names it: the coordinator's flags are refused, a file flag reads only
// what the job carries, and no error carries a file's content.
func TestAgentReadsNoFileOfItsHost(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	const envSecret, fileSecret = "env-secret-4f1c9e", "file-secret-8b2d7a"
	secret := filepath.Join(outside, "secret")
	if err := os.WriteFile(secret, []byte(fileSecret+" host:1\n"+fileSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := startAgentEnv(t, []string{"SECRET_KEY=" + envSecret}, root)
	for _, c := range []struct {
		args []string
		want string // in the error
	}{
		{[]string{"bench", root, "--expect-file", "/proc/self/environ"}, "--expect-file"},
		{[]string{"bench", root, "--hosts-file", secret}, "--hosts-file"},
		{[]string{"bench", root, "--baseline", secret}, "--baseline"},
		{[]string{"bench", root, "--token-file", secret, "--hosts", "a:1"}, "--"},
		{[]string{"bench", root, "-f", secret}, "--job"},
		{[]string{"bench", root, "--workload=" + secret}, "--workload"},
		{[]string{"train", root, "-f", secret}, "--job"},
		{[]string{"objbench", "--storage", "minio", "http://127.0.0.1:1/b", "--ca-cert", secret}, "--ca-cert"},
		{[]string{"bench", root, "--access-log", filepath.Join(outside, "log")}, "--access-log"},
		{[]string{"bench", root, "--result-file", filepath.Join(outside, "r.json")}, "--result-file"},
		{[]string{"bench", root, "--html", filepath.Join(outside, "r.html")}, "--html"},
		{[]string{"bench", root, "--help"}, "--help"},
		{[]string{"train", root, "--print-job"}, "--print-job"},
		{[]string{"train", root, "--dataset", outside}, "outside the allowed roots"},
	} {
		code, body := postJob(t, a, job(c.args[0], c.args[1:]...))
		if code != http.StatusUnprocessableEntity || !strings.Contains(body, c.want) {
			t.Errorf("%v: %d %s, want 422 naming %s", c.args, code, body, c.want)
		}
		for _, s := range []string{envSecret, fileSecret} {
			if strings.Contains(body, s) {
				t.Errorf("%v: the answer carries a file's content: %s", c.args, body)
			}
		}
	}
	if strings.Contains(a.log.String(), envSecret) || strings.Contains(a.log.String(), fileSecret) {
		t.Errorf("the agent's log carries a file's content:\n%s", a.log)
	}
	if l := left(t, outside); len(l) != 1 {
		t.Errorf("written outside the allowed root: %v", l)
	}
	// A workload file the job carries is read, under the agent's own name.
	wl := []byte("phases:\n  - name: w\n    op: write\n    file_size: 64K\n")
	j := job("bench", root, "-f", "/nowhere/w.yaml")
	j["files"] = map[string][]byte{"/nowhere/w.yaml": wl}
	if code, body := postJob(t, a, j); code != http.StatusOK {
		t.Errorf("a job carrying its workload file: %d %s", code, body)
	}
}

// A kept tree (--tree-dir, tree.dir) reached through a symbolic link that
// leads outside the allowed root is refused before anything is written.
func TestAgentTreeDirThroughSymlink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "escape")); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, root)
	wl := filepath.Join(t.TempDir(), "tree.yaml")
	if err := os.WriteFile(wl, []byte("tree:\n  depth: 1\n  width: 2\n  files: 2\n  file_size: 4K\n  dir: escape/sub\n"+
		"phases:\n  - name: c\n    op: create\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--depth", "1", "--width", "2", "--files", "2", "--file-size", "4K", "--rw", "create", "--tree-dir", "escape/sub"},
		{"-f", wl},
	} {
		out := coordinator(t, context.Background(), append([]string{"bench", root, "--hosts", a.addr}, args...)...)
		if out.Code != 2 || !strings.Contains(out.Stderr, "outside the allowed roots") || !strings.Contains(out.Stderr, a.addr) {
			t.Errorf("%v: exit %d, want 2, a refusal naming the host:\n%s", args, out.Code, out.Stderr)
		}
		if l := left(t, outside); len(l) != 0 {
			t.Fatalf("%v: written outside the allowed root: %v", args, l)
		}
	}
	if l := left(t, root); len(l) != 1 {
		t.Errorf("a refused run left %v", l)
	}
}

// A job's file whose name is no file name is refused, and the agent's
// directory for the job's files is removed whatever happens.
func TestAgentJobFileNames(t *testing.T) {
	root, tmp := t.TempDir(), t.TempDir()
	a := startAgentEnv(t, []string{"TMPDIR=" + tmp}, root)
	for _, name := range []string{"..", "/", "", "a/..", "."} {
		j := job("bench", root, "-f", name)
		j["files"] = map[string][]byte{name: []byte("phases: []\n")}
		if code, body := postJob(t, a, j); code != http.StatusUnprocessableEntity || !strings.Contains(body, "bad file name") {
			t.Errorf("file name %q: %d %s, want 422 bad file name", name, code, body)
		}
		if l := left(t, tmp); len(l) != 0 {
			t.Fatalf("file name %q: left %v in the agent's TMPDIR", name, l)
		}
	}
	j := job("bench", root, "-f", "w.yaml")
	j["files"] = map[string][]byte{"w.yaml": []byte("not: a workload\n")}
	if code, _ := postJob(t, a, j); code != http.StatusUnprocessableEntity {
		t.Errorf("a bad workload file: %d, want 422", code)
	}
	if l := left(t, tmp); len(l) != 0 {
		t.Errorf("a refused workload left %v in the agent's TMPDIR", l)
	}
}
