package expect

import (
	"errors"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/verdict"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in     string
		metric string
		name   string
		stat   string
		op     Op
		value  float64
		unit   string
		dim    Dim
	}{
		{"write-big>=200MiB/s", "write-big", "write-big", "", GE, 200, "MiB/s", ByteRate},
		{" write-big >= 200 MiB/s ", "write-big", "write-big", "", GE, 200, "MiB/s", ByteRate},
		{"read-big>1.5GiB/s", "read-big", "read-big", "", GT, 1.5, "GiB/s", ByteRate},
		{"read-big>=512KiB/s", "read-big", "read-big", "", GE, 512, "KiB/s", ByteRate},
		{"read-big>=100MB/s", "read-big", "read-big", "", GE, 100, "MiB/s", ByteRate},
		{"read-big>=100mib/s", "read-big", "read-big", "", GE, 100, "MiB/s", ByteRate},
		{"read-big>=1000B/s", "read-big", "read-big", "", GE, 1000, "B/s", ByteRate},
		{"stat.p99<5ms", "stat.p99", "stat", "p99", LT, 5, "ms", Latency},
		{"stat.p50<=250us", "stat.p50", "stat", "p50", LE, 250, "us", Latency},
		{"stat.p90<=250µs", "stat.p90", "stat", "p90", LE, 250, "us", Latency},
		{"write-small.p999<1s", "write-small.p999", "write-small", "p999", LT, 1, "s", Latency},
		{"write-small.max<2.5s", "write-small.max", "write-small", "max", LT, 2.5, "s", Latency},
		{"errors==0", "errors", "errors", "", EQ, 0, "", Count},
		{"errors <= 3", "errors", "errors", "", LE, 3, "", Count},
		{"stat.errors==0", "stat.errors", "stat", "errors", EQ, 0, "", Count},
		{"put-small>=100objects/s", "put-small", "put-small", "", GE, 100, "objects/s", ItemRate},
		{"stat>=1e3files/s", "stat", "stat", "", GE, 1000, "files/s", ItemRate},
		{"write-big>=.5ops/s", "write-big", "write-big", "", GE, 0.5, "ops/s", OpRate},
		{"functional", "functional", "functional", "", EQ, 1, "", Bool},
		{"functional==pass", "functional", "functional", "", EQ, 1, "", Bool},
		{"functional == true", "functional", "functional", "", EQ, 1, "", Bool},
		{"seq.read>=1MiB/s", "seq.read", "seq.read", "", GE, 1, "MiB/s", ByteRate},
		{"seq.read.p99<1ms", "seq.read.p99", "seq.read", "p99", LT, 1, "ms", Latency},
		{"stat.p95<5ms", "stat.p95", "stat.p95", "", LT, 5, "ms", Latency},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if e.Metric != tt.metric || e.Name != tt.name || e.Stat != tt.stat || e.Op != tt.op || e.Value != tt.value || e.Unit.Name != tt.unit || e.Dim() != tt.dim {
			t.Errorf("Parse(%q) = %+v", tt.in, e)
		}
		if e.Text != strings.TrimSpace(tt.in) {
			t.Errorf("Parse(%q).Text = %q", tt.in, e.Text)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", "empty"},
		{"write-big", "want NAME OP VALUE"},
		{">=200MiB/s", "no metric name"},
		{"write-big>=", "no value"},
		{"write-big>=fast", "not a number"},
		{"write-big>=-5MiB/s", "not a number"},
		{"write-big>=+5MiB/s", "not a number"},
		{"write-big>=NaN", "not a number"},
		{"write-big>=inf", "not a number"},
		{"write-big>=0x10MiB/s", "unknown unit"},
		{"write-big>=200 furlongs", "unknown unit"},
		{"write-big>=200Mb/s", "bits"},
		{"write-big>=200Mbps", "bits"},
		{"write-big>=200Gbit/s", "bits"},
		{"write-big=200MiB/s", "use =="},
		{"write-big=>200MiB/s", "write >= instead of =>"},
		{"write-big!=200MiB/s", "!= is not supported"},
		{"Write-Big>=200MiB/s", "lower case"},
		{"write big>=200MiB/s", "may only hold"},
		{".p99<5ms", "no metric name before .p99"},
		{".stat>=1ops/s", "empty part"},
		{"seq..read>=1ops/s", "empty part"},
		{"seq.>=1ops/s", "empty part"},
		{"errors.p99<5ms", "errors takes no suffix"},
		{"functional==fail", "functional==pass"},
		{"functional>=1", "functional==pass"},
		{"functional.p99<1ms", "no suffix"},
		{"stat.p99<5ms<6ms", "unknown unit"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		if err == nil {
			t.Errorf("Parse(%q): no error, want %q", tt.in, tt.want)
			continue
		}
		if !errors.Is(err, ErrSyntax) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Parse(%q) = %v, want it to say %q", tt.in, err, tt.want)
		}
	}
}

