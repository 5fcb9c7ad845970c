package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

// The guide's multi-host vdbench file, its three hd= hosts being three
// real agents on loopback and its anchor the test's: fsbench vdbench runs
// it as the many-host run of --hosts, the hosts splitting the tree
// (shared=yes), each its part in its own directory of the run, removed
// at the end.
func TestVdbenchGuideFileOnThreeAgents(t *testing.T) {
	root := t.TempDir()
	a, b, c := startAgent(t, root), startAgent(t, root), startAgent(t, root)
	guide, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "examples", "vdbench", "jfs-test"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.NewReplacer("system=node0", "system="+a.addr, "system=node1", "system="+b.addr,
		"system=node2", "system="+c.addr, "anchor=/mnt/jfs/vdbench", "anchor="+filepath.Join(root, "vdbench")).Replace(string(guide))
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
	if f := r.Phases[0]; f.Items != 300 || f.Bytes != 300*128<<10 || f.Errors != 0 {
		t.Errorf("format: %d files, %d bytes, %d errors; want 300 files of 128 KiB", f.Items, f.Bytes, f.Errors)
	}
	if p := r.Phases[1]; p.Ops == 0 || p.Bytes != p.Ops*128<<10 || p.Errors != 0 {
		t.Errorf("rd1: %d reads, %d bytes, %d errors; want 128 KiB reads", p.Ops, p.Bytes, p.Errors)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}
