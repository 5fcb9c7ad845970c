package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
)

var update = flag.Bool("update", false, "rewrite the golden files")

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "golden", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./internal/report -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func lat(p50, p99, max float64) metrics.Summary {
	return metrics.Summary{Count: 100, Mean: p50 * 1.1, Min: p50 / 2, P50: p50, P90: p50 * 1.5, P99: p99, P999: p99 * 1.2, Max: max}
}

// sample is a fixed bench result, as fsbench bench -p 4 would produce.
func sample() *Result {
	cpu, mem := 39.5, int64(257<<20)
	return &Result{
		SchemaVersion: SchemaVersion, Tool: "fsbench", Version: "v1.0.0", Command: "bench",
		StartedAt: time.Date(2026, 11, 21, 21, 3, 16, 0, time.UTC),
		Host:      Host{Name: "host1", OS: "linux", Arch: "amd64", Kernel: "6.1.0", CPUs: 2},
		Target:    Target{Path: "/mnt/jfs", FSType: "fuse.juicefs", MountPoint: "/mnt/jfs", MountSource: "JuiceFS:myjfs", MountOptions: "rw,relatime"},
		Parameters: Params{
			{Key: "block_size", Label: "BlockSize", Value: 1 << 20, Display: "1 MiB"},
			{Key: "big_file_size", Label: "BigFileSize", Value: 1 << 30, Display: "1 GiB"},
			{Key: "threads", Label: "NumThreads", Value: 4, Display: "4"},
			{Key: "direct", Value: false},
		},
		CacheDrop: "drop_caches",
		Phases: []PhaseResult{
			{Name: "write-big", Title: "Write big file", Ops: 4096, Items: 4, Bytes: 4 << 30, Seconds: 10.35,
				BytesPerSec: 414973029.8, OpsPerSec: 395.7, ItemsPerSec: 0.386,
				Value: Measure{395.75, "MiB/s", Good}, Cost: Measure{10.35, "s/file", Fair}, LatencyOf: "1 MiB write", Latency: lat(2400, 15000, 80000)},
			{Name: "read-small", Title: "Read small file", Ops: 400, Items: 400, Bytes: 400 << 17, Seconds: 0.244, Errors: 2,
				BytesPerSec: 214748364.8, OpsPerSec: 1637.8, ItemsPerSec: 1637.8,
				Value: Measure{1637.8, "files/s", Poor}, Cost: Measure{0.61, "ms/file", Good}, LatencyOf: "128 KiB file (open to close)", Latency: lat(580, 2100, 9000),
				ErrorSamples: []string{"data mismatch in /mnt/jfs/x/small.0.1 at block offset 0"}},
			{Name: "stat", Title: "Stat file", Incomplete: true, Ops: 10, Items: 10, Seconds: 0.002, OpsPerSec: 5000, ItemsPerSec: 5000,
				Value: Measure{5000, "files/s", ""}, Cost: Measure{0.8, "ms/file", ""}, LatencyOf: "stat", Latency: lat(150, 400, 700)},
		},
		Internal: &Internal{Source: "JuiceFS", ClientCPUPercent: &cpu, ClientMemoryBytes: &mem, Rows: []InternalRow{
			{Name: "FUSE operation", Count: 71589, AvgMs: 2.55, Grade: Poor},
			{Name: "Put object", Unknown: true},
		}},
		Expectations: []Expectation{
			{Expr: "write-big>=200MiB/s", Metric: "write-big", Op: ">=", Want: 200, Unit: "MiB/s", Measured: 395.75, Pass: true},
			{Expr: "stat.p99<100us", Metric: "stat.p99", Op: "<", Want: 100, Unit: "us", Measured: 400, Pass: false, Reason: "400 us is not < 100 us"},
		},
		Usage:    Usage{Seconds: 23.4, CPUPercent: 39.5, PeakRSSBytes: 25 << 20},
		Warnings: []string{"not root: only the benchmark's own files are dropped from the page cache"},
	}
}