func TestCheck(t *testing.T) {
	tests := []struct {
		cat  Catalog
		in   string
		want string // "" for ok
	}{
		{Bench, "write-big>=200MiB/s", ""},
		{Bench, "write-big>=2files/s", ""},
		{Bench, "write-big>=200ops/s", ""},
		{Bench, "write-small>=100files/s", ""},
		{Bench, "write-small>=10MiB/s", ""},
		{Bench, "stat>=1000files/s", ""},
		{Bench, "stat.p99<5ms", ""},
		{Bench, "stat.errors==0", ""},
		{Bench, "errors==0", ""},
		{Objbench, "put-small>=100objects/s", ""},
		{Objbench, "upload>=50MiB/s", ""},
		{Objbench, "download.p99<100ms", ""},
		{Objbench, "functional", ""},
		{Bench, "stat>=5MiB/s", "moves no data"},
		{Objbench, "list>=5MiB/s", "moves no data"},
		{Bench, "write-big>=200", "needs a unit"},
		{Bench, "write-big>=200ms", "needs a suffix"},
		{Bench, "stat.p99<5", "is a latency"},
		{Bench, "stat.p99<5MiB/s", "is a latency"},
		{Bench, "stat.errors==0ms", "takes no unit"},
		{Bench, "errors==0ms", "takes no unit"},
		{Bench, "upload>=5MiB/s", `bench measures no metric "upload"`},
		{Bench, "nope>=5MiB/s", "known: write-big, read-big, write-small, read-small, stat, read-existing-small, read-existing-big, errors"},
		{Objbench, "write-big>=5MiB/s", "measures no metric"},
		{Bench, "functional", "runs no functional checks"},
		{Bench, "stat.p95<5ms", "unknown suffix .p95"},
		{Catalog{Command: "bench", Metrics: []Metric{{"seq.read", true}}}, "seq.read>=1MiB/s", ""},
		{Catalog{Command: "bench", Metrics: []Metric{{"seq.read", true}}}, "seq.read.p999<1s", ""},
		{Catalog{Command: "bench", Metrics: []Metric{{"seq.read", true}}}, "seq.write>=1MiB/s", "measures no metric"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		err = tt.cat.Check(e)
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s Check(%q): %v", tt.cat.Command, tt.in, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s Check(%q) = %v, want %q", tt.cat.Command, tt.in, err, tt.want)
		}
	}
}

func TestParseLines(t *testing.T) {
	in := `# thresholds of the storage team
write-big >= 200MiB/s   # 1 GiB files
read-big>=1GiB/s

	# indented comment
stat.p99<5ms
errors==0
`
	es, err := ParseLines(strings.NewReader(in), "ci.expect")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range es {
		got = append(got, e.String())
	}
	want := "write-big>=200MiB/s read-big>=1GiB/s stat.p99<5ms errors==0"
	if strings.Join(got, " ") != want {
		t.Errorf("got %q, want %q", got, want)
	}
	_, err = ParseLines(strings.NewReader("errors==0\n\nstat.p99<<5ms\n"), "ci.expect")
	if err == nil || !strings.HasPrefix(err.Error(), "ci.expect:3: ") {
		t.Errorf("error = %v, want it to name ci.expect:3", err)
	}
}

func result() *report.Result {
	return &report.Result{
		SchemaVersion: report.SchemaVersion,
		Command:       "bench",
		Phases: []report.PhaseResult{
			{Name: "write-big", Bytes: 200 << 20, Items: 2, Ops: 200, Seconds: 2, BytesPerSec: 100 << 20, ItemsPerSec: 1, OpsPerSec: 100,
				Latency: metrics.Summary{Count: 200, P50: 900, P90: 1500, P99: 4000, P999: 9000, Max: 12000}},
			{Name: "stat", Items: 200, Ops: 200, Seconds: 0.1, ItemsPerSec: 2000, OpsPerSec: 2000, Errors: 2,
				Latency: metrics.Summary{Count: 200, P50: 100, P90: 200, P99: 1234.5678, P999: 5000, Max: 5000}},
			{Name: "write-small", Items: 5, Ops: 5, Bytes: 5 << 10, Seconds: 1, BytesPerSec: 5 << 10, ItemsPerSec: 5, OpsPerSec: 5,
				Latency: metrics.Summary{Count: 5, P50: 100, P90: 200, P99: 300, P999: 300, Max: 300}},
			{Name: "read-small", Incomplete: true, Items: 5, Seconds: 1, ItemsPerSec: 5},
			{Name: "chmod", Value: report.Measure{Unit: report.CheckNotSupport}},
		},
	}
}

