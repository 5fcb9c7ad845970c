package stats

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/juicefs"
)

// checkRow fails on a figure that is negative (for rates, means and shares),
// NaN or infinite: whatever the input, a row holds real figures or gaps.
func checkRow(t *testing.T, r *Row) {
	t.Helper()
	for _, rs := range r.Sections {
		for _, v := range rs.Values {
			if !v.OK {
				continue
			}
			if math.IsNaN(v.V) || math.IsInf(v.V, 0) {
				t.Fatalf("%s.%s = %v", rs.Section.Name, v.Col.Field, v.V)
			}
			if v.Col.Kind != Gauge && v.V < 0 {
				t.Fatalf("%s.%s = %v: negative", rs.Section.Name, v.Col.Field, v.V)
			}
		}
	}
}

func renderAll(t *testing.T, secs []*Section, rows ...*Row) {
	t.Helper()
	for _, f := range []Format{FormatTable, FormatJSON, FormatCSV} {
		for _, tty := range []bool{false, true} {
			var buf bytes.Buffer
			r := NewRenderer(&buf, f, tty, tty)
			if err := r.Start(secs); err != nil {
				t.Fatal(err)
			}
			for _, row := range rows {
				if err := r.Row(row); err != nil {
					t.Fatal(err)
				}
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			if f == FormatJSON {
				for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
					if line != "" && !json.Valid([]byte(line)) {
						t.Fatalf("invalid JSON line %q", line)
					}
				}
			}
		}
	}
}

// FuzzStatsDelta: two readings of a .stats file, whatever they hold, give
// rows without negative or non-finite figures, and render.
func FuzzStatsDelta(f *testing.F) {
	before, _ := os.ReadFile("../../testdata/juicefs/jfs-stats-before.txt")
	after, _ := os.ReadFile("../../testdata/juicefs/jfs-stats-after.txt")
	f.Add(before, after, uint16(1000))
	f.Add(after, before, uint16(1))
	f.Add([]byte("juicefs_uptime 5\njuicefs_cpu_usage 1e308\n"), []byte("juicefs_uptime 6\njuicefs_cpu_usage -1e308\n"), uint16(0))
	f.Add([]byte("juicefs_fuse_ops_durations_histogram_seconds_total NaN\n"), []byte("juicefs_fuse_ops_durations_histogram_seconds_total +Inf\n"), uint16(7))
	secs, err := ParseSchema("tufmcog", 1, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, a, b []byte, ms uint16) {
		prev, cur := NewSample(t0), NewSample(t0.Add(time.Duration(ms)*time.Millisecond))
		for k, v := range juicefs.ParseStats(a) {
			prev.Set(k, v)
		}
		for k, v := range juicefs.ParseStats(b) {
			cur.Set(k, v)
		}
		r := Compute(secs, prev, cur)
		checkRow(t, r)
		first := Compute(secs, nil, prev)
		checkRow(t, first)
		renderAll(t, secs, first, r)
	})
}

// FuzzProm: any text either fails to parse or flattens, translates and
// selects without panicking, into rows without negative rates.
func FuzzProm(f *testing.F) {
	for _, name := range []string{"juicefs.txt", "node_exporter.txt", "minio.txt"} {
		data, _ := os.ReadFile(filepath.Join("../../testdata/stats/prom", name))
		f.Add(data, data)
	}
	f.Add([]byte("# TYPE x histogram\nx_bucket{le=\"+Inf\"} 3\nx_sum 2\nx_count 3\n"), []byte("# TYPE x histogram\nx_bucket{le=\"+Inf\"} 1\nx_sum 9\nx_count 1\n"))
	f.Add([]byte("node_cpu_seconds_total{mode=\"user\"} -5\n"), []byte("node_cpu_seconds_total{mode=\"user\"} NaN\n"))
	specs := []MetricSpec{}
	for _, s := range []string{"x", `y{a="b"}`, "minio_s3_requests_total", "juicefs_fuse_ops_durations_histogram_seconds"} {
		ms, err := ParseMetricSpec(s)
		if err != nil {
			f.Fatal(err)
		}
		specs = append(specs, ms)
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		var samples []*Sample
		var types = map[string]bool{}
		for i, in := range [][]byte{a, b} {
			fams, err := ParseProm(bytes.NewReader(in))
			if err != nil {
				return
			}
			sm := NewSample(t0.Add(time.Duration(i) * time.Second))
			Flatten(fams, sm)
			Translate(fams, sm)
			for k := range Select(fams, specs, sm) {
				types[k] = true
			}
			samples = append(samples, sm)
		}
		cols := MetricColumns(specs, nil)
		secs, err := ParseSchema("ufmcogsdx", 1, cols)
		if err != nil {
			t.Fatal(err)
		}
		r := Compute(secs, samples[0], samples[1])
		checkRow(t, r)
		renderAll(t, secs, r)
	})
}

