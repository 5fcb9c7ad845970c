package replay

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// The caches of the last map entries used answer what the maps answer,
// through any sequence of sets, gets and deletes.
func TestLastEntryCaches(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var c last64
	m, want := map[uint64]int32{}, map[uint64]int32{}
	for i := range 20000 {
		k, v := rng.Uint64N(8), int32(i)
		switch rng.IntN(3) {
		case 0:
			c.set(m, k, v)
			want[k] = v
		case 1:
			c.del(m, k)
			delete(want, k)
		}
		got, ok := c.get(m, k)
		if w, wok := want[k]; got != w || ok != wok {
			t.Fatalf("step %d: key %d gives %d %v, want %d %v", i, k, got, ok, w, wok)
		}
	}

	f := newFSB(newBuilder(""))
	nodes := map[string]int32{}
	open := map[streamPath]int32{}
	for i := range 20000 {
		p, s := fmt.Sprintf("/d%d/f%d", rng.IntN(2), rng.IntN(4)), int32(rng.IntN(3))
		switch rng.IntN(5) {
		case 0:
			f.forget(p)
			delete(nodes, p)
		case 3: // a rename of p over q, as fsb.rename does it
			q := fmt.Sprintf("/d%d/f%d", rng.IntN(2), rng.IntN(4))
			n := f.node(p)
			f.node(q)
			f.forget(p)
			f.paths[q] = n
			delete(nodes, p)
			nodes[q] = n
		case 1:
			f.setOpen(s, p, int32(i))
			open[streamPath{s, p}] = int32(i)
		case 2:
			f.closeOpen(s, p)
			delete(open, streamPath{s, p})
		}
		for q, n := range nodes {
			if f.node(q) != n {
				t.Fatalf("step %d: node of %s is %d, was %d", i, q, f.node(q), n)
			}
		}
		if n, ok := nodes[p]; ok && f.node(p) != n {
			t.Fatalf("step %d: node of %s is %d, was %d", i, p, f.node(p), n)
		}
		nodes[p] = f.node(p)
		h, ok := f.openOf(s, p)
		if w, wok := open[streamPath{s, p}]; h != w || ok != wok {
			t.Fatalf("step %d: stream %d's handle of %s is %d %v, want %d %v", i, s, p, h, ok, w, wok)
		}
	}
}
