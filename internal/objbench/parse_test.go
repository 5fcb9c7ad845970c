package objbench

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/units"
)

func TestParseMix(t *testing.T) {
	good := []struct {
		in   string
		want Mix
	}{
		{"get=45,stat=30,put=15,delete=10", DefaultMix},
		{"get=1", Mix{opGet: 1}},
		{" put = 3 , delete=0,get=2", Mix{opGet: 2, opPut: 3}},
	}
	for _, c := range good {
		m, err := ParseMix(c.in)
		if err != nil || m != c.want {
			t.Errorf("ParseMix(%q) = %v, %v; want %v", c.in, m, err, c.want)
		}
	}
	bad := []struct{ in, msg string }{
		{"get=0,put=0", "add up to 0"},
		{"get=1,copy=2", `"copy": unknown operation`},
		{"get=1,get=2", "given twice"},
		{"get", "want OP=WEIGHT"},
		{"get=-1", "whole number"},
		{"get=1.5", "whole number"},
		{"", "want OP=WEIGHT"},
	}
	for _, c := range bad {
		if _, err := ParseMix(c.in); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseMix(%q) = %v; want an error with %q", c.in, err, c.msg)
		}
	}
}

func TestMixString(t *testing.T) {
	m, err := ParseMix(DefaultMix.String())
	if err != nil || m != DefaultMix {
		t.Fatalf("the default mix does not survive its String: %v, %v", m, err)
	}
}

func TestParseSizeDist(t *testing.T) {
	d, err := ParseSizeDist("log2:1KiB-64MiB")
	if err != nil || !d.Log2 || d.Min != units.KiB || d.Max != 64*units.MiB {
		t.Fatalf("log2: %+v, %v", d, err)
	}
	if c := d.Classes(); len(c) != 16 || c[0] != "1 KiB-2 KiB" || c[15] != "32 MiB-64 MiB" {
		t.Errorf("log2 classes: %q", c)
	}
	d, err = ParseSizeDist("4KiB:50,1MiB:40,64MiB:10")
	if err != nil || len(d.Buckets) != 3 || d.Min != 4*units.KiB || d.Max != 64*units.MiB {
		t.Fatalf("buckets: %+v, %v", d, err)
	}
	if c := d.Classes(); strings.Join(c, "|") != "4 KiB|1 MiB|64 MiB" {
		t.Errorf("bucket classes: %q", c)
	}
	bad := []struct{ in, msg string }{
		{"log2:64MiB-1KiB", "lower bound must be below"},
		{"log2:1KiB-1KiB", "lower bound must be below"},
		{"log2:1KiB", "want log2:MIN-MAX"},
		{"log2:x-1MiB", "want a number"},
		{"4KiB:0,1MiB:0", "add up to 0"},
		{"4KiB", "want SIZE:WEIGHT"},
		{"4KiB:a", "whole number"},
		{"4KiB:1,4096B:2", "given twice"},
		{"4096:1", "a bare number is ambiguous; write 4096K, 4096M or 4096B"}, {"log2:1K-64", "write 64K, 64M or 64B"},
		{"0:1", "more than 0"},
		{"6GiB:1", "at most"},
		{"", "want SIZE:WEIGHT"},
	}
	for _, c := range bad {
		if _, err := ParseSizeDist(c.in); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("ParseSizeDist(%q) = %v; want an error with %q", c.in, err, c.msg)
		}
	}
}

// Draws stay in bounds and fall in the class of their size; a log2
// distribution reaches every class, and buckets come in their weights.
// A bound that is no whole number of KiB is written in bytes, so that the
// distribution a header or a job names parses back to the same one.
func TestSizeDistStringExact(t *testing.T) {
	for in, want := range map[string]string{
		"log2:1K-7000B":      "log2:1KiB-7000B",
		"1536B:1,4MiB:2":     "1.50KiB:1,4MiB:2",
		"log2:1.5K-1048577B": "log2:1.50KiB-1048577B",
	} {
		d, err := ParseSizeDist(in)
		if err != nil || d.String() != want {
			t.Errorf("%q: String %q, %v; want %q", in, d.String(), err, want)
		}
	}
}

func TestSizeDraws(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	d, _ := ParseSizeDist("log2:1000B-1MiB")
	seen := make([]int, len(d.Classes()))
	for range 20000 {
		n := d.Draw(r)
		if n < d.Min || n >= d.Max {
			t.Fatalf("draw %d outside [%d, %d)", n, d.Min, d.Max)
		}
		c := d.Class(n)
		if c < 0 || c >= len(seen) || n < 1<<(log2Floor(d.Min)+c) || n >= 1<<(log2Floor(d.Min)+c+1) {
			t.Fatalf("size %d in class %d", n, c)
		}
		seen[c]++
	}
	for c, k := range seen {
		if k == 0 {
			t.Errorf("class %s never drawn", d.Classes()[c])
		}
	}
	b, _ := ParseSizeDist("64KiB:10,4KiB:30")
	var small int
	for range 10000 {
		n := b.Draw(r)
		if c := b.Class(n); n == 4*units.KiB && c != 0 || n == 64*units.KiB && c != 1 {
			t.Fatalf("size %d in class %d", n, c)
		}
		if n == 4*units.KiB {
			small++
		}
	}
	if small < 7000 || small > 8000 {
		t.Errorf("4KiB drawn %d times of 10000, want about 7500", small)
	}
}

