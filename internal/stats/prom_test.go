package stats

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/fsbench/fsbench/internal/juicefs"
	"github.com/fsbench/fsbench/internal/sysio"
)

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("../../testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func parseFixture(t *testing.T, name string) Families {
	t.Helper()
	fams, err := ParseProm(bytes.NewReader(readFixture(t, name)))
	if err != nil {
		t.Fatal(err)
	}
	return fams
}

// translatedFixture is the sample that the /metrics fixture name gives,
// flattened and translated as a source does.
func translatedFixture(t *testing.T, name string) *Sample {
	t.Helper()
	fams := parseFixture(t, name)
	sm := NewSample(t0)
	Flatten(fams, sm)
	Translate(fams, sm)
	return sm
}

// The JuiceFS client's /metrics, flattened, gives the same names and values
// as its .stats file, so the same sections read either.
func TestFlattenMatchesJuiceFSStats(t *testing.T) {
	fams := parseFixture(t, "stats/prom/juicefs.txt")
	sm := NewSample(t0)
	Flatten(fams, sm)
	want := juicefs.ParseStats(readFixture(t, "juicefs/jfs-stats-after.txt"))
	secs, err := ParseSchema("ufmcog", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range secs {
		for _, c := range s.Columns {
			for _, k := range []string{c.Key, c.Count} {
				w, inStats := want[k]
				if k == "" || !inStats {
					continue
				}
				got, ok := sm.Values[k]
				if !ok || got != w {
					t.Errorf("%s: /metrics gives %v (present %v), .stats %v", k, got, ok, w)
				}
				checked++
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d names compared", checked)
	}
	for k, w := range want {
		if got, ok := sm.Values[k]; !ok || got != w {
			t.Errorf("%s: /metrics gives %v (present %v), .stats %v", k, got, ok, w)
		}
	}
}

func TestTranslateNodeExporter(t *testing.T) {
	sm := translatedFixture(t, "stats/prom/node_exporter.txt")
	checkValues(t, sm, map[string]float64{
		"sys.cpu.user":      518.15 + 0.06 + 506.58 + 0.06,
		"sys.cpu.system":    83.77 + 1.01 + 81.23 + 3.76,
		"sys.cpu.iowait":    25.02 + 23.6,
		"sys.cpu.total":     518.15 + 0.06 + 506.58 + 0.06 + 83.77 + 1.01 + 81.23 + 3.76 + 25.02 + 23.6 + 35071.5 + 35997 + 10.48 + 14.9,
		"sys.mem.used":      2.5274793984e+10 - 2.4639246336e+10,
		"sys.mem.dirty":     1.1055104e+08,
		"disk.reads":        412345, // dm-0 is left out
		"disk.ios":          412345 + 723456,
		"disk.write_bytes":  9.607901184e+10,
		"disk.wait_ms":      (91.234 + 1234.567) * 1000,
		"disk.busy_ms":      456789,
		"sys.mem.writeback": 0,
	})
	if _, ok := sm.Values["juicefs_cpu_usage"]; ok {
		t.Error("node_exporter's own process mapped onto the usage section")
	}
}

func TestTranslateMinIO(t *testing.T) {
	sm := translatedFixture(t, "stats/prom/minio.txt")
	checkValues(t, sm, map[string]float64{
		"juicefs_object_request_data_bytes_GET": 6.375342e+09,
		"juicefs_object_request_data_bytes_PUT": 3.061842e+09,
		"juicefs_cpu_usage":                     41.3,
		"juicefs_memory":                        2.84573696e+08,
		"juicefs_go_memstats_alloc_bytes":       1.23456e+08,
		// Flattened with the label values, as .stats names are.
		"minio_s3_requests_total_getobject_127.0.0.1:9000":                  1520,
		"minio_s3_ttfb_seconds_distribution_getobject_127.0.0.1:9000_total": 1520,
	})
}

func TestParsePromErrors(t *testing.T) {
	for _, in := range []string{
		"metric{label=\"unterminated} 1\n",
		"# TYPE x counter\nx abc\n",
		"x 1 2 3 4\n",
		"{}",     // expfmt v0.63.0 panics on these: a label set
		"{} 1\n", // with no metric name
	} {
		if _, err := ParseProm(strings.NewReader(in)); err == nil {
			t.Errorf("no error for %q", in)
		}
	}
}

func TestParseMetricSpec(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    MetricSpec
		wantErr bool
	}{
		{in: "minio_s3_requests_total", want: MetricSpec{Spec: "minio_s3_requests_total", Nick: "reque", Name: "minio_s3_requests_total", Labels: map[string]string{}}},
		{in: `req=minio_s3_requests_total{api="getobject"}`, want: MetricSpec{Spec: `minio_s3_requests_total{api="getobject"}`, Nick: "req", Name: "minio_s3_requests_total", Labels: map[string]string{"api": "getobject"}}},
		{in: `x{a="1,2", b="z"}`, want: MetricSpec{Spec: `x{a="1,2", b="z"}`, Nick: "x", Name: "x", Labels: map[string]string{"a": "1,2", "b": "z"}}},
		{in: "juicefs_fuse_ops_durations_histogram_seconds", want: MetricSpec{Spec: "juicefs_fuse_ops_durations_histogram_seconds", Nick: "ops", Name: "juicefs_fuse_ops_durations_histogram_seconds", Labels: map[string]string{}}},
		{in: "", wantErr: true},
		{in: "toolongnick=x", wantErr: true},
		{in: `x{a="1"`, wantErr: true},
		{in: `x{a}`, wantErr: true},
		{in: "=x", wantErr: true},
	} {
		got, err := ParseMetricSpec(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err %v", tc.in, err)
			continue
		}
		if tc.wantErr {
			continue
		}
		if got.Spec != tc.want.Spec || got.Nick != tc.want.Nick || got.Name != tc.want.Name || len(got.Labels) != len(tc.want.Labels) {
			t.Errorf("%q: got %+v, want %+v", tc.in, got, tc.want)
		}
		for k, v := range tc.want.Labels {
			if got.Labels[k] != v {
				t.Errorf("%q: label %s = %q, want %q", tc.in, k, got.Labels[k], v)
			}
		}
	}
}

func TestSelectAndMetricColumns(t *testing.T) {
	fams := parseFixture(t, "stats/prom/minio.txt")
	var specs []MetricSpec
	for _, s := range []string{
		`get=minio_s3_requests_total{api="getobject"}`, "minio_s3_requests_total", "minio_node_process_resident_memory_bytes",
		`ttfb=minio_s3_ttfb_seconds_distribution`, "not_there_total", "not_there_either",
	} {
		ms, err := ParseMetricSpec(s)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, ms)
	}
	sm := NewSample(t0)
	types := Select(fams, specs, sm)
	checkValues(t, sm, map[string]float64{
		`metric:minio_s3_requests_total{api="getobject"}`: 1520,
		"metric:minio_s3_requests_total":                  1520 + 730 + 88,
		"metric:minio_s3_ttfb_seconds_distribution_total": 1520,
		"metric:minio_s3_ttfb_seconds_distribution_sum":   3.04,
	})
	cols := MetricColumns(specs, types)
	kinds := []struct {
		nick string
		kind Kind
		unit Unit
	}{
		{"get", Rate, Count}, {"reque", Rate, Count}, {"memor", Gauge, Bytes},
		{"ttfb", Rate, Count}, {"lat", Mean, Millis}, {"there", Rate, Count}, {"eithe", Gauge, Count},
	}
	if len(cols) != len(kinds) {
		t.Fatalf("%d columns: %+v", len(cols), cols)
	}
	for i, k := range kinds {
		if cols[i].Nick != k.nick || cols[i].Kind != k.kind || cols[i].Unit != k.unit {
			t.Errorf("column %d: %+v, want %+v", i, cols[i], k)
		}
	}
	if types[specs[0].Spec] != dto.MetricType_COUNTER {
		t.Errorf("type %v", types[specs[0].Spec])
	}
}

// jfsServer serves the JuiceFS client's /metrics on loopback, its counters
// growing by step at each scrape.
func jfsServer(t *testing.T, status int, delay time.Duration) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	body := readFixture(t, "stats/prom/juicefs.txt")
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/metrics" {
			http.NotFound(w, r)
			return
		}
		i := n.Add(1)
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		w.WriteHeader(status)
		// Scale the cumulative FUSE counters with the scrape number.
		out := strings.ReplaceAll(string(body), `juicefs_fuse_written_size_bytes_sum{mp="/mnt/jfs",vol_name="myjfs"} 2173698048`,
			`juicefs_fuse_written_size_bytes_sum{mp="/mnt/jfs",vol_name="myjfs"} `+strings.Repeat("1", int(i)))
		_, _ = w.Write([]byte(out))
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func TestPromSourceHTTP(t *testing.T) {
	srv, n := jfsServer(t, http.StatusOK, 0)
	ms, _ := ParseMetricSpec("juicefs_fuse_ops_total")
	p := &PromSource{URL: srv.URL + "/metrics", Timeout: 5 * time.Second, Specs: []MetricSpec{ms}}
	sm := NewSample(t0)
	if err := p.Collect(context.Background(), sm); err != nil {
		t.Fatal(err)
	}
	checkValues(t, sm, map[string]float64{
		"juicefs_fuse_written_size_bytes_sum":                1,
		"juicefs_fuse_ops_durations_histogram_seconds_total": 35882,
		"metric:juicefs_fuse_ops_total":                      202 + 408 + 635 + 616 + 1 + 207 + 3 + 16606 + 5 + 408 + 3 + 1 + 1 + 202 + 16584,
	})
	if p.Types["juicefs_fuse_ops_total"] != dto.MetricType_COUNTER {
		t.Errorf("types %v", p.Types)
	}
	if n.Load() != 1 {
		t.Errorf("%d scrapes", n.Load())
	}
}

