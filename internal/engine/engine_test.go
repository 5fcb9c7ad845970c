package engine

import (
	"math/rand/v2"
	"testing"
)

func TestPermIsPermutation(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []uint64{1, 2, 3, 7, 64, 100, 1000, 4097} {
		var p Perm
		p.Init(n, r)
		seen := make([]bool, n)
		for i := uint64(0); i < n; i++ {
			v := p.Next()
			if v >= n || seen[v] {
				t.Fatalf("n=%d: value %d repeated or out of range at step %d", n, v, i)
			}
			seen[v] = true
		}
	}
}

func TestBuckets(t *testing.T) {
	for _, v := range []int64{0, 1, 63, 64, 65, 1000, 123456, 1e9, 3e12, 1 << 50} {
		i := bucketOf(v)
		if i < 0 || i >= nBuckets {
			t.Fatalf("bucketOf(%d) = %d", v, i)
		}
		mid := bucketMid(i)
		want := float64(min(v, maxValue))
		if d := (mid - want) / max(want, 1); d > 0.02 || d < -0.02 {
			t.Errorf("bucketMid(bucketOf(%d)) = %.0f, more than 2%% off", v, mid)
		}
	}
}
