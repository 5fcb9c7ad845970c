package stats

import (
	"math"
	"testing"
	"time"
)

var t0 = time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)

func sample(sec float64, values map[string]float64) *Sample {
	s := NewSample(t0.Add(time.Duration(sec * float64(time.Second))))
	for k, v := range values {
		s.Set(k, v)
	}
	return s
}

func cell(t *testing.T, r *Row, section, field string) Value {
	t.Helper()
	for _, rs := range r.Sections {
		if rs.Section.Name != section {
			continue
		}
		for _, v := range rs.Values {
			if v.Col.Field == field {
				return v
			}
		}
	}
	t.Fatalf("no %s.%s in row", section, field)
	return Value{}
}

func TestCompute(t *testing.T) {
	secs, err := ParseSchema("ufmcosdnpb", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	prev := sample(0, map[string]float64{
		"juicefs_uptime": 100, "juicefs_cpu_usage": 10, "juicefs_memory": 1 << 30,
		"juicefs_fuse_ops_durations_histogram_seconds_total": 1000,
		"juicefs_fuse_ops_durations_histogram_seconds_sum":   2,
		"juicefs_fuse_written_size_bytes_sum":                8 << 20,
		"sys.cpu.user":                                       100, "sys.cpu.system": 50, "sys.cpu.iowait": 0, "sys.cpu.total": 1000,
		"disk.reads": 10, "disk.ios": 30, "disk.wait_ms": 100, "disk.busy_ms": 1000,
		"fsbench.ops": 50, "fsbench.latency_ns": 5e6, "fsbench.write_bytes": 0,
		"proc.cpu": 1, "proc.start": 77,
	})
	cur := sample(2, map[string]float64{
		"juicefs_uptime": 102, "juicefs_cpu_usage": 11, "juicefs_memory": 2 << 30,
		"juicefs_fuse_ops_durations_histogram_seconds_total": 1400,
		"juicefs_fuse_ops_durations_histogram_seconds_sum":   2.8,
		"juicefs_fuse_written_size_bytes_sum":                4 << 20, // went backwards
		"sys.cpu.user":                                       130, "sys.cpu.system": 60, "sys.cpu.iowait": 10, "sys.cpu.total": 1200,
		"disk.reads": 20, "disk.ios": 40, "disk.wait_ms": 150, "disk.busy_ms": 1500,
		"fsbench.ops": 150, "fsbench.latency_ns": 25e6, "fsbench.write_bytes": 200 << 20,
		"proc.cpu": 1.5, "proc.start": 77,
	})
	r := Compute(secs, prev, cur)
	if r.Seconds() != 2 {
		t.Errorf("interval %v", r.Seconds())
	}
	for _, tc := range []struct {
		section, field string
		want           float64
		ok             bool
	}{
		{"usage", "cpu_pct", 50, true},
		{"usage", "mem_bytes", 2 << 30, true},
		{"usage", "buf_bytes", 0, false}, // missing: a gap
		{"fuse", "ops_per_s", 200, true},
		{"fuse", "ops_lat_ms", 2, true},
		{"fuse", "write_bytes_per_s", 0, false}, // backwards: a gap, not negative
		{"fuse", "read_bytes_per_s", 0, false},
		{"system", "usr_pct", 15, true},
		{"system", "sys_pct", 5, true},
		{"system", "wait_pct", 5, true},
		{"disk", "reads_per_s", 5, true},
		{"disk", "await_ms", 5, true},
		{"disk", "util_pct", 25, true},
		{"process", "cpu_pct", 25, true},
		{"fsbench", "ops_per_s", 50, true},
		{"fsbench", "lat_ms", 0.2, true},
		{"fsbench", "write_bytes_per_s", 100 << 20, true},
		{"nfs", "ops_per_s", 0, false},
	} {
		v := cell(t, r, tc.section, tc.field)
		if v.OK != tc.ok || (v.OK && math.Abs(v.V-tc.want) > 1e-9) {
			t.Errorf("%s.%s = %v (ok %v), want %v (ok %v)", tc.section, tc.field, v.V, v.OK, tc.want, tc.ok)
		}
	}
}

func TestComputeFirstSample(t *testing.T) {
	secs, _ := ParseSchema("ut", 0, nil)
	r := Compute(secs, nil, sample(0, map[string]float64{"juicefs_cpu_usage": 5, "juicefs_memory": 100}))
	if v := cell(t, r, "usage", "cpu_pct"); v.OK {
		t.Errorf("a rate without a previous sample: %+v", v)
	}
	if v := cell(t, r, "usage", "mem_bytes"); !v.OK || v.V != 100 {
		t.Errorf("gauge: %+v", v)
	}
	if v := cell(t, r, "time", "time"); v.S != "10:00:00" {
		t.Errorf("time: %+v", v)
	}
}

func TestComputeRestart(t *testing.T) {
	secs, _ := ParseSchema("ufp", 0, nil)
	// The client restarted: uptime went backwards, so even counters that
	// happen to be higher than before are not rates of anything.
	prev := sample(0, map[string]float64{"juicefs_uptime": 500, "juicefs_cpu_usage": 1, "juicefs_memory": 10,
		"juicefs_fuse_ops_durations_histogram_seconds_total": 10, "proc.start": 5, "proc.cpu": 1})
	cur := sample(1, map[string]float64{"juicefs_uptime": 1, "juicefs_cpu_usage": 2, "juicefs_memory": 20,
		"juicefs_fuse_ops_durations_histogram_seconds_total": 20, "proc.start": 6, "proc.cpu": 2})
	r := Compute(secs, prev, cur)
	for _, f := range []struct{ s, f string }{{"usage", "cpu_pct"}, {"fuse", "ops_per_s"}, {"process", "cpu_pct"}} {
		if v := cell(t, r, f.s, f.f); v.OK {
			t.Errorf("%s.%s after a restart: %v, want a gap", f.s, f.f, v.V)
		}
	}
	if v := cell(t, r, "usage", "mem_bytes"); !v.OK || v.V != 20 {
		t.Errorf("gauge after restart: %+v", v)
	}
}

func TestComputeZeroAndNaN(t *testing.T) {
	secs, _ := ParseSchema("f", 0, nil)
	same := map[string]float64{"juicefs_fuse_ops_durations_histogram_seconds_total": 10, "juicefs_fuse_ops_durations_histogram_seconds_sum": 1}
	// No time passed: no rate. No operation: a mean of zero.
	r := Compute(secs, sample(1, same), sample(1, same))
	if v := cell(t, r, "fuse", "ops_per_s"); v.OK {
		t.Errorf("rate over zero seconds: %+v", v)
	}
	if v := cell(t, r, "fuse", "ops_lat_ms"); !v.OK || v.V != 0 {
		t.Errorf("mean of no operation: %+v", v)
	}
	inf := map[string]float64{"juicefs_fuse_ops_durations_histogram_seconds_total": math.Inf(1), "juicefs_fuse_ops_durations_histogram_seconds_sum": math.NaN()}
	r = Compute(secs, sample(0, same), sample(1, inf))
	for _, rs := range r.Sections {
		for _, v := range rs.Values {
			if v.OK && (math.IsNaN(v.V) || math.IsInf(v.V, 0)) {
				t.Errorf("%s: %v", v.Col.Field, v.V)
			}
		}
	}
}

func TestParseSchema(t *testing.T) {
	for _, tc := range []struct {
		schema  string
		verbose int
		cols    int
		wantErr bool
	}{
		{"ufmco", 0, 3 + 4 + 2 + 2 + 2, false},
		{"ufmco", 1, 4 + 4 + 5 + 2 + 8, false},
		{"g", 0, 2, false},
		{"t", 0, 1, false},
		{"sdnpb", 0, 6 + 6 + 12 + 2 + 5, false},
		{"x", 0, 0, true}, // no --metric
		{"uu", 0, 0, true},
		{"q", 0, 0, true},
		{"", 0, 0, true},
	} {
		secs, err := ParseSchema(tc.schema, tc.verbose, nil)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v", tc.schema, err)
			continue
		}
		n := 0
		fields := map[string]bool{}
		for _, s := range secs {
			for _, c := range s.Columns {
				n++
				if len(c.Nick) > c.width() {
					t.Errorf("%s.%s: nick %q wider than %d", s.Name, c.Field, c.Nick, c.width())
				}
				if fields[s.Name+"."+c.Field] {
					t.Errorf("%s.%s twice", s.Name, c.Field)
				}
				fields[s.Name+"."+c.Field] = true
			}
		}
		if !tc.wantErr && n != tc.cols {
			t.Errorf("%q -l %d: %d columns, want %d", tc.schema, tc.verbose, n, tc.cols)
		}
	}
}

func TestComputeNewSeries(t *testing.T) {
	secs, _ := ParseSchema("ob", 0, nil)
	// The client made its PUT series since the last sample: it counts from
	// zero. The fsbench source has no such key: a missing counter is a gap.
	prev := sample(0, map[string]float64{"juicefs_uptime": 10})
	cur := sample(2, map[string]float64{"juicefs_uptime": 12, "juicefs_object_request_data_bytes_PUT": 400, "fsbench.ops": 10})
	r := Compute(secs, prev, cur)
	if v := cell(t, r, "object", "put_bytes_per_s"); !v.OK || v.V != 200 {
		t.Errorf("new series: %+v", v)
	}
	if v := cell(t, r, "object", "get_bytes_per_s"); v.OK {
		t.Errorf("absent series: %+v", v)
	}
	if v := cell(t, r, "fsbench", "ops_per_s"); v.OK {
		t.Errorf("counter missing from prev: %+v", v)
	}
	// Without the uptime in prev (the client was not readable then), a
	// counter that appears is a gap, not its whole value over one interval.
	prev = sample(0, map[string]float64{})
	if v := cell(t, Compute(secs, prev, cur), "object", "put_bytes_per_s"); v.OK {
		t.Errorf("after a failed read: %+v", v)
	}
}