// TestEval: each expectation's verdict, measured value and reason. The
// phases of result() hold 200 latency samples: enough for p50 and p90,
// too few for p99 and p99.9, which are then too short to judge, never
// failed; the maximum is judged however few samples there are.
func TestEval(t *testing.T) {
	const pass, fail, short = report.VerdictPass, report.VerdictFail, report.VerdictTooShort
	tests := []struct {
		in       string
		verdict  string
		measured float64
		unit     string
		reason   string
	}{
		{"write-big>=100MiB/s", pass, 100, "MiB/s", ""},
		{"write-big>100MiB/s", fail, 100, "MiB/s", "100 MiB/s is not > 100 MiB/s"},
		{"write-big>=0.1GiB/s", fail, 0.0976562, "GiB/s", "is not >= 0.1 GiB/s"},
		{"write-big>=102400KiB/s", pass, 102400, "KiB/s", ""},
		{"write-big>=1files/s", pass, 1, "files/s", ""},
		{"write-big>=101ops/s", fail, 100, "ops/s", ""},
		{"write-big.p99<5ms", short, 4, "ms", "200 latency samples, p99 needs 1000: a longer run or --repeat"},
		{"write-big.p999<5ms", short, 9, "ms", "200 latency samples, p999 needs 10000"},
		{"write-big.max<=12000us", pass, 12000, "us", ""},
		{"write-big.max<10ms", fail, 12, "ms", "12 ms is not < 10 ms"},
		{"write-big.p50<0.001s", pass, 0.0009, "s", ""},
		{"stat.p99<1.2345678ms", short, 1.23457, "ms", "p99 needs 1000"},
		{"stat.p90<=200us", pass, 200, "us", ""},
		{"stat.p90<100us", fail, 200, "us", "200 us is not < 100 us"},
		{"stat>=1000files/s", pass, 2000, "files/s", ""},
		{"stat.errors==0", fail, 2, "errors", "2 errors is not == 0 errors"},
		{"errors==0", fail, 2, "errors", ""},
		{"errors<=2", pass, 2, "errors", ""},
		{"write-big.errors==0", pass, 0, "errors", ""},
		{"write-small>=1files/s", short, 5, "files/s", "5 operations, a rate needs 20: a longer run (more or bigger files) or --repeat"},
		{"write-small>=100files/s", short, 5, "files/s", "5 operations"},
		{"read-small>=1files/s", fail, 5, "files/s", "did not complete"},
		{"read-big>=1MiB/s", fail, 0, "MiB/s", "read-big was not measured in this run"},
		{"functional", fail, 0, "failed checks", "no functional checks were run"},
		{"chmod>=1ops/s", fail, 0, "ops/s", "chmod is not supported by this storage"},
	}
	res := result()
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		x := Eval(e, res)
		if x.Verdict != tt.verdict || x.Measured != tt.measured || x.Unit != tt.unit || !strings.Contains(x.Reason, tt.reason) {
			t.Errorf("Eval(%q) = %+v, want %s measured=%v %s reason %q", tt.in, x, tt.verdict, tt.measured, tt.unit, tt.reason)
		}
		if x.Pass != (tt.verdict != fail) {
			t.Errorf("Eval(%q): pass %v with verdict %s; only a failure is not a pass", tt.in, x.Pass, x.Verdict)
		}
		if x.Expr != tt.in || x.Metric != e.Metric {
			t.Errorf("Eval(%q) names %q / %q", tt.in, x.Expr, x.Metric)
		}
		if x.Verdict != pass && x.Reason == "" {
			t.Errorf("Eval(%q) is %s without a reason", tt.in, x.Verdict)
		}
	}
}

// repeated is a result of runs of write-big at the given rates (MiB/s),
// summarised as --repeat summarises them.
func repeated(t *testing.T, mibs ...float64) *report.Result {
	t.Helper()
	res := &report.Result{SchemaVersion: report.SchemaVersion, Command: "bench"}
	for i, v := range mibs {
		p := report.PhaseResult{Name: "write-big", Bytes: int64(v * (1 << 20)), Items: 1, Ops: 100, Seconds: 1,
			BytesPerSec: v * (1 << 20), ItemsPerSec: 1, OpsPerSec: 100, Value: report.Measure{Value: v, Unit: "MiB/s"}}
		res.Runs = append(res.Runs, report.Run{Index: i + 1, Phases: []report.PhaseResult{p}})
	}
	if err := verdict.SummarizeRuns(res); err != nil {
		t.Fatal(err)
	}
	return res
}

