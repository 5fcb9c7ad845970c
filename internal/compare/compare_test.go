package compare

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
)

// phase is a phase whose latency has enough samples for every percentile.
func phase(name string, value float64, unit report.Unit, p99 float64, errs int64) report.PhaseResult {
	return phaseN(name, value, unit, p99, errs, 20000)
}

func phaseN(name string, value float64, unit report.Unit, p99 float64, errs, samples int64) report.PhaseResult {
	return report.PhaseResult{Name: name, Value: report.Measure{Value: value, Unit: unit}, Errors: errs,
		Latency: metrics.Summary{Count: samples, P50: p99 / 2, P90: p99 / 1.5, P99: p99, P999: p99, Max: p99}}
}

// repeated is a result of one run per value: phase "write" at each value
// (MiB/s), p99 of 1 ms.
func repeated(values ...float64) *report.Result {
	r := res()
	for i, v := range values {
		r.Runs = append(r.Runs, report.Run{Index: i + 1, Phases: []report.PhaseResult{phase("write", v, "MiB/s", 1000, 0)}})
	}
	r.Phases = []report.PhaseResult{phase("write", values[len(values)/2], "MiB/s", 1000, 0)}
	return r
}

func res(phases ...report.PhaseResult) *report.Result {
	return &report.Result{SchemaVersion: 1, Command: "bench", Phases: phases,
		Parameters: report.Params{{Key: "threads", Value: 4}}}
}

func find(t *testing.T, r *Report, metric string) Item {
	t.Helper()
	for _, it := range r.Items {
		if it.Metric == metric {
			return it
		}
	}
	t.Fatalf("no item %s in %+v", metric, r.Items)
	return Item{}
}

// TestCompareStatuses: with one run a side, nothing tells a change from
// noise, so only changes beyond the threshold are called; errors are
// counted, not estimated, and the maximum is never judged.
func TestCompareStatuses(t *testing.T) {
	old := res(phase("write-big", 200, "MiB/s", 1000, 0), phase("stat", 1000, "files/s", 100, 0))
	new := res(phase("write-big", 150, "MiB/s", 1050, 2), phase("stat", 1100, "files/s", 200, 0))
	ten := 10.0
	r, err := Compare(old, new, "a.json", "b.json", Options{Threshold: &ten})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		metric, status string
		change         float64
	}{
		{"write-big", Regression, -25},
		{"write-big.p99", Same, 5},
		{"write-big.max", TooFew, 5},
		{"stat", Same, 10}, // exactly the threshold
		{"stat.p50", Regression, 100},
		{"stat.p99", Regression, 100},
	}
	for _, tt := range tests {
		it := find(t, r, tt.metric)
		if it.Status != tt.status || it.ChangePct == nil || *it.ChangePct != tt.change {
			t.Errorf("%s: status %s change %v, want %s %v", tt.metric, it.Status, it.ChangePct, tt.status, tt.change)
		}
	}
	if it := find(t, r, "write-big"); !strings.Contains(it.Note, "one run a side") || it.P != nil {
		t.Errorf("a single-run regression says how it was judged: %+v", it)
	}
	if it := find(t, r, "write-big.errors"); it.Status != Regression || it.ChangePct != nil {
		t.Errorf("errors 0 -> 2: %+v", it)
	}
	// write-big, write-big.errors and stat's p50, p90, p99 and p99.9.
	if r.Regressions != 6 {
		t.Errorf("Regressions = %d, want 6", r.Regressions)
	}
	if !strings.HasPrefix(r.Verdict, "6 regressions beyond 10%: write-big -25.0%") || !strings.Contains(r.Verdict, "--repeat") {
		t.Errorf("verdict %q", r.Verdict)
	}

	// Without a threshold nothing is a regression, and with one run a side
	// no change is called but errors.
	r, _ = Compare(old, new, "", "", Options{})
	if r.Regressions != 0 || find(t, r, "write-big").Status != Same || find(t, r, "write-big.errors").Status != Worse {
		t.Errorf("no threshold: %+v", r.Items)
	}
	if r.Expectations() != nil {
		t.Errorf("no threshold: expectations %+v", r.Expectations())
	}

	// Only some kinds.
	r, _ = Compare(old, new, "", "", Options{Threshold: &ten, Kinds: []string{"throughput"}})
	if len(r.Items) != 3 || r.Regressions != 2 { // write-big, write-big.errors, stat
		t.Errorf("throughput only: %+v", r.Items)
	}
}

