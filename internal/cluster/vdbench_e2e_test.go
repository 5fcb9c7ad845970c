package cluster_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

// runGuideFile runs the guide's multi-host vdbench file, its hosts node0,
// node1 and node2 being systems[0..2] and its anchor in root, scaled down,
// and checks the run: the hosts split the tree (shared=yes), each its
// part in its own directory of the run, removed at the end.
func runGuideFile(t *testing.T, root string, systems [3]string) {
	t.Helper()
	guide, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "examples", "vdbench", "jfs-test"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("system=node0", "system="+systems[0], "system=node1", "system="+systems[1],
		"system=node2", "system="+systems[2], "anchor=/mnt/jfs/vdbench", "anchor="+filepath.Join(root, "vdbench")).Replace(string(guide))
	parm := filepath.Join(t.TempDir(), "jfs-test")
	if err := os.WriteFile(parm, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	r := resultOf(t, coordinator(t, context.Background(), "vdbench", "-f", parm, "--scale", "0.001", "-o", "json"))
	if len(r.Hosts) != 3 || len(r.Phases) != 2 || r.Phases[0].Name != "rd1-format" || r.Phases[1].Name != "rd1" {
		t.Fatalf("%d hosts, phases %+v", len(r.Hosts), r.Phases)
	}
	// files=3000 scaled to 3 a directory, split over 3 hosts: 1 each in
	// each of the 100 directories, 128 KiB each, written whole.
	if f := r.Phases[0]; f.Items != 300 || f.Bytes != 300*128<<10 || f.Errors != 0 || len(f.Hosts) != 3 {
		t.Errorf("format: %d files, %d bytes, %d errors, %d hosts; want 300 files of 128 KiB on 3", f.Items, f.Bytes, f.Errors, len(f.Hosts))
	}
	if p := r.Phases[1]; p.Ops == 0 || p.Bytes != p.Ops*128<<10 || p.Errors != 0 {
		t.Errorf("rd1: %d reads, %d bytes, %d errors; want 128 KiB reads", p.Ops, p.Bytes, p.Errors)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// The guide's file on three real agents on loopback, each system= given
// its port.
func TestVdbenchGuideFileOnThreeAgents(t *testing.T) {
	root := t.TempDir()
	a, b, c := startAgent(t, root), startAgent(t, root), startAgent(t, root)
	runGuideFile(t, root, [3]string{a.addr, b.addr, c.addr})
}

// The guide's file on three test hosts (network namespaces), each agent on
// fsbench agent's port: system= is only the host's address, as in the
// guide, and the hosts are reached on port 7781.
func TestVdbenchGuideFileOnTestHosts(t *testing.T) {
	hosts := testenv.NewHosts(t, 3)
	root := t.TempDir()
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte(testToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var systems [3]string
	for i := range systems {
		h := hosts.Host(i)
		cmd := h.Command(context.Background(), testenv.Binary(t), "agent", "--listen", net.JoinHostPort(h.Addr(), "7781"),
			"--token-file", tok, "--allow-root", root)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}
		serveAgent(t, cmd)
		systems[i] = h.Addr()
	}
	runGuideFile(t, root, systems)
}