// Largest is the biggest size a distribution can draw, and a workload of
// objects under 256 KiB runs with GOGC 100, any other run with 25.
func TestLargestAndGCPercent(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct {
		dist string
		want int64
		gc   int
	}{{"4KiB:1", 4 * units.KiB, 100}, {"log2:1KiB-256KiB", 256*units.KiB - 1, 100}, {"log2:1KiB-262145B", 262144, 25},
		{"log2:4KiB-1MiB", units.MiB - 1, 25}, {"256KiB:1,4KiB:9", 256 * units.KiB, 25}, {"64KiB:1,4KiB:9,128KiB:3", 128 * units.KiB, 100}} {
		d, err := ParseSizeDist(c.dist)
		if err != nil {
			t.Fatal(err)
		}
		if got := d.Largest(); got != c.want {
			t.Errorf("%s: Largest %d, want %d", c.dist, got, c.want)
		}
		for range 2000 {
			if n := d.Draw(r); n > d.Largest() {
				t.Fatalf("%s: drew %d above Largest %d", c.dist, n, d.Largest())
			}
		}
		o := Options{Workload: "get", Sizes: d}
		if got := o.GCPercent(); got != c.gc {
			t.Errorf("%s: GCPercent %d, want %d", c.dist, got, c.gc)
		}
	}
	if got := (&Options{Workload: "stat", Sizes: FixedSize(4 * units.KiB)}).GCPercent(); got != 100 {
		t.Errorf("stat of 4KiB: GCPercent %d, want 100", got)
	}
	if got := (&Options{Workload: "put", Sizes: FixedSize(16 * units.MiB)}).GCPercent(); got != 25 {
		t.Errorf("put of 16MiB: GCPercent %d, want 25", got)
	}
	if got := (&Options{Sizes: FixedSize(4 * units.KiB)}).GCPercent(); got != 25 {
		t.Errorf("JuiceFS's items (no workload): GCPercent %d, want 25", got)
	}
}

func FuzzParseMix(f *testing.F) {
	for _, s := range []string{"get=45,stat=30,put=15,delete=10", "get=1", "=", ",,", "get=99999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		m, err := ParseMix(s)
		if err != nil {
			return
		}
		if m.total() <= 0 {
			t.Fatalf("%q: accepted with weights adding up to %d", s, m.total())
		}
		if m2, err := ParseMix(m.String()); err != nil || m2 != m {
			t.Fatalf("%q: String %q parses as %v, %v", s, m.String(), m2, err)
		}
		if op := m.draw(rand.New(rand.NewPCG(1, 1))); m[op] == 0 {
			t.Fatalf("%q: drew %s, of weight 0", s, opNames[op])
		}
	})
}

func FuzzParseSizeDist(f *testing.F) {
	for _, s := range []string{"log2:1KiB-64MiB", "4KiB:50,1MiB:40,64MiB:10", "log2:-", "1:1", "log2:1.5K-2K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseSizeDist(s)
		if err != nil {
			return
		}
		if d.Min <= 0 || d.Max > maxObjectSize || d.Min > d.Max {
			t.Fatalf("%q: accepted bounds %d-%d", s, d.Min, d.Max)
		}
		r := rand.New(rand.NewPCG(1, 1))
		for range 10 {
			n := d.Draw(r)
			if c := d.Class(n); n < d.Min || n > d.Max || c < 0 || c >= len(d.Classes()) {
				t.Fatalf("%q: drew %d in class %d", s, n, c)
			}
		}
		if d2, err := ParseSizeDist(d.String()); err != nil || d2.String() != d.String() {
			t.Fatalf("%q: String %q parses as %v, %v", s, d.String(), d2, err)
		}
	})
}

// series makes intervals of one second with the given operations/s (and
// bytes/s when bytes is set).
func series(bytes bool, rates ...float64) []engine.Sample {
	var out []engine.Sample
	for i, v := range rates {
		s := engine.Sample{Start: time.Duration(i) * time.Second, Dur: time.Second, Ops: int64(v)}
		if bytes {
			s.Ops, s.Bytes = 1, int64(v)
		}
		out = append(out, s)
	}
	return out
}

func TestAutoTermRule(t *testing.T) {
	a := Defaults().AutoTerm
	a.MinDur = 5 * time.Second
	stable := []float64{50, 300, 100, 101, 99, 104, 96, 100, 100}
	cases := []struct {
		name   string
		series []engine.Sample
		want   bool
	}{
		{"stable ops", series(false, stable...), true},
		{"stable bytes", series(true, stable...), true},
		{"one interval off by 8%", series(false, 100, 100, 100, 108, 100, 100, 100, 100), false},
		{"rising", series(false, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100), false},
		{"too few intervals", series(false, 100, 100, 100, 100, 100, 100), false},
		{"not long enough", series(false, 100, 100, 100, 100, 100), false},
		{"nothing moves", series(false, 0, 0, 0, 0, 0, 0, 0, 0), false},
		{"an old spike does not count", series(false, 500, 100, 100, 100, 100, 100, 100, 100), true},
	}
	for _, c := range cases {
		if got := a.Stable(c.series); got != c.want {
			t.Errorf("%s: Stable = %v, want %v", c.name, got, c.want)
		}
	}
	short := a
	short.MinDur = 10 * time.Second
	if short.Stable(series(false, stable...)) {
		t.Errorf("stable before the minimum duration")
	}
}