// TestCompareRepeats: with runs on both sides a change is called only when
// a U test over them is significant, and a regression only when beyond
// the threshold too.
func TestCompareRepeats(t *testing.T) {
	base := repeated(100, 102, 98, 101, 99)
	ten := 10.0
	for _, c := range []struct {
		name   string
		new    *report.Result
		thr    *float64
		status string
	}{
		{"noise", repeated(99, 103, 100, 97, 101), &ten, Same},
		{"slower, beyond", repeated(80, 82, 79, 81, 83), &ten, Regression},
		{"slower, within", repeated(95, 94, 96, 95, 94), &ten, Worse},
		{"slower, no threshold", repeated(80, 82, 79, 81, 83), nil, Worse},
		{"faster", repeated(120, 121, 119, 122, 118), &ten, Better},
		// a big change in one outlying run is not a change of the runs
		{"one outlier", repeated(100, 101, 99, 40, 100), &ten, Same},
	} {
		r, err := Compare(base, c.new, "", "", Options{Threshold: c.thr})
		if err != nil {
			t.Fatal(err)
		}
		it := find(t, r, "write")
		if it.Status != c.status {
			t.Errorf("%s: %s (%s, p %v), want %s", c.name, it.Status, it.Note, it.P, c.status)
		}
		if it.OldRuns != 5 || it.NewRuns != len(c.new.Runs) || it.P == nil {
			t.Errorf("%s: runs %d/%d p %v", c.name, it.OldRuns, it.NewRuns, it.P)
		}
	}
	// Five runs against three can show a change of a figure tested alone
	// (p = 2/56); tested with the four latency figures of the phase, the
	// adjustment for five figures asks more than three runs can give.
	r, _ := Compare(base, repeated(50, 51, 52), "", "", Options{Threshold: &ten, Kinds: []string{"throughput"}})
	if it := find(t, r, "write"); it.Status != Regression || r.Tested != 1 {
		t.Errorf("five against three, alone: %s (%s), %d tested", it.Status, it.Note, r.Tested)
	}
	r, _ = Compare(base, repeated(50, 51, 52), "", "", Options{Threshold: &ten})
	if it := find(t, r, "write"); it.Status != Same || r.Tested != 5 || !strings.Contains(it.Note, "adjusted for 5 figures") {
		t.Errorf("five against three, among five figures: %s (%s), %d tested", it.Status, it.Note, r.Tested)
	}
	// Three runs a side cannot reach 5% however far apart they are.
	r, _ = Compare(repeated(100, 102, 98), repeated(50, 51, 52), "", "", Options{Threshold: &ten})
	if it := find(t, r, "write"); it.Status != Same || !strings.Contains(it.Note, "4 runs a side are needed") {
		t.Errorf("three runs a side: %s, %q", it.Status, it.Note)
	}
}

