package train

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// TestShufflePermutes: every epoch's order is a permutation (each sample
// once), the ranks' shards are disjoint, the same seed gives the same
// order, and epochs and seeds differ.
func TestShufflePermutes(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 64, 1000, 1251 * 3} {
		seen := make([]bool, n)
		s := NewShuffle(n, 42, 0)
		for i := range n {
			v := s.At(i)
			if v < 0 || v >= n || seen[v] {
				t.Fatalf("n=%d: position %d gives %d, out of range or seen before", n, i, v)
			}
			seen[v] = true
		}
	}
	order := func(seed uint64, epoch int) []int {
		s := NewShuffle(500, seed, epoch)
		out := make([]int, 500)
		for i := range out {
			out[i] = s.At(i)
		}
		return out
	}
	same := func(a, b []int) int {
		n := 0
		for i := range a {
			if a[i] == b[i] {
				n++
			}
		}
		return n
	}
	if same(order(7, 0), order(7, 0)) != 500 {
		t.Error("one seed and epoch gave two orders")
	}
	if n := same(order(7, 0), order(7, 1)); n > 50 {
		t.Errorf("epochs 0 and 1 agree on %d of 500 positions", n)
	}
	if n := same(order(7, 0), order(8, 0)); n > 50 {
		t.Errorf("seeds 7 and 8 agree on %d of 500 positions", n)
	}
	if n := same(order(7, 0), func() []int {
		out := make([]int, 500)
		for i := range out {
			out[i] = i
		}
		return out
	}()); n > 50 {
		t.Errorf("the order keeps %d of 500 samples in place", n)
	}
}

// TestShards: the ranks' shards of an epoch are disjoint, each the plan's
// size, and together the read samples of the epoch.
func TestShards(t *testing.T) {
	p, err := NewPlan(1003, 4, 10)
	if err != nil {
		t.Fatal(err)
	}
	if p.Shard != 250 || p.Steps != 25 || p.Read() != 1000 || p.Dropped() != 3 {
		t.Fatalf("plan %+v: read %d, dropped %d; want shard 250, 25 steps, 1000 read, 3 dropped", p, p.Read(), p.Dropped())
	}
	s := NewShuffle(p.Samples, 1, 3)
	owner := map[int]int{}
	for r := range p.Ranks {
		for j := range p.Steps * p.Batch {
			v := p.Sample(s, r, j)
			if o, ok := owner[v]; ok {
				t.Fatalf("sample %d in the shards of ranks %d and %d", v, o, r)
			}
			owner[v] = r
		}
	}
	if int64(len(owner)) != p.Read() {
		t.Errorf("%d samples in the shards, want %d", len(owner), p.Read())
	}
}

func TestPlanErrors(t *testing.T) {
	for _, c := range []struct{ samples, ranks, batch int }{
		{5, 6, 1},  // more ranks than samples
		{10, 5, 2}, // one step each: none measured
		{100, 1, 60},
	} {
		if _, err := NewPlan(c.samples, c.ranks, c.batch); !errors.Is(err, ErrBadInput) {
			t.Errorf("NewPlan(%d, %d, %d): %v, want bad input", c.samples, c.ranks, c.batch, err)
		}
	}
}

// TestLoaderWindow: readers fill the batch computed and Prefetch batches
// after it, no more, until the accelerator releases one.
func TestLoaderWindow(t *testing.T) {
	const batch, prefetch, steps = 3, 2, 10
	l := newLoader(batch, prefetch)
	l.reset(steps)
	var mu sync.Mutex
	read := 0
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				slot, ok := l.take()
				if !ok {
					return
				}
				mu.Lock()
				read++
				mu.Unlock()
				l.done(slot, 100)
			}
		}()
	}
	settled := func(want int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			mu.Lock()
			n := read
			mu.Unlock()
			if n == want {
				time.Sleep(20 * time.Millisecond)
				mu.Lock()
				n = read
				mu.Unlock()
				if n == want {
					return
				}
			}
			if n > want || time.Now().After(deadline) {
				t.Fatalf("%d samples read, want %d", n, want)
			}
			time.Sleep(time.Millisecond)
		}
	}
	settled((prefetch + 1) * batch)
	for s := range steps {
		n, err := l.wait(context.Background(), s)
		if err != nil || n != batch*100 {
			t.Fatalf("step %d: %d bytes, %v", s, n, err)
		}
		l.release(s)
		settled(min(s+2+prefetch, steps) * batch)
	}
	wg.Wait()
}

// TestLoaderStop: a stop wakes the accelerator with the readers' error.
func TestLoaderStop(t *testing.T) {
	l := newLoader(2, 1)
	l.reset(5)
	boom := errors.New("boom")
	go func() {
		time.Sleep(10 * time.Millisecond)
		l.stop(boom)
	}()
	if _, err := l.wait(context.Background(), 0); !errors.Is(err, boom) {
		t.Fatalf("wait: %v, want the readers' error", err)
	}
	if _, ok := l.take(); ok {
		t.Fatal("a stopped loader gave a slot")
	}
}