func TestGoldenTable(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"bench.table.golden", Options{}},
		{"bench.table-color.golden", Options{Color: true}},
		{"bench.table-verbose.golden", Options{Verbose: true}},
	} {
		var b bytes.Buffer
		if err := WriteTable(&b, sample(), tc.opts); err != nil {
			t.Fatal(err)
		}
		if !tc.opts.Color && strings.Contains(b.String(), "\x1b[") {
			t.Errorf("%s: escape codes without colour", tc.name)
		}
		if tc.opts.Color && !strings.Contains(b.String(), ansiGreen+"395.75 MiB/s"+ansiReset) {
			t.Errorf("%s: good value not green", tc.name)
		}
		golden(t, tc.name, b.Bytes())
	}
}

func TestGoldenChecksTable(t *testing.T) {
	r := &Result{SchemaVersion: 1, Command: "objbench", Checks: []Check{
		{Category: "basic", Name: "create a bucket", Status: CheckPass},
		{Category: "basic", Name: "get partial object", Status: CheckWarning, Reason: "range past the end returns 416"},
		{Category: "sync", Name: "change owner/group", Status: CheckNotSupport},
		{Category: "sync", Name: "multipart upload", Status: CheckFailed, Reason: "complete: 400 Bad Request"},
	}}
	var b bytes.Buffer
	if err := WriteTable(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "checks.table.golden", b.Bytes())
}

func TestGoldenJSONRoundTrip(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sample()); err != nil {
		t.Fatal(err)
	}
	golden(t, "bench.json.golden", b.Bytes())
	back, err := ReadJSON(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if back.Parameters[0].Key != "block_size" || back.Parameters[2].Key != "threads" || back.FindPhase("stat") == nil {
		t.Errorf("round trip lost data: %+v", back.Parameters)
	}
	var again bytes.Buffer
	WriteJSON(&again, back)
	if !bytes.Equal(b.Bytes(), again.Bytes()) {
		t.Errorf("JSON does not survive a round trip:\n%s\n---\n%s", b.String(), again.String())
	}
}

func TestReadJSONRejects(t *testing.T) {
	for _, in := range []string{`{}`, `{"schema_version": 99}`, `not json`, `{"schema_version":1,"parameters":[1]}`} {
		if _, err := ReadJSON(strings.NewReader(in)); err == nil {
			t.Errorf("ReadJSON(%s) accepted", in)
		}
	}
}

// TestReadJSONMalformed: a file that is not a result says so in words,
// not in the decoder's (EOF, Go types).
func TestReadJSONMalformed(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{``, "empty: not an fsbench result"},
		{"  \n", "empty: not an fsbench result"},
		{`{"schema_version": 3, "phases": [`, "the JSON ends too early (a truncated file?)"},
		{"\xd2\x01garbage", "not JSON: invalid character"},
		{`[]`, "not an fsbench result (a JSON array, not an object)"},
		{`"text"`, "not an fsbench result (a JSON string, not an object)"},
		{`{"schema_version": "3"}`, "field schema_version: a JSON string is not what a result holds there"},
	} {
		_, err := ReadJSON(strings.NewReader(c.in))
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "report.") || strings.Contains(err.Error(), "EOF") {
			t.Errorf("ReadJSON(%q): %v, want %q", c.in, err, c.want)
		}
	}
}

func TestGoldenCSV(t *testing.T) {
	var b bytes.Buffer
	if err := WriteCSV(&b, sample()); err != nil {
		t.Fatal(err)
	}
	golden(t, "bench.csv.golden", b.Bytes())
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 4 || len(rows[0]) != len(CSVHeader) || rows[1][0] != "write-big" {
		t.Errorf("csv rows = %v", rows)
	}
}

func TestParseFormat(t *testing.T) {
	for _, ok := range []string{"table", "json", "csv"} {
		if f, err := ParseFormat(ok); err != nil || string(f) != ok {
			t.Errorf("ParseFormat(%q) = %v, %v", ok, f, err)
		}
	}
	if _, err := ParseFormat("yaml"); err == nil || !strings.Contains(err.Error(), "table, json, csv") {
		t.Errorf("ParseFormat(yaml) = %v", err)
	}
}

func TestFormatMeasure(t *testing.T) {
	for m, want := range map[Measure]string{
		{Value: 98.912, Unit: "MiB/s"}:     "98.91 MiB/s",
		{Value: 460.84, Unit: "files/s"}:   "460.8 files/s",
		{Value: 2.1666, Unit: "ms/file"}:   "2.17 ms/file",
		{Value: 71589, Unit: "operations"}: "71589 operations",
	} {
		if got := FormatMeasure(m); got != want {
			t.Errorf("FormatMeasure(%v) = %q, want %q", m, got, want)
		}
	}
}

