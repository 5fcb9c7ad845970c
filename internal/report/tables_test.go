package report

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/olekukonko/tablewriter/pkg/twwidth"

	"github.com/fsbench/fsbench/internal/metrics"
)

// histPhase is a measured phase of n operations of bs bytes in seconds,
// whose latencies are lats (cycled), with its histogram and summary.
func histPhase(t *testing.T, name string, bs, n int64, seconds float64, lats ...time.Duration) PhaseResult {
	t.Helper()
	h := metrics.NewHistogram()
	for i := int64(0); i < n; i++ {
		h.Record(lats[int(i)%len(lats)])
	}
	p := PhaseResult{Name: name, Title: name, Ops: n, Items: n, Bytes: n * bs, Seconds: seconds, LatencyOf: "op"}
	p.SetRates()
	p.Value = p.ThroughputValue()
	p.Cost = Measure{Value: p.Latency.Mean / 1e3, Unit: UnitMsPerOp}
	if err := SetLatency(&p, h); err != nil {
		t.Fatal(err)
	}
	p.Cost = Measure{Value: p.Latency.Mean / 1e3, Unit: UnitMsPerOp}
	return p
}

// tableRow is the line of the table that holds title.
func tableRow(t *testing.T, table, title string) []string {
	t.Helper()
	re := regexp.MustCompile(`^\|\s+` + regexp.QuoteMeta(title) + `\s+\|`)
	for _, l := range strings.Split(table, "\n") {
		if re.MatchString(l) {
			cells := strings.Split(l, "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells[1 : len(cells)-1]
		}
	}
	t.Fatalf("no row %q in\n%s", title, table)
	return nil
}

func tableHeader(table string) []string {
	for _, l := range strings.Split(table, "\n") {
		if strings.HasPrefix(l, "|") && strings.Contains(l, " ITEM ") {
			cells := strings.Split(l, "|")
			for i := range cells {
				cells[i] = strings.TrimSpace(cells[i])
			}
			return cells[1 : len(cells)-1]
		}
	}
	return nil
}

// A phase of 4 KiB transfers shows its IOPS beside its MiB/s; a phase of
// 1 MiB transfers leaves the cell empty; a table of big transfers only
// has no IOPS column at all.
func TestIOPSColumn(t *testing.T) {
	small := histPhase(t, "randread", 4<<10, 25600, 1, 30*time.Microsecond)
	big := histPhase(t, "seqread", 1<<20, 100, 1, 8*time.Millisecond)
	for _, verbose := range []bool{false, true} {
		var b bytes.Buffer
		if err := WriteTable(&b, &Result{Phases: []PhaseResult{small, big}}, Options{Verbose: verbose}); err != nil {
			t.Fatal(err)
		}
		header := tableHeader(b.String())
		col := -1
		for i, h := range header {
			if h == "IOPS" {
				col = i
			}
		}
		if col < 0 || header[col-1] != "VALUE" {
			t.Fatalf("no IOPS column beside VALUE: %q\n%s", header, b.String())
		}
		if got := tableRow(t, b.String(), "randread")[col]; got != "25600" {
			t.Errorf("4 KiB phase: IOPS %q, want 25600\n%s", got, b.String())
		}
		if got := tableRow(t, b.String(), "seqread")[col]; got != "" {
			t.Errorf("1 MiB phase: IOPS %q, want none\n%s", got, b.String())
		}
	}
	var b bytes.Buffer
	if err := WriteTable(&b, &Result{Phases: []PhaseResult{big}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tableHeader(b.String())[2], "IOPS") || strings.Contains(b.String(), "IOPS") {
		t.Errorf("a table of 1 MiB transfers has an IOPS column:\n%s", b.String())
	}
	// A rate of files is not a bandwidth: no IOPS beside it.
	files := small
	files.Value = Measure{Value: files.ItemsPerSec, Unit: UnitFilesPerSec}
	if _, ok := iops(&files); ok {
		t.Error("IOPS offered for a phase in files/s")
	}
}

// MEAN is the mean latency, between the phase's minimum and maximum.
func TestMeanColumn(t *testing.T) {
	p := histPhase(t, "randwrite", 4<<10, 100, 1, 100*time.Microsecond, 300*time.Microsecond)
	var b bytes.Buffer
	if err := WriteTable(&b, &Result{Phases: []PhaseResult{p}}, Options{}); err != nil {
		t.Fatal(err)
	}
	header, row := tableHeader(b.String()), tableRow(t, b.String(), "randwrite")
	for i, h := range header {
		if h == "MEAN" && row[i] != "200us" {
			t.Errorf("MEAN %q, want 200us\n%s", row[i], b.String())
		}
	}
	if !strings.Contains(strings.Join(header, ","), "COST,MEAN,P50,P99,MAX") {
		t.Errorf("header %q", header)
	}
}

// The fio-style summary is fio's three blocks of lines, from the phase's
// histogram: checked against a golden file and against the histogram.
func TestFioSummary(t *testing.T) {
	var lats []time.Duration
	for i := 1; i <= 1000; i++ {
		lats = append(lats, time.Duration(20+i/10)*time.Microsecond)
	}
	lats[999] = 3 * time.Millisecond
	p := histPhase(t, "randread", 4<<10, 60000, 60.001, lats...)
	var b bytes.Buffer
	if err := FioSummary(&b, "read", &p); err != nil {
		t.Fatal(err)
	}
	golden(t, "fio-summary.golden", b.Bytes())
	out := b.String()
	for _, want := range []string{
		"  read: IOPS=1000, BW=4000KiB/s (4096kB/s)(234MiB/60001msec)\n",
		"    clat (usec): min=20, max=3015, avg=72.48, stdev=97.20\n",
		"    clat percentiles (usec):\n",
		"     |  1.00th=[   21],  5.00th=[   25], 10.00th=[   30], 20.00th=[   40],\n",
		"| 70.00th=[   90], 80.00th=[  100], 90.00th=[  110], 95.00th=[  115],\n",
		"     | 99.99th=[ 3015]\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "th=["); n != len(FioPercentiles) {
		t.Errorf("%d percentiles, want %d", n, len(FioPercentiles))
	}
	// Under -v, every measured phase gets the summary under the table.
	b.Reset()
	if err := WriteTable(&b, &Result{Phases: []PhaseResult{p}}, Options{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "  randread: IOPS=1000, BW=4000KiB/s") || !strings.Contains(b.String(), "99.99th=[") {
		t.Errorf("no fio-style summary under the verbose table:\n%s", b.String())
	}
	b.Reset()
	if err := WriteTable(&b, &Result{Phases: []PhaseResult{p}}, Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "IOPS=") {
		t.Errorf("fio-style summary without -v:\n%s", b.String())
	}
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

// checkWidth fails for every line of out wider than MaxColumns, counted
// in display columns without colours.
func checkWidth(t *testing.T, name, out string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if !strings.HasPrefix(l, "+") && !strings.HasPrefix(l, "|") {
			continue // a table's lines only
		}
		if w := twwidth.Width(ansi.ReplaceAllString(l, "")); w > MaxColumns {
			t.Errorf("%s: a line of %d columns:\n%s\n%s", name, w, l, out)
			return
		}
	}
}

// wide is a result whose texts made tables of 150 to 170 columns: a
// long check reason, io500's and a mixed workload's LATENCY OF, many
// hosts and endpoints, in colour and not.
func wide(t *testing.T) *Result {
	r := sample()
	r.Checks = []Check{
		{Category: "basic", Name: "get partial object", Status: CheckWarning, Reason: strings.Repeat("the store answered a range past the end of the object with 416 where S3 returns the object's tail ", 3)},
		{Category: "sync", Name: "a check whose name is itself rather long for its column", Status: CheckFailed, Reason: "complete: 400 Bad Request"},
	}
	mixed := histPhase(t, "mixed", 4<<10, 1000, 1, 50*time.Microsecond)
	mixed.Title = "get 45%, put 15%, stat 30%, delete 10%"
	mixed.LatencyOf = "one operation of the mix: 45% get of 4 KiB, 15% put of 4 KiB, 30% stat, 10% delete"
	mixed.Hosts = []HostPhase{{Address: "client-number-one.example.internal:7781", Ops: 500}, {Address: "10.0.0.2:7781", Ops: 500}}
	mixed.Stonewall = &Stonewall{Seconds: 0.9, Ops: 900}
	mixed.Endpoints = []EndpointRow{{Endpoint: "http://storage-node-1.example.internal:9000", Requests: 500, Errors: 3}}
	md := histPhase(t, "mdtest-hard-write", 3901, 10000, 2, 80*time.Microsecond)
	md.LatencyOf = "create, write 3901 bytes and close a file in one shared directory (mdtest -w 3901 -F)"
	md.Value = Measure{Value: 5, Unit: UnitKIOPS}
	r.Phases = append(r.Phases, mixed, md)
	r.Runs = []Run{{Index: 1}, {Index: 2}}
	for i := range r.Phases {
		r.Phases[i].Spread = &Spread{Runs: 2, Min: 1, Max: 2}
	}
	return r
}

// Every table a command writes fits 120 columns: the goldens' results and
// one made of the texts that once reached 170 columns, plain, verbose and
// in colour.
func TestTablesFit120Columns(t *testing.T) {
	results := map[string]*Result{"bench": sample(), "wide": wide(t)}
	ck := &Result{Checks: []Check{{Category: "basic", Name: "x", Status: CheckWarning, Reason: strings.Repeat("why ", 60)}}}
	results["checks"] = ck
	for name, r := range results {
		for _, o := range []Options{{}, {Verbose: true}, {Color: true}, {Color: true, Verbose: true}} {
			var b bytes.Buffer
			if err := WriteTable(&b, r, o); err != nil {
				t.Fatal(err)
			}
			checkWidth(t, name, b.String())
			if name == "wide" && (!strings.Contains(b.String(), "(mdtest") || !strings.Contains(b.String(), "-F)")) {
				t.Errorf("the long LATENCY OF was cut rather than wrapped:\n%s", b.String())
			}
		}
	}
}

// A cell wider than its column wraps at spaces, breaking a word only when
// it alone is wider; a painted cell is painted line by line.
func TestWrapCell(t *testing.T) {
	for _, c := range []struct {
		in    string
		width int
		want  string
	}{
		{"128 KiB file (open to close)", 16, "128 KiB file\n(open to close)"},
		{"short", 16, "short"},
		{"a-very-long-word-indeed", 10, "a-very-lon\ng-word-ind\need"},
		{ansiRed + "FAIL: one two three" + ansiReset, 10, ansiRed + "FAIL: one" + ansiReset + "\n" + ansiRed + "two three" + ansiReset},
	} {
		if got := wrapCell(c.in, c.width); got != c.want {
			t.Errorf("wrapCell(%q, %d) = %q, want %q", c.in, c.width, got, c.want)
		}
	}
}

// A table that would pass 120 columns leaves MEAN out only where every
// COST is already a mean latency; with a COST per big file it keeps it.
func TestMeanLeftOutOnlyWhereCostIsIt(t *testing.T) {
	p := histPhase(t, "mixed", 4<<10, 1000, 1, 50*time.Microsecond)
	p.Title = "mixed operations of a long title"
	p.LatencyOf = "one operation of the mix: 45% get, 15% put, 30% stat, 10% delete, of 4 KiB objects"
	p.TTFB = &p.Latency
	r := &Result{Parameters: Params{{Key: "workload", Value: "mixed"}}, Phases: []PhaseResult{p}}
	var b bytes.Buffer
	if err := WriteTable(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(tableHeader(b.String()), ","); strings.Contains(h, "MEAN") || !strings.Contains(h, "COST,P50") {
		t.Errorf("a wide table of per-operation costs keeps MEAN: %s\n%s", h, b.String())
	}
	checkWidth(t, "mixed", b.String())
	big := p
	big.Items, big.Cost = 1, Measure{Value: p.PerUnit(1), Unit: UnitSecondsPerFile}
	r.Phases = append(r.Phases, big)
	b.Reset()
	if err := WriteTable(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(tableHeader(b.String()), ","); !strings.Contains(h, "COST,MEAN,P50") {
		t.Errorf("a table with a cost per big file lost MEAN: %s\n%s", h, b.String())
	}
	checkWidth(t, "mixed and big", b.String())
}