func TestPromSourceErrors(t *testing.T) {
	srv, _ := jfsServer(t, http.StatusInternalServerError, 0)
	p := &PromSource{URL: srv.URL + "/metrics", Timeout: 5 * time.Second}
	if err := p.Collect(context.Background(), NewSample(t0)); err == nil || !strings.Contains(err.Error(), "500") {
		t.Errorf("500: %v", err)
	}
	p.URL = srv.URL + "/nothing"
	if err := p.Collect(context.Background(), NewSample(t0)); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("404: %v", err)
	}
	// A server that does not answer: the timeout ends the scrape.
	slow, _ := jfsServer(t, http.StatusOK, time.Minute)
	p = &PromSource{URL: slow.URL + "/metrics", Timeout: 50 * time.Millisecond}
	err := p.Collect(context.Background(), NewSample(t0))
	if want := "metrics " + p.URL + ": no answer within 50ms, the scrape timeout"; !errors.Is(err, context.DeadlineExceeded) || err == nil || err.Error() != want {
		t.Errorf("slow server: %v, want %q", err, want)
	}
	// Cancelling the context ends it too.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p.Timeout = time.Minute
	if err := p.Collect(ctx, NewSample(t0)); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestPrepareWithEndpoint(t *testing.T) {
	srv, _ := jfsServer(t, http.StatusOK, 0)
	ms, _ := ParseMetricSpec("ops=juicefs_fuse_ops_total")
	m := sysio.Mount{MountPoint: "/", FSType: "ext4", Major: 254, Minor: 0}
	plan, err := Prepare(context.Background(), Options{
		Mount: &m, Path: "/", Interval: time.Second, Count: 2, MetricsURL: srv.URL + "/metrics",
		Metrics: []MetricSpec{ms}, ProcRoot: fixtureProc, Clock: &fakeClock{now: t0},
	})
	if err != nil {
		t.Fatal(err)
	}
	// JuiceFS's sections come from the endpoint, the rest from /proc.
	if plan.Schema != "ufmcodsbx" {
		t.Errorf("schema %q", plan.Schema)
	}
	var buf bytes.Buffer
	plan.Runner.Render = NewRenderer(&buf, FormatJSON, false, false)
	if err := plan.Runner.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d rows:\n%s", len(lines), buf.String())
	}
	// The fake clock makes each interval one second: the written bytes grew
	// from 11 to 111 to 1111.
	if !strings.Contains(lines[0], `"fuse":{"ops_per_s":0,"ops_lat_ms":0,"read_bytes_per_s":0,"write_bytes_per_s":100}`) || !strings.Contains(lines[1], `"write_bytes_per_s":1000}`) {
		t.Errorf("fuse write rate:\n%s", buf.String())
	}
	if !strings.Contains(lines[0], `"metrics":{"juicefs_fuse_ops_total_per_s":0}`) {
		t.Errorf("x section:\n%s", lines[0])
	}
}

