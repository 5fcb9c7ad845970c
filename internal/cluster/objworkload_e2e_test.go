package cluster_test

import (
	"context"
	"testing"

	"github.com/fsbench/fsbench/internal/testenv"
)

// An object workload (the mix) on two loopback agents: the merged result
// holds both hosts' operations in every row, the rows of the operations
// add up to the total, and the time to first byte survives the merge.
func TestObjWorkloadOnTwoHosts(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	a, b, ca := tlsAgents(t, t.TempDir())
	out := coordinator(t, context.Background(), "objbench", "--storage", "minio", m.URL("hosts-workload"),
		"--access-key", m.AccessKey, "--secret-key", m.SecretKey, "--workload", "mixed", "--objects", "30", "--obj-size", "16K",
		"--ops", "200", "-p", "2", "--hosts", hostsFlag(a, b), "--tls-ca", ca, "-o", "json")
	r := resultOf(t, out)
	total := r.FindPhase("mixed")
	if total == nil || total.Ops != 400 || len(total.Hosts) != 2 || len(r.Hosts) != 2 {
		t.Fatalf("mixed on two hosts of 200 operations each: %+v", total)
	}
	var sum int64
	for _, op := range []string{"get", "stat", "put", "delete"} {
		p := r.FindPhase("mixed-" + op)
		if p == nil || len(p.Hosts) != 2 {
			t.Fatalf("row mixed-%s not merged from two hosts: %+v", op, p)
		}
		sum += p.Ops
	}
	get := r.FindPhase("mixed-get")
	if sum != total.Ops || get.TTFB == nil || get.TTFB.Count != get.Ops {
		t.Errorf("operation rows add up to %d of %d; get's time to first byte %+v for %d gets", sum, total.Ops, get.TTFB, get.Ops)
	}
}
