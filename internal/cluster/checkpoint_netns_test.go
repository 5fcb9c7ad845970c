package cluster_test

import (
	"context"
	"testing"
)

// TestNetnsCheckpoint: a checkpoint over three test hosts. The hosts share
// one tmpfs, each writing in its own directory of the run, as they would
// on a shared file system; each host's ranks read back and verify the
// shards written on the next host.
func TestNetnsCheckpoint(t *testing.T) {
	_, agents, root := nsAgents(t, 3)
	out := coordinator(t, context.Background(), "checkpoint", root, "--model", "llama3-8b", "-p", "2", "--size", "96M",
		"--block-size", "256K", "--hosts", hostsFlag(agents...), "-o", "json")
	r := resultOf(t, out)
	if len(r.Phases) != 3 || len(r.Hosts) != 3 {
		t.Fatalf("%d phases, %d hosts", len(r.Phases), len(r.Hosts))
	}
	for _, p := range r.Phases {
		if p.Bytes != 96<<20 || p.Errors != 0 || p.Incomplete || len(p.Hosts) != 3 {
			t.Errorf("%s: %d bytes, %d errors, incomplete %v, %d hosts", p.Name, p.Bytes, p.Errors, p.Incomplete, len(p.Hosts))
		}
	}
	read := r.Phases[2]
	if read.Name != "read" || read.Items != 6 || len(read.Ranks) != 6 {
		t.Fatalf("read-back: %s, %d shards verified, %d rank rows", read.Name, read.Items, len(read.Ranks))
	}
	for _, rk := range read.Ranks {
		host := rk.Rank / 2
		if rk.Host != agents[host].addr || rk.Shard/2 != (host+1)%3 || rk.Bytes != 16<<20 || rk.Incomplete {
			t.Errorf("rank %d on %s read shard %d (%d bytes); want host %s reading host %d's",
				rk.Rank, rk.Host, rk.Shard, rk.Bytes, agents[host].addr, (host+1)%3)
		}
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}