// TestCompareRegressionInterval: a regression needs the change's
// interval wholly beyond the threshold. Runs 10.7% slower by their
// medians, every one below every OLD run (significant, and beyond 10% by
// the medians: a regression by the point estimate alone), but reaching
// back within 10%, are worse, not a regression; runs 30% slower are a
// regression, and the verdict says what was tested.
func TestCompareRegressionInterval(t *testing.T) {
	base := repeated(99, 99.5, 100, 100.5, 101)
	ten := 10.0
	r, err := Compare(base, repeated(84, 88, 89.3, 90.5, 91.5), "", "", Options{Threshold: &ten})
	if err != nil {
		t.Fatal(err)
	}
	it := find(t, r, "write")
	if !r.beyond(it) || it.PAdjusted == nil || *it.PAdjusted >= 0.05 {
		t.Fatalf("the drift is not significant and beyond 10%% by its medians: %+v", it)
	}
	if it.Status != Worse || r.Regressions != 0 || it.PBeyond == nil || *it.PBeyond < 0.05 ||
		!strings.Contains(it.Note, "95% interval reaches within 10%") {
		t.Errorf("10.7%% slower, reaching within 10%%: %s, %d regressions, p beyond %v, %q; want worse", it.Status, r.Regressions, it.PBeyond, it.Note)
	}
	if got := statusText(it, false); got != "worse, not surely beyond (p=0.008)" {
		t.Errorf("its RESULT cell: %q", got)
	}
	r, _ = Compare(base, repeated(69, 69.5, 70, 70.5, 71), "", "", Options{Threshold: &ten})
	if it := find(t, r, "write"); it.Status != Regression || r.Regressions != 1 || it.PBeyond == nil || *it.PBeyond >= 0.05 {
		t.Errorf("30%% slower: %s, %d regressions, p beyond %v; want a regression", it.Status, r.Regressions, it.PBeyond)
	}
	for _, want := range []string{"1 regression beyond 10%: write -30.0%", "after adjusting for the 5 figures tested",
		"when nothing changed, the chance that any is called is at most 5%", "A worse change is a regression when its 95% interval lies wholly beyond 10%."} {
		if !strings.Contains(r.Verdict, want) {
			t.Errorf("verdict %q lacks %q", r.Verdict, want)
		}
	}
}

// TestCompareTooFewSamples: p99.9 of a thousand operations, and any
// maximum, are not judged however much they changed.
func TestCompareTooFewSamples(t *testing.T) {
	old := res(phaseN("stat", 1000, "files/s", 100, 0, 1024))
	new := res(phaseN("stat", 1000, "files/s", 900, 0, 1024))
	zero := 0.0
	r, _ := Compare(old, new, "", "", Options{Threshold: &zero})
	for metric, want := range map[string]string{"stat.p50": Regression, "stat.p99": Regression, "stat.p999": TooFew, "stat.max": TooFew} {
		if it := find(t, r, metric); it.Status != want {
			t.Errorf("%s: %s (%s), want %s", metric, it.Status, it.Note, want)
		}
	}
	if it := find(t, r, "stat.p999"); it.Note != "p999 needs 10000 samples, has 1024" {
		t.Errorf("note %q", it.Note)
	}
}

func TestCompareThresholdEdge(t *testing.T) {
	old := res(phase("write-big", 100, "MiB/s", 1000, 0))
	new := res(phase("write-big", 90, "MiB/s", 1100, 0))
	ten := 10.0
	r, _ := Compare(old, new, "", "", Options{Threshold: &ten})
	if r.Regressions != 0 {
		t.Errorf("exactly 10%% worse is within a 10%% threshold: %+v", r.Items)
	}
	zero := 0.0
	r, _ = Compare(old, new, "", "", Options{Threshold: &zero})
	if r.Regressions == 0 {
		t.Errorf("threshold 0: any worse figure is a regression")
	}
}