// TestEvalRepeats: a throughput over repeated runs is judged on their
// median when the runs agree (the runs' range with fewer than six, the
// median's interval from six on) and is too short to judge when they
// straddle the bound, whatever the median says.
func TestEvalRepeats(t *testing.T) {
	const pass, fail, short = report.VerdictPass, report.VerdictFail, report.VerdictTooShort
	three := repeated(t, 190, 210, 205)
	// Ten runs: one far below and one far above the rest; the median's
	// interval (205-212) leaves both out.
	ten := repeated(t, 150, 205, 206, 207, 208, 209, 210, 211, 212, 260)
	tests := []struct {
		res      *report.Result
		in       string
		verdict  string
		measured float64
		reason   string
	}{
		{three, "write-big>=150MiB/s", pass, 205, ""},
		{three, "write-big>=200MiB/s", short, 205, "the runs' range (190 to 210) straddles the bound: more runs (--repeat) or longer ones"},
		{three, "write-big<200MiB/s", short, 205, "straddles"},
		{three, "write-big>=250MiB/s", fail, 205, "205 MiB/s is not >= 250 MiB/s"},
		{ten, "write-big>=200MiB/s", pass, 208.5, ""},
		{ten, "write-big>=207MiB/s", short, 208.5, "the median's 95% interval"},
		{ten, "write-big>=213MiB/s", fail, 208.5, "is not >= 213 MiB/s"},
	}
	for _, tt := range tests {
		e, err := Parse(tt.in)
		if err != nil {
			t.Fatal(err)
		}
		x := Eval(e, tt.res)
		if x.Verdict != tt.verdict || x.Measured != tt.measured || !strings.Contains(x.Reason, tt.reason) {
			t.Errorf("%d runs, Eval(%q) = %+v, want %s measured %v reason %q", len(tt.res.Runs), tt.in, x, tt.verdict, tt.measured, tt.reason)
		}
	}
}

func TestEvalFunctional(t *testing.T) {
	e, _ := Parse("functional")
	res := &report.Result{Checks: []report.Check{
		{Category: "basic", Name: "put an object", Status: report.CheckPass},
		{Category: "sync", Name: "change owner/group", Status: report.CheckNotSupport},
		{Category: "basic", Name: "get partial object", Status: report.CheckWarning},
	}}
	if x := Eval(e, res); !x.Pass || x.Measured != 0 {
		t.Errorf("all passed: %+v", x)
	}
	res.Checks = append(res.Checks, report.Check{Category: "basic", Name: "list objects", Status: report.CheckFailed, Reason: "boom"})
	x := Eval(e, res)
	if x.Pass || x.Measured != 1 || x.Reason != "failed: list objects" {
		t.Errorf("one failed: %+v", x)
	}
	if got := FailedChecks(res); len(got) != 1 || got[0] != "basic/list objects" {
		t.Errorf("FailedChecks = %q", got)
	}
}

// FuzzParse checks that Parse never panics and that what it accepts
// survives a round trip through String.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"write-big>=200MiB/s", "stat.p99<5ms", "errors==0", "put-small>=100objects/s", "functional",
		"functional==pass", "read-big > 1.5 GiB/s", "stat.p50<=250µs", "write-big>=1e3ops/s", "a.b.c<1",
		"x=>1", "x!=1", "=", "", "stat.p99<5ms<6ms", "write-big>=.5MB/s", "e>=1e", "e>=1e+", "e>=9e999",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q): error %v does not wrap ErrSyntax", s, err)
			}
			return
		}
		if e.Value < 0 || e.Value != e.Value {
			t.Fatalf("Parse(%q): value %v", s, e.Value)
		}
		e2, err := Parse(e.String())
		if err != nil {
			t.Fatalf("Parse(%q) ok, but Parse(%q): %v", s, e.String(), err)
		}
		e2.Text = e.Text
		if e2 != e {
			t.Fatalf("round trip of %q: %+v != %+v", s, e2, e)
		}
		_ = Bench.Check(e)
		_ = Objbench.Check(e)
		_ = Eval(e, result())
	})
}

// FuzzParseLines: an --expect-file never makes ParseLines panic; it gives
// expectations that parse again one by one, or one error naming the file
// and line.
func FuzzParseLines(f *testing.F) {
	for _, s := range []string{
		"write-big>=200MiB/s\nstat.p99<5ms # fast\n\n# comment\nfunctional\n",
		"errors==0\r\nread-big>1GiB/s\r\n", "bad line\n", "#only\n", "", "x\x00y>1\n", "a>=1\n" + strings.Repeat("b", 5000) + ">2\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		es, err := ParseLines(strings.NewReader(s), "x.txt")
		if err != nil {
			if !strings.HasPrefix(err.Error(), "x.txt") {
				t.Fatalf("error without the file name: %v", err)
			}
			return
		}
		for _, e := range es {
			if _, err := Parse(e.String()); err != nil {
				t.Fatalf("%q from the file does not parse again: %v", e.String(), err)
			}
		}
	})
}
