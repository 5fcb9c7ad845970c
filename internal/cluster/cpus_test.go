package cluster

import (
	"slices"
	"testing"
)

// TestIdleCPUs: a host's job names the CPUs of the other hosts on its
// machine that it does not run on, whatever their order; not those of
// another machine, and none when the machine is not known.
func TestIdleCPUs(t *testing.T) {
	hosts := []*host{
		{info: Info{Machine: "a", CPUs: []int{0}}},
		{info: Info{Machine: "a", CPUs: []int{3, 1}}},
		{info: Info{Machine: "b", CPUs: []int{2}}},
		{info: Info{Machine: "a", CPUs: []int{1, 0}}},
		{info: Info{CPUs: []int{5}}},
	}
	c := &Coordinator{}
	want := [][]int{{1, 3}, {0}, nil, {3}, nil}
	for i, h := range hosts {
		if got := c.jobFor(Job{}, h, hosts).IdleCPUs; !slices.Equal(got, want[i]) {
			t.Errorf("host %d (%+v): idle CPUs %v, want %v", i, h.info, got, want[i])
		}
	}
}