func TestCompareMismatchAndMissing(t *testing.T) {
	old := res(phase("write-big", 100, "MiB/s", 1000, 0), phase("stat", 1000, "files/s", 100, 0))
	obj := res(phase("upload", 100, "MiB/s", 1000, 0))
	obj.Command = "objbench"
	if _, err := Compare(old, obj, "old.json", "obj.json", Options{}); !errors.Is(err, ErrMismatch) || !strings.Contains(err.Error(), "old.json is from fsbench bench, obj.json from fsbench objbench") {
		t.Errorf("mismatch: %v", err)
	}
	new := res(phase("stat", 1000, "files/s", 100, 0), phase("read-small", 10, "files/s", 100, 0))
	new.Parameters = report.Params{{Key: "threads", Value: 8}}
	r, err := Compare(old, new, "", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if it := find(t, r, "write-big"); it.Status != Missing || it.New != nil || *it.Old != 100 {
		t.Errorf("missing: %+v", it)
	}
	if it := find(t, r, "read-small.p99"); it.Status != Added || it.Old != nil {
		t.Errorf("added: %+v", it)
	}
	want := []string{"parameter threads differs: 4 (OLD) vs 8 (NEW)", "write-big is in OLD but not in NEW", "read-small is in NEW but not in OLD"}
	if strings.Join(r.Warnings, "|") != strings.Join(want, "|") {
		t.Errorf("warnings %q, want %q", r.Warnings, want)
	}
}

func TestCompareNotSupported(t *testing.T) {
	ns := report.PhaseResult{Name: "chmod", Value: report.Measure{Unit: report.CheckNotSupport}}
	old := res(phase("chmod", 100, "objects/s", 100, 0), phase("head", 10, "objects/s", 100, 0))
	new := res(ns, phase("head", 10, "objects/s", 100, 0))
	r, err := Compare(old, new, "", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range r.Items {
		if it.Phase == "chmod" {
			t.Errorf("compared an unsupported item: %+v", it)
		}
	}
	if len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "chmod is supported in only one") {
		t.Errorf("warnings %q", r.Warnings)
	}
	new.Phases[1].Incomplete = true
	r, _ = Compare(old, new, "", "", Options{})
	if len(r.Warnings) != 2 || r.Warnings[1] != "head did not complete in NEW; its figures are partial" {
		t.Errorf("warnings %q", r.Warnings)
	}
	new.Phases[1].Incomplete = false
	r, _ = Compare(new, new, "", "", Options{})
	if len(r.Warnings) != 0 || len(r.Items) != 6 {
		t.Errorf("both unsupported: %q %+v", r.Warnings, r.Items)
	}
}

func TestExpectations(t *testing.T) {
	old := res(phase("write-big", 200, "MiB/s", 1000, 0), phase("stat", 1000, "files/s", 100, 0))
	new := res(phase("write-big", 150, "MiB/s", 1000, 0), phase("stat", 1000, "files/s", 100, 0))
	ten := 10.0
	r, _ := Compare(old, new, "base.json", "", Options{Threshold: &ten})
	xs := r.Expectations()
	if len(xs) != 1 {
		t.Fatalf("expectations %+v", xs)
	}
	x := xs[0]
	if x.Pass || x.Metric != "write-big" || x.Op != ">=" || x.Want != 180 || x.Measured != 150 || x.Unit != "MiB/s" ||
		x.Expr != "write-big within 10% of baseline" || x.Reason != "-25.0% vs baseline 200.00 MiB/s" {
		t.Errorf("regression expectation %+v", x)
	}
	r, _ = Compare(old, old, "base.json", "", Options{Threshold: &ten})
	xs = r.Expectations()
	if len(xs) != 1 || !xs[0].Pass || xs[0].Metric != "baseline" {
		t.Errorf("no regression: %+v", xs)
	}
}

func TestParseThresholdAndKinds(t *testing.T) {
	for in, want := range map[string]float64{"10%": 10, "10": 10, " 2.5 % ": 2.5, "0%": 0} {
		if got, err := ParseThreshold(in); err != nil || got != want {
			t.Errorf("ParseThreshold(%q) = %v, %v", in, got, err)
		}
	}
	for _, in := range []string{"", "-5%", "ten", "NaN", "%"} {
		if _, err := ParseThreshold(in); err == nil {
			t.Errorf("ParseThreshold(%q): no error", in)
		}
	}
	if k, err := ParseKinds("throughput, p99"); err != nil || strings.Join(k, ",") != "throughput,p99" {
		t.Errorf("ParseKinds: %v %v", k, err)
	}
	for _, in := range []string{"", ",", "p95", "throughput,mean"} {
		if _, err := ParseKinds(in); err == nil {
			t.Errorf("ParseKinds(%q): no error", in)
		}
	}
}

// TestGoldenPairs reads the result pairs under testdata/compare and checks
// the figures the golden files of the CLI test show.
func TestGoldenPairs(t *testing.T) {
	read := func(name string) *report.Result {
		f, err := os.Open(filepath.Join("..", "..", "testdata", "compare", name))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		r, err := report.ReadJSON(f)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	ten := 10.0
	r, err := Compare(read("old.json"), read("new-regression.json"), "old.json", "new-regression.json", Options{Threshold: &ten})
	if err != nil {
		t.Fatal(err)
	}
	// stat.p99 rose 50%, but from 400 operations: too few to judge.
	if got := strings.Join(r.RegressionList(), ", "); got != "write-big -25.0%, write-small.errors +3" {
		t.Errorf("regressions: %s", got)
	}
	r, _ = Compare(read("old.json"), read("new-within.json"), "", "", Options{Threshold: &ten})
	if r.Regressions != 0 {
		t.Errorf("within: %v", r.RegressionList())
	}
}

// FuzzResultFiles: a result file is user input (compare, --baseline).
// Whatever ReadJSON accepts, comparing and rendering it never panics, and
// thresholds and kinds either parse or are one-line errors.
func FuzzResultFiles(f *testing.F) {
	for _, name := range []string{"old.json", "new-regression.json", "objbench.json", "not-a-result.json"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "compare", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, "10%", "throughput,p99")
	}
	f.Add([]byte(`{"schema_version":2,"command":"bench","phases":[{"name":"x","histogram":"HISTFAAAA"}]}`), "nan", ",")
	f.Add([]byte(`{"schema_version":1,"phases":[{"name":"a","seconds":-1,"ops":-5}]}`), "-1", "p999")
	f.Fuzz(func(t *testing.T, data []byte, threshold, kinds string) {
		th, err := ParseThreshold(threshold)
		if err != nil && strings.Contains(err.Error(), "\n") && !strings.Contains(threshold, "\n") {
			t.Fatalf("ParseThreshold(%q): %q", threshold, err)
		}
		if err == nil && (th < 0 || th != th) {
			t.Fatalf("ParseThreshold(%q) = %v", threshold, th)
		}
		ks, _ := ParseKinds(kinds)
		r, err := report.ReadJSON(bytes.NewReader(data))
		if err != nil {
			return
		}
		for _, fm := range report.Formats() {
			_ = report.Write(io.Discard, r, report.Format(fm), report.Options{Verbose: true})
		}
		rep, err := Compare(r, r, "a.json", "b.json", Options{Threshold: &th, Kinds: ks})
		if err != nil {
			return
		}
		_ = WriteTable(io.Discard, rep, true)
		_ = WriteJSON(io.Discard, rep)
	})
}

// TestCompareLoadDiff: a side run on a markedly busier machine is named;
// a small difference, or an unknown load, says nothing.
func TestCompareLoadDiff(t *testing.T) {
	at := func(cpus int, loads ...float64) *report.Result {
		r := repeated(100, 100, 100)
		r.Host.CPUs = cpus
		for i := range r.Runs {
			r.Runs[i].Load = loads[i]
		}
		return r
	}
	quiet, busy := at(2, 0.5, 0.7, 0.6), at(2, 30, 31, 29)
	r, _ := Compare(quiet, busy, "", "", Options{})
	want := "the machine was busier during NEW (load average 0.6 in OLD, 30.0 in NEW, on 2 CPUs): changes may come from that, not from the storage"
	if len(r.Warnings) != 1 || r.Warnings[0] != want {
		t.Errorf("warnings %q", r.Warnings)
	}
	for _, c := range []struct{ old, new *report.Result }{
		{quiet, at(2, 0.9, 1.2, 0.8)},            // within half the CPUs
		{at(64, 40, 41, 39), at(64, 48, 50, 47)}, // within a quarter
		{quiet, at(2, 30, 0, 29)},                // one load unknown
	} {
		if r, _ := Compare(c.old, c.new, "", "", Options{}); len(r.Warnings) != 0 {
			t.Errorf("warnings %q", r.Warnings)
		}
	}
}

// TestCompareOriginDiff: a read phase the storage served in one result and
// the page cache in the other is named, with which side the cache served;
// both from the storage, both from the cache, or an unknown share, say
// nothing.
func TestCompareOriginDiff(t *testing.T) {
	at := func(pct float64, known bool) *report.Result {
		p := phase("read-big", 900, "MiB/s", 1000, 0)
		p.Origin = &report.Origin{Source: "block device vda (254:0)", ReadBytes: 1000}
		if known {
			v := int64(pct * 10)
			p.Origin.StorageBytes = &v
		}
		p.Origin.SetFromStorage()
		return res(p)
	}
	r, _ := Compare(at(100, true), at(2, true), "", "", Options{})
	want := "read-big: 100.0% of what OLD read came from the storage, 2.0% of what NEW read: a cache served NEW, so its figures are the cache's, not the storage's"
	if !slices.Contains(r.Warnings, want) {
		t.Errorf("warnings %q, want %q", r.Warnings, want)
	}
	if r, _ := Compare(at(10, true), at(96, true), "", "", Options{}); len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "a cache served OLD") {
		t.Errorf("warnings %q, want the cache named on OLD", r.Warnings)
	}
	for _, c := range []struct{ old, new *report.Result }{
		{at(100, true), at(60, true)},
		{at(3, true), at(40, true)},
		{at(100, true), at(0, false)},
	} {
		if r, _ := Compare(c.old, c.new, "", "", Options{}); len(r.Warnings) != 0 {
			t.Errorf("warnings %q", r.Warnings)
		}
	}
}