func TestPrepareErrors(t *testing.T) {
	m := sysio.Mount{MountPoint: "/mnt/nfs", FSType: "nfs4"}
	// An endpoint that is not there fails at once.
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	_, err := Prepare(context.Background(), Options{Mount: &m, Interval: time.Second, MetricsURL: srv.URL, ProcRoot: fixtureProc})
	if err == nil {
		t.Error("no error for an endpoint that is down")
	}
	if _, err := Prepare(context.Background(), Options{Mount: &m, Interval: time.Second, Schema: "uq", ProcRoot: fixtureProc}); err == nil {
		t.Error("no error for a bad schema")
	}
	// A section without a source is a warning, not an error.
	plan, err := Prepare(context.Background(), Options{Mount: &m, Interval: time.Second, Schema: "un", ProcRoot: fixtureProc})
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Warnings) != 1 || !strings.Contains(plan.Warnings[0], "usage") {
		t.Errorf("warnings %q", plan.Warnings)
	}
}

// A scrape that runs out of time in Prepare names its timeout and, when
// that is --interval, says so, instead of "context deadline exceeded".
func TestPrepareScrapeTimeoutNamed(t *testing.T) {
	slow, _ := jfsServer(t, http.StatusOK, time.Minute)
	m := sysio.Mount{MountPoint: "/mnt/nfs", FSType: "nfs4"}
	_, err := Prepare(context.Background(), Options{Mount: &m, Interval: 100 * time.Millisecond, MetricsURL: slow.URL + "/metrics", ProcRoot: fixtureProc})
	want := "metrics " + slow.URL + "/metrics: no answer within 100ms, the scrape timeout, which is --interval (a longer --interval gives the endpoint more time)"
	if err == nil || err.Error() != want {
		t.Errorf("err %v\nwant %s", err, want)
	}
}

func TestPrepareAutoSchema(t *testing.T) {
	for _, tc := range []struct {
		name  string
		mount *sysio.Mount
		want  string
	}{
		{"system-wide", nil, "dsb"},
		{"ext4", &sysio.Mount{MountPoint: "/", FSType: "ext4", Major: 254}, "dsb"},
		{"nfs", &sysio.Mount{MountPoint: "/mnt/nfs", FSType: "nfs4"}, "nsb"},
		{"juicefs", &sysio.Mount{MountPoint: "/mnt/jfs", FSType: "fuse.juicefs"}, "ufmcosb"},
		{"tmpfs", &sysio.Mount{MountPoint: "/tmp", FSType: "tmpfs"}, "sb"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			plan, err := Prepare(context.Background(), Options{Mount: tc.mount, Interval: time.Second, ProcRoot: fixtureProc})
			if err != nil {
				t.Fatal(err)
			}
			if plan.Schema != tc.want {
				t.Errorf("schema %q, want %q", plan.Schema, tc.want)
			}
		})
	}
}
