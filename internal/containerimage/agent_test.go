package containerimage

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// The image serves a real run on many hosts: one agent is a container of
// the image in its test host's network namespace, the other the binary in
// another; the coordinator, outside, runs bench on both.
func TestImageAgentOnTestHost(t *testing.T) {
	img := image(t)
	hosts := testenv.NewHosts(t, 2)
	root := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256m", "fsbench-imagetest", root).CombinedOutput(); err != nil {
		testenv.Unavailable(t, "mount a tmpfs: %v: %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", root).Run() })
	tokDir := t.TempDir()
	const token = "image agent token"
	if err := os.WriteFile(filepath.Join(tokDir, "token"), []byte(token), 0o644); err != nil {
		t.Fatal(err)
	}
	boxed := net.JoinHostPort(hosts.Host(0).Addr(), "7781")
	name := "fsbench-imagetest-agent-" + randomHex(4)
	out, err := img.podmanRun(context.Background(), "run", "-d", "--rm", "--name", name,
		"--network", "ns:/var/run/netns/"+hosts.Host(0).Name(), "--user", "0",
		"-v", root+":"+root, "-v", tokDir+":/etc/fsbench:ro", img.ref,
		"agent", "--listen", boxed, "--token-file", "/etc/fsbench/token", "--allow-root", root)
	if err != nil {
		t.Fatalf("podman run the agent: %v\n%s", err, out)
	}
	t.Cleanup(func() { img.podmanRun(context.Background(), "rm", "--force", "--ignore", name) })
	native := net.JoinHostPort(hosts.Host(1).Addr(), "7781")
	cmd := hosts.Host(1).Command(context.Background(), testenv.Binary(t), "agent", "--listen", native,
		"--token-file", filepath.Join(tokDir, "token"), "--allow-root", root)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, addr := range []string{boxed, native} {
		if !reachable(addr, 30*time.Second) {
			logs, _ := img.podmanRun(context.Background(), "logs", name)
			t.Fatalf("agent %s does not answer; container log:\n%s", addr, logs)
		}
	}
	run := exec.Command(testenv.Binary(t), "bench", root, "-p", "2", "--big-file-size", "8M", "--small-file-count", "10",
		"--small-file-size", "16K", "--hosts", boxed+","+native, "--read-others", "-o", "json")
	run.Env = []string{"PATH=" + os.Getenv("PATH"), "FSBENCH_TOKEN=" + token}
	stdout, err := run.Output()
	if err != nil {
		t.Fatalf("coordinator: %v\n%s", err, stdout)
	}
	res, err := report.ReadJSON(strings.NewReader(string(stdout)))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Hosts) != 2 || res.Hosts[0].Version != img.version || res.TotalErrors() != 0 {
		t.Fatalf("hosts %+v, errors %d; want the container's agent of version %s first", res.Hosts, res.TotalErrors(), img.version)
	}
	if p := res.FindPhase("write-big"); p == nil || p.Ops != 2*2*8 || len(p.Hosts) != 2 {
		t.Fatalf("write-big: %+v", p)
	}
	if ents, _ := os.ReadDir(root); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

func reachable(addr string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return true
		}
		time.Sleep(200 * time.Millisecond)
	}
	return false
}