// A result with a negative schema_version or a negative figure is refused
// with a message naming the field, instead of being compared or charted.
func TestReadJSONRejectsNegative(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, sample()); err != nil {
		t.Fatal(err)
	}
	good := b.String()
	if _, err := ReadJSON(strings.NewReader(good)); err != nil {
		t.Fatalf("the sample itself: %v", err)
	}
	for _, c := range []struct{ old, new, want string }{
		{fmt.Sprintf(`"schema_version": %d`, SchemaVersion), `"schema_version": -2`, fmt.Sprintf("schema_version -2 is not a version (1 to %d)", SchemaVersion)},
		{`"ops": 4096`, `"ops": -4096`, `phase "write-big": ops is -4096; a result holds no negative figure`},
		{`"bytes_per_sec": `, `"bytes_per_sec": -`, `phase "write-big": bytes_per_sec is -`},
		{`"p99_us": `, `"p99_us": -`, `phase "write-big": latency.p99_us is -`},
		{`"seconds": `, `"seconds": -`, `phase "write-big": seconds is -`},
	} {
		in := strings.Replace(good, c.old, c.new, 1)
		if in == good {
			t.Fatalf("%s is not in the sample", c.old)
		}
		_, err := ReadJSON(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.new, err, c.want)
		}
	}
	// A run of a repeated benchmark is checked as the summary is.
	r := sample()
	r.Runs = []Run{{Index: 1, Phases: append([]PhaseResult(nil), r.Phases...)}, {Index: 2, Phases: append([]PhaseResult(nil), r.Phases...)}}
	r.Runs[1].Phases[0].Errors = -3
	b.Reset()
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	want := `run 2: phase "write-big": errors is -3; a result holds no negative figure`
	if _, err := ReadJSON(&b); err == nil || err.Error() != want {
		t.Errorf("negative figure in a run: %v, want %q", err, want)
	}
}

// TestTableNotRunPhase: a phase stopped before its first operation shows
// "-" and says it did not run, never a rate of 0.00 that reads as measured.
func TestTableNotRunPhase(t *testing.T) {
	r := sample()
	r.Interrupted = true
	r.Phases = append(r.Phases, PhaseResult{Name: "read-big", Title: "Read big file", Incomplete: true,
		Value: Measure{0, "MiB/s", ""}, Cost: Measure{0, "s/file", ""}, LatencyOf: "1 MiB read"})
	var b bytes.Buffer
	if err := WriteTable(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	var row string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.Contains(l, "Read big file") {
			row = l
		}
	}
	if !strings.Contains(row, "Read big file (not run)") || strings.Contains(row, "0.00") {
		t.Errorf("row of a phase that did not run: %q\n%s", row, b.String())
	}
}

// TestTableNotSupported: an item the storage cannot do is named in one line
// under the table, not shown as a row of figures.
func TestTableNotSupported(t *testing.T) {
	r := sample()
	ns := Measure{Unit: CheckNotSupport}
	r.Phases = append(r.Phases, PhaseResult{Name: "chmod", Title: "change permissions", Value: ns, Cost: ns},
		PhaseResult{Name: "chtimes", Title: "update mtime", Value: ns, Cost: ns})
	var b bytes.Buffer
	if err := WriteTable(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "| change permissions") || strings.Count(out, "not support") != 0 {
		t.Errorf("unsupported items are rows of the table:\n%s", out)
	}
	if !strings.Contains(out, "Not supported by this storage, so not measured: change permissions, update mtime\n") {
		t.Errorf("no line naming the unsupported items:\n%s", out)
	}
}

// TestSwitch: an on/off switch is on the parameter line (its label) only
// when on; JSON keeps it either way.
func TestSwitch(t *testing.T) {
	on, off := Switch("direct", "Direct", true), Switch("direct", "Direct", false)
	if on != (Param{Key: "direct", Label: "Direct", Value: true, Display: "on"}) || off.Label != "" || off.Value != false {
		t.Errorf("on %+v, off %+v", on, off)
	}
	b, err := json.Marshal(Params{on, off})
	if err != nil || string(b) != `{"direct":true,"direct":false}` {
		t.Errorf("JSON %s, %v", b, err)
	}
}
