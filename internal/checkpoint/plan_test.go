package checkpoint

import (
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/units"
)

func TestNewPlan(t *testing.T) {
	for _, tc := range []struct {
		total        int64
		ranks        int
		shard, wrote int64
	}{
		{units.GiB, 8, 128 * units.MiB, units.GiB},
		// 1 GiB over 3: 357913941.33 bytes, rounded down to 4 KiB.
		{units.GiB, 3, 357912576, 3 * 357912576},
		{105e9, 8, 13124997120, 8 * 13124997120},
		{18e12, 1024, 17578123264, 1024 * 17578123264},
		{8 * units.KiB, 2, 4 * units.KiB, 8 * units.KiB},
		{12*units.KiB - 1, 2, 4 * units.KiB, 8 * units.KiB},
	} {
		p, err := NewPlan(tc.total, tc.ranks)
		if err != nil {
			t.Fatalf("NewPlan(%d, %d): %v", tc.total, tc.ranks, err)
		}
		if p.Shard != tc.shard || p.Total != tc.wrote || p.Asked != tc.total || p.Ranks != tc.ranks {
			t.Errorf("NewPlan(%d, %d) = %+v; want shard %d, total %d", tc.total, tc.ranks, p, tc.shard, tc.wrote)
		}
		if p.Shard%ShardAlign != 0 || p.Asked-p.Total < 0 || p.Asked-p.Total >= int64(tc.ranks)*ShardAlign {
			t.Errorf("NewPlan(%d, %d): shard %d not aligned, or %d bytes left out", tc.total, tc.ranks, p.Shard, p.Asked-p.Total)
		}
	}
}

func TestNewPlanErrors(t *testing.T) {
	for _, tc := range []struct {
		total int64
		ranks int
		want  string
	}{
		{units.GiB, 0, "must be at least 1 (got 0 ranks)"},
		{units.GiB, -3, "must be at least 1"},
		{units.GiB, MaxRanks + 1, "more than"},
		{0, 8, "--size must be greater than 0"},
		{-1, 8, "--size must be greater than 0"},
		{100 * units.KiB, 64, "less than 4 KiB per rank"},
	} {
		if _, err := NewPlan(tc.total, tc.ranks); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewPlan(%d, %d) = %v; want %q", tc.total, tc.ranks, err, tc.want)
		}
	}
}

// TestSplit: every shard is written once and read back once, by a rank
// that did not write it: on one host the next rank, on many the same
// place on the next host.
func TestSplit(t *testing.T) {
	for _, tc := range []struct{ ranks, hosts int }{{2, 1}, {8, 1}, {3, 3}, {12, 3}, {8, 2}, {1024, 4}} {
		p, _ := NewPlan(int64(tc.ranks)*units.MiB, tc.ranks)
		written, read := map[int]int{}, map[int]int{}
		for h := range tc.hosts {
			pt, err := p.Split(h, tc.hosts)
			if err != nil {
				t.Fatalf("%+v host %d: %v", tc, h, err)
			}
			for i := range pt.Ranks {
				r, s := pt.First+i, pt.Reads(i)
				written[r]++
				read[s]++
				if s == r || tc.hosts > 1 && s/pt.Ranks != (h+1)%tc.hosts {
					t.Errorf("%+v: rank %d on host %d reads shard %d", tc, r, h, s)
				}
			}
		}
		for r := range tc.ranks {
			if written[r] != 1 || read[r] != 1 {
				t.Errorf("%+v: shard %d written %d times, read %d times", tc, r, written[r], read[r])
			}
		}
	}
}

func TestSplitErrors(t *testing.T) {
	p1, _ := NewPlan(units.MiB, 1)
	p8, _ := NewPlan(units.GiB, 8)
	for _, tc := range []struct {
		p           Plan
		host, hosts int
		want        string
	}{
		{p1, 0, 1, "at least 2"},
		{p8, 0, 3, "do not divide evenly over 3 hosts"},
		{p8, 3, 3, "host 3 of 3"},
		{p8, -1, 2, "host -1 of 2"},
	} {
		if _, err := tc.p.Split(tc.host, tc.hosts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Split(%d, %d) of %d ranks = %v; want %q", tc.host, tc.hosts, tc.p.Ranks, err, tc.want)
		}
	}
}

func TestModels(t *testing.T) {
	for _, tc := range []struct {
		name  string
		ranks int
		size  string
	}{{"llama3-8b", 8, "105 GB"}, {"llama3-70b", 64, "912 GB"}, {"llama3-405b", 512, "5.29 TB"}, {"llama3-1t", 1024, "18 TB"}} {
		m, err := FindModel(tc.name)
		if err != nil || m.Ranks != tc.ranks || DecimalBytes(m.Bytes) != tc.size {
			t.Errorf("%s: %+v (%s), %v; want %d ranks, %s", tc.name, m, DecimalBytes(m.Bytes), err, tc.ranks, tc.size)
		}
	}
	if _, err := FindModel("llama3-13b"); err == nil || !strings.Contains(err.Error(), "llama3-8b, llama3-70b, llama3-405b, llama3-1t") {
		t.Errorf("unknown model: %v", err)
	}
}