// TestCompareShortPhase: a change told from noise in a phase that took
// under a second a run is warned of, on either side; the same change of a
// longer phase, or no change, is not.
func TestCompareShortPhase(t *testing.T) {
	timed := func(secs float64, values ...float64) *report.Result {
		r := repeated(values...)
		r.Phases[0].Seconds = secs
		return r
	}
	ten := 10.0
	slow, fast := []float64{100, 102, 98, 101, 99}, []float64{50, 51, 52, 49, 50}
	for _, c := range []struct {
		name       string
		old, new   *report.Result
		warn       bool
		oldS, newS string
	}{
		{"short on both", timed(0.024, slow...), timed(0.057, fast...), true, "24ms", "57ms"},
		{"short in NEW only", timed(3, slow...), timed(0.4, fast...), true, "3s", "400ms"},
		{"long", timed(3, slow...), timed(2.5, fast...), false, "", ""},
		{"short, no change", timed(0.02, slow...), timed(0.02, 99, 103, 100, 97, 101), false, "", ""},
		{"time unknown", timed(0, slow...), timed(0.02, fast...), false, "", ""},
		{"under a millisecond", timed(0.0004, slow...), timed(0.000321, fast...), true, "400µs", "321µs"},
	} {
		r, err := Compare(c.old, c.new, "", "", Options{Threshold: &ten})
		if err != nil {
			t.Fatal(err)
		}
		var got string
		for _, w := range r.Warnings {
			if strings.Contains(w, "measures a moment of the storage") {
				got = w
			}
		}
		if (got != "") != c.warn || c.warn && !strings.HasPrefix(got, "write took "+c.oldS+" (OLD) and "+c.newS+" (NEW) a run:") {
			t.Errorf("%s: warnings %q", c.name, r.Warnings)
		}
	}
	// Two short phases, one run a side, changed beyond the threshold: one
	// warning names both.
	two := func(v float64) *report.Result {
		r := res(phase("write", v, "MiB/s", 1000, 0), phase("stat", v, "files/s", 1000, 0))
		r.Phases[0].Seconds, r.Phases[1].Seconds = 0.02, 0.005
		return r
	}
	r, _ := Compare(two(100), two(50), "", "", Options{Threshold: &ten})
	var short []string
	for _, w := range r.Warnings {
		if strings.Contains(w, "measures a moment of the storage") {
			short = append(short, w)
		}
	}
	if len(short) != 1 || !strings.HasPrefix(short[0], "write took 20ms (OLD) and 20ms (NEW) a run, stat 5ms and 5ms: a phase under 1s") {
		t.Errorf("two short phases: warnings %q", r.Warnings)
	}
}
