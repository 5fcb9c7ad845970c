package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/io500"
	"github.com/fsbench/fsbench/internal/testenv"
)

// io500 on three hosts of two ranks each: one merged result with every
// phase, exact counts over the six ranks (each host's ranks stat, read and
// delete the next host's files), every byte read back verified, scores
// from the merged phases, and nothing left. The hosts share this machine's
// device, whose counter each saw grow by what all three read: the merged
// origin counts it once (about what was read), not three times.
func TestIO500ThreeHosts(t *testing.T) {
	// A loop device of its own: the counter of a disk other tests read
	// too would count their reads as well.
	root := filepath.Join(testenv.LoopExt4(t, "128M"), "run")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b, c := startAgent(t, root), startAgent(t, root), startAgent(t, root)
	out := coordinator(t, context.Background(), "io500", root, "-p", "2", "--quick", "--verify", "--mdtest-easy-files", "100",
		"--mdtest-hard-files", "80", "--ior-hard-segments", "40", "--ior-easy-transfers", "3", "--ior-easy-xfer", "1M",
		"--drop-caches", "always", "--hosts", hostsFlag(a, b, c), "-o", "json")
	r := resultOf(t, out)
	if len(r.Phases) != len(io500.Order) || len(r.Hosts) != 3 || r.IO500 == nil || r.IO500.Score <= 0 {
		t.Fatalf("%d phases, %d hosts, %+v", len(r.Phases), len(r.Hosts), r.IO500)
	}
	want := map[string][2]int64{ // items, bytes
		"ior-easy-write": {6 * 3, 6 * 3 << 20}, "ior-easy-read": {6 * 3, 6 * 3 << 20},
		"ior-hard-write": {6 * 40, 6 * 40 * io500.HardXfer}, "ior-hard-read": {6 * 40, 6 * 40 * io500.HardXfer},
		"mdtest-easy-write": {600, 0}, "mdtest-easy-stat": {600, 0}, "mdtest-easy-delete": {600, 0},
		"mdtest-hard-write": {480, 480 * io500.HardFileSize}, "mdtest-hard-stat": {480, 0},
		"mdtest-hard-read": {480, 480 * io500.HardFileSize}, "mdtest-hard-delete": {480, 0},
	}
	for _, p := range r.Phases {
		if w, ok := want[p.Name]; ok && (p.Items != w[0] || p.Bytes != w[1] || p.Errors != 0) {
			t.Errorf("%s: %d items, %d bytes, %d errors; want %v", p.Name, p.Items, p.Bytes, p.Errors, w)
		}
	}
	for _, name := range []string{"ior-easy-read", "mdtest-hard-read"} {
		p := r.FindPhase(name)
		if p == nil {
			t.Fatalf("no phase %s", name)
		}
		o := p.Origin
		if o == nil || o.StorageBytes == nil || o.ReadBytes != p.Bytes || *o.StorageBytes < p.Bytes*9/10 || *o.StorageBytes > p.Bytes*3/2 {
			t.Errorf("%s, caches dropped: origin %+v (storage %v, device %v): want about its %d bytes from the storage, counted once", name, o, deref(o.StorageBytes), deref(o.DeviceBytes), p.Bytes)
		}
	}
	if s := io500.ScoresOf(r.Phases); s.Total != r.IO500.Score {
		t.Errorf("score %v, from the merged phases %v", r.IO500.Score, s.Total)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// TestIO500ThreeHostsNoRoom: on a 16 MiB tmpfs all three hosts share, one
// host's 9 MiB would fit but the run's 27 MiB do not: every agent refuses
// the job in the preflight, before anything is made, naming both sizes.
func TestIO500ThreeHostsNoRoom(t *testing.T) {
	root := filepath.Join(testenv.Tmpfs(t, "16m"), "run")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	a, b, c := startAgent(t, root), startAgent(t, root), startAgent(t, root)
	args := []string{"io500", root, "-p", "1", "--ior-easy-transfers", "8", "--ior-easy-xfer", "1M",
		"--ior-hard-segments", "20", "--mdtest-easy-files", "10", "--mdtest-hard-files", "10", "--stonewall", "20s",
		"--hosts", hostsFlag(a, b, c)}
	out := coordinator(t, context.Background(), args...)
	if out.Code != 2 || !strings.Contains(out.Stderr, "preflight: 3 hosts: path "+root+": 16.0 MiB free, the job needs 26.8 MiB") {
		t.Errorf("exit %d, want 2 naming the three hosts' need; stderr:\n%s", out.Code, out.Stderr)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
	out = coordinator(t, context.Background(), append(args, "--ior-easy-transfers", "1")...)
	if out.Code != 0 {
		t.Errorf("amounts that fit (3 MiB): exit %d; stderr:\n%s", out.Code, out.Stderr)
	}
}

// deref is *p, or -1 for nil: a counter as a message shows it.
func deref(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}
