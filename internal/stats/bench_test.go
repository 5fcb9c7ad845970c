package stats

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/sysio"
)

// BenchmarkRow is the work of one row of `fsbench stats /` at the default
// schema: read /proc/stat, /proc/meminfo, /proc/diskstats and the live
// directory, compute the row, render it.
func BenchmarkRow(b *testing.B) {
	b.Setenv("FSBENCH_LIVE_DIR", b.TempDir())
	m, err := sysio.FindMount("/")
	if err != nil {
		b.Skip(err)
	}
	plan, err := Prepare(context.Background(), Options{Mount: &m, Path: "/", Interval: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	r := plan.Runner
	out := NewRenderer(io.Discard, FormatTable, false, false)
	if err := out.Start(r.Sections); err != nil {
		b.Fatal(err)
	}
	prev := r.First
	b.ReportAllocs()
	for b.Loop() {
		cur := r.Collect(context.Background())
		if err := out.Row(Compute(r.Sections, prev, cur)); err != nil {
			b.Fatal(err)
		}
		prev = cur
	}
}

// BenchmarkPromRow is the same with a JuiceFS-format Prometheus scrape
// parsed from memory (no network).
func BenchmarkPromRow(b *testing.B) {
	data := readFixture(b, "stats/prom/juicefs.txt")
	secs, err := ParseSchema("ufmco", 1, nil)
	if err != nil {
		b.Fatal(err)
	}
	out := NewRenderer(io.Discard, FormatJSON, false, false)
	prev := NewSample(t0)
	b.ReportAllocs()
	for b.Loop() {
		fams, err := ParseProm(bytesReader(data))
		if err != nil {
			b.Fatal(err)
		}
		cur := NewSample(prev.Time.Add(time.Second))
		Flatten(fams, cur)
		Translate(fams, cur)
		if err := out.Row(Compute(secs, prev, cur)); err != nil {
			b.Fatal(err)
		}
		prev = cur
	}
}
