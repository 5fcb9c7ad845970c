package cluster

import "testing"

// TestProgressSum: the hosts' progress adds up only over the hosts in the
// phase; a total is known when every host knows its own.
func TestProgressSum(t *testing.T) {
	hosts := []*host{
		{prog: &Progress{Phase: "write-big", Done: 5, Total: 8, Unit: "blocks"}},
		{prog: &Progress{Phase: "write-big", Done: 3, Total: 8, Unit: "blocks"}},
	}
	if got := sum(hosts, "write-big"); got != (Progress{Phase: "write-big", Done: 8, Total: 16, Unit: "blocks"}) {
		t.Errorf("two hosts: %+v", got)
	}
	hosts[1].prog = &Progress{Phase: "create", Done: 3, Total: -1, Unit: "ops"}
	if got := sum(hosts, "write-big"); got.Done != 5 || got.Total != -1 {
		t.Errorf("one host still in another phase: %+v", got)
	}
	hosts[0].prog = &Progress{Phase: "create", Done: 4, Total: -1, Unit: "ops"}
	if got := sum(hosts, "create"); got.Done != 7 || got.Total != -1 || got.Unit != "ops" {
		t.Errorf("a timed phase: %+v", got)
	}
	hosts[1].prog = nil
	if got := sum(hosts, "create"); got.Done != 4 || got.Total != -1 {
		t.Errorf("a host yet to tell: %+v", got)
	}
}