func FuzzMetricSpec(f *testing.F) {
	for _, s := range []string{"x", `req=minio_s3_requests_total{api="getobject"}`, `a{b="c,d",e="f"}`, "=", "{", `x{a="\"}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ms, err := ParseMetricSpec(s)
		if err != nil {
			return
		}
		if ms.Name == "" || ms.Nick == "" || len(ms.Nick) > 5 {
			t.Errorf("%q: accepted %+v", s, ms)
		}
		for _, c := range MetricColumns([]MetricSpec{ms}, nil) {
			if len(c.Nick) > c.width() || c.Field == "" && ms.Spec != "" && sanitizeField(ms.Spec) != "" {
				t.Errorf("%q: column %+v", s, c)
			}
		}
	})
}

// procTree writes one file into a copy-free fixture tree: the other files
// come from testdata/stats/proc.
func procTree(t *testing.T, name string, data []byte) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"stat", "meminfo", "diskstats"} {
		b, err := os.ReadFile(filepath.Join(fixtureProc, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(dir, "4242"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("4242", filepath.Join(dir, "self")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// fuzzProcFile fuzzes one /proc file as the kernel sources read it, through
// prometheus/procfs: no panic, and rows against the fixture's own reading
// hold no negative rate.
func fuzzProcFile(f *testing.F, name string, schema string, mk func(root string) (Source, error)) {
	seed, err := os.ReadFile(filepath.Join(fixtureProc, name))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte{})
	f.Add(bytes.ReplaceAll(seed, []byte("1"), []byte("-1")))
	f.Add(bytes.ReplaceAll(seed, []byte(" "), []byte("  ")))
	secs, err := ParseSchema(schema, 1, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		base, err := mk(fixtureProc)
		if err != nil {
			t.Fatal(err)
		}
		prev := NewSample(t0)
		_ = base.Collect(context.Background(), prev)
		src, err := mk(procTree(t, name, data))
		if err != nil {
			return
		}
		cur := NewSample(t0.Add(time.Second))
		_ = src.Collect(context.Background(), cur)
		r := Compute(secs, prev, cur)
		checkRow(t, r)
		renderAll(t, secs, r)
	})
}

func FuzzDiskstats(f *testing.F) {
	fuzzProcFile(f, "diskstats", "d", func(root string) (Source, error) { return NewDiskSource(root, 254, 0, false) })
}

func FuzzProcStat(f *testing.F) {
	fuzzProcFile(f, "stat", "s", func(root string) (Source, error) { return NewSystemSource(root) })
}

func FuzzMeminfo(f *testing.F) {
	fuzzProcFile(f, "meminfo", "s", func(root string) (Source, error) { return NewSystemSource(root) })
}

func FuzzMountstats(f *testing.F) {
	fuzzProcFile(f, "4242/mountstats", "n", func(root string) (Source, error) { return NewNFSSource(root, "/mnt/nfs") })
}

func FuzzProcessStat(f *testing.F) {
	fuzzProcFile(f, "4242/stat", "p", func(root string) (Source, error) { return NewProcessSource(root, 4242) })
}
