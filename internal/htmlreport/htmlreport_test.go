package htmlreport

import (
	"bytes"
	"encoding/json"
	"flag"
	"html/template"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/fsbench/fsbench/internal/compare"
	"github.com/fsbench/fsbench/internal/report"
)

var update = flag.Bool("update", false, "rewrite the fixtures and golden files under testdata/report")

// pageCase is one page made from fixtures, with what it must hold.
type pageCase struct {
	name   string
	files  []string
	charts int // <svg class="chart"> elements
	tables int
	want   []string // text the page must contain
}

var pageCases = []pageCase{
	// bench: 2 throughput units, 5 latency curves.
	{"bench", []string{"bench.json"}, 7, 9, []string{"FUSE operation", "write-big>=200MiB/s", "JuiceFS:myjfs"}},
	// objbench: MiB/s and objects/s bars, 4 latency charts (chmod is not
	// supported), checks, problems.
	{"objbench", []string{"objbench.json"}, 6, 8, []string{"list objects", "listed 3 objects, want 4", "time to first byte", "connection reset by peer"}},
	// job: ops/s and MiB/s bars, 2 latency charts, 2 phases x 2 series charts.
	{"job", []string{"job.json"}, 8, 6, []string{"service time", "Over time", "Phases: seqread (1 MiB read, 6.0 s); randread-paced (4 KiB read, 6.0 s)"}},
	// hosts: bars, latency, per-host bars.
	{"hosts", []string{"hosts.json"}, 3, 3, []string{"node-b", "Start skew", "Stonewall"}},
	{"v1", []string{"v1.json"}, 7, 7, []string{"version-1 result", "summary"}},
	// three bench results: compared with the first.
	{"three", []string{"bench.json", "bench-b.json", "v1.json"}, 7, 13, []string{"Comparison", "regression", "improvement"}},
	// bench and objbench: shown, not compared.
	{"mixed", []string{"bench.json", "objbench.json"}, 12, 16, []string{"results of different commands"}},
}

func loadFixtures(t *testing.T, files []string) ([]*report.Result, []string) {
	t.Helper()
	var rs []*report.Result
	var names []string
	for _, f := range files {
		fh, err := os.Open(filepath.Join(fixtureDir(), f))
		if err != nil {
			t.Fatal(err)
		}
		r, err := report.ReadJSON(fh)
		fh.Close()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		rs = append(rs, r)
		names = append(names, strings.TrimSuffix(f, ".json"))
	}
	return rs, names
}

func render(t *testing.T, files []string) []byte {
	t.Helper()
	rs, names := loadFixtures(t, files)
	var b bytes.Buffer
	if err := WriteOptions(&b, rs, names, Options{Threshold: DefaultThreshold, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestPages renders each case, checks its structure and compares its
// outline (headings, text, tables, charts) with the golden file.
func TestPages(t *testing.T) {
	for _, c := range pageCases {
		t.Run(c.name, func(t *testing.T) {
			page := render(t, c.files)
			doc, err := html.Parse(bytes.NewReader(page))
			if err != nil {
				t.Fatal(err)
			}
			checkSelfContained(t, doc)
			if n := countElems(doc, isChart); n != c.charts {
				t.Errorf("%d charts, want %d", n, c.charts)
			}
			if n := countElems(doc, func(n *html.Node) bool { return n.DataAtom == atom.Table }); n != c.tables {
				t.Errorf("%d tables, want %d", n, c.tables)
			}
			out := outline(doc)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("page lacks %q", w)
				}
			}
			checkGolden(t, filepath.Join(fixtureDir(), "golden", c.name+".txt"), out)
		})
	}
}

func checkGolden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("outline differs from %s (run with -update to accept):\n%s", path, firstDiff(got, string(want)))
	}
}

func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return "line " + strconv.Itoa(i+1) + ":\n got: " + a + "\nwant: " + b
		}
	}
	return ""
}

func isChart(n *html.Node) bool {
	return n.Type == html.ElementNode && n.Data == "svg" && n.Namespace == "svg" && attr(n, "class") == "chart"
}

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}

func walk(n *html.Node, f func(*html.Node)) {
	f(n)
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		walk(c, f)
	}
}

func countElems(doc *html.Node, match func(*html.Node) bool) int {
	n := 0
	walk(doc, func(x *html.Node) {
		if x.Type == html.ElementNode && match(x) {
			n++
		}
	})
	return n
}

// checkSelfContained fails on anything that would make the page load
// something: scripts, linked style sheets, images, frames, objects, any
// URL in an attribute but a link within the page, url() or @import in CSS.
func checkSelfContained(t *testing.T, doc *html.Node) {
	t.Helper()
	banned := map[string]bool{"script": true, "link": true, "img": true, "iframe": true, "object": true,
		"embed": true, "image": true, "use": true, "video": true, "audio": true, "source": true, "base": true}
	walk(doc, func(n *html.Node) {
		if n.Type != html.ElementNode {
			return
		}
		if banned[n.Data] {
			t.Errorf("page has a <%s> element", n.Data)
		}
		for _, a := range n.Attr {
			k := strings.ToLower(a.Key)
			if (k == "href" || k == "src" || k == "srcset" || k == "action" || k == "poster" || k == "data") && !strings.HasPrefix(a.Val, "#") {
				t.Errorf("<%s %s=%q> refers outside the page", n.Data, a.Key, a.Val)
			}
			if strings.HasPrefix(k, "on") {
				t.Errorf("<%s> has an event handler %s", n.Data, a.Key)
			}
			if strings.Contains(strings.ToLower(a.Val), "url(") {
				t.Errorf("<%s %s> uses url()", n.Data, a.Key)
			}
		}
		if n.Data == "style" && n.FirstChild != nil {
			css := strings.ToLower(n.FirstChild.Data)
			if strings.Contains(css, "url(") || strings.Contains(css, "@import") || strings.Contains(css, "@font-face") {
				t.Error("the style sheet loads something")
			}
		}
		if n.Data == "head" && findFirst(n, "meta") == nil {
			t.Error("no <meta> in <head>")
		}
	})
	if findFirst(doc, "body") == nil || findFirst(doc, "title") == nil {
		t.Error("page has no body or no title")
	}
}

func findFirst(n *html.Node, tag string) *html.Node {
	var found *html.Node
	walk(n, func(x *html.Node) {
		if found == nil && x.Type == html.ElementNode && x.Data == tag {
			found = x
		}
	})
	return found
}

// outline renders the page as text: headings, paragraphs, definition
// lists, table rows with cells separated by " | ", and one line per chart.
func outline(doc *html.Node) string {
	var b strings.Builder
	var visit func(n *html.Node)
	visit = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch {
			case isChart(n):
				b.WriteString("[chart: " + attr(n, "aria-label") + "]\n")
				return
			case n.DataAtom == atom.Style, n.DataAtom == atom.Head:
				return
			case n.DataAtom == atom.H1, n.DataAtom == atom.H2, n.DataAtom == atom.H3:
				b.WriteString(strings.Repeat("#", int(n.Data[1]-'0')) + " " + nodeText(n) + "\n")
				return
			case n.DataAtom == atom.P, n.DataAtom == atom.Footer, n.DataAtom == atom.Nav:
				b.WriteString(nodeText(n) + "\n")
				return
			case n.DataAtom == atom.Dt:
				b.WriteString(nodeText(n) + ": ")
				return
			case n.DataAtom == atom.Dd:
				b.WriteString(nodeText(n) + "\n")
				return
			case n.DataAtom == atom.Tr:
				var cells []string
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					if c.Type == html.ElementNode {
						cell := nodeText(c)
						if cl := strings.TrimSpace(strings.ReplaceAll(attr(c, "class"), "num", "")); markedClass[cl] {
							cell += " {" + cl + "}"
						}
						cells = append(cells, cell)
					}
				}
				b.WriteString("| " + strings.Join(cells, " | ") + "\n")
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			visit(c)
		}
	}
	visit(doc)
	return b.String()
}

// markedClass are the classes that colour a cell, shown in an outline.
var markedClass = map[string]bool{"bad": true, "good": true, "warn": true, "worse": true, "better": true, "nochange": true, "toofew": true}

// nodeText is the whitespace-normalised text of n.
func nodeText(n *html.Node) string {
	var b strings.Builder
	walk(n, func(x *html.Node) {
		if x.Type == html.TextNode {
			b.WriteString(x.Data)
			b.WriteByte(' ')
		}
	})
	return strings.Join(strings.Fields(b.String()), " ")
}

// TestSizeThreeResults keeps a page of three results under 1 MB.
func TestSizeThreeResults(t *testing.T) {
	page := render(t, []string{"bench.json", "bench-b.json", "objbench.json"})
	if len(page) >= 1<<20 {
		t.Errorf("page of three results is %d bytes, want < 1 MiB", len(page))
	}
	if len(page) < 20<<10 {
		t.Errorf("page of three results is only %d bytes", len(page))
	}
}

// TestNoSecret renders a result whose command line and URL hold
// credentials (as a careless producer could write them): none may show.
func TestNoSecret(t *testing.T) {
	page := string(render(t, []string{"objbench.json", "bench.json"}))
	for _, s := range []string{secretPassword, secretKey, secretToken} {
		if strings.Contains(page, s) {
			t.Errorf("page shows the secret %q", s)
		}
	}
	for _, w := range []string{"--secret-key **redacted**", "--session-token=**redacted**", "http://**redacted**@127.0.0.1:9000/bench"} {
		if !strings.Contains(page, template.HTMLEscapeString(w)) {
			t.Errorf("page lacks %q", w)
		}
	}
}

func TestRedactCommandLine(t *testing.T) {
	tests := []struct{ in, want string }{
		{"fsbench bench /mnt/jfs -p 4", "fsbench bench /mnt/jfs -p 4"},
		{"fsbench objbench --secret-key abc --access-key AK s3://b", "fsbench objbench --secret-key **redacted** --access-key **redacted** s3://b"},
		{"fsbench objbench --secret-key=abc x", "fsbench objbench --secret-key=**redacted** x"},
		{"fsbench objbench https://ak:sk@host/b", "fsbench objbench https://**redacted**@host/b"},
		{"fsbench objbench --storage nfs user:pw@10.0.0.5:/export", "fsbench objbench --storage nfs **redacted**@10.0.0.5:/export"},
		{"fsbench objbench --secret-key", "fsbench objbench --secret-key"},
		{"fsbench stats /mnt --metrics=http://h:9567/metrics?token=t0k", "fsbench stats /mnt --metrics=http://h:9567/metrics?token=**redacted**"},
	}
	for _, tt := range tests {
		if got := RedactCommandLine(tt.in); got != tt.want {
			t.Errorf("RedactCommandLine(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := redactOptions("rw,username=bob,password=pw,credentials=/etc/c"); got != "rw,username=bob,password=**redacted**,credentials=/etc/c" {
		t.Errorf("redactOptions: %q", got)
	}
}

func TestWriteBadInput(t *testing.T) {
	var b bytes.Buffer
	if err := Write(&b, nil, nil); err == nil {
		t.Error("no results: no error")
	}
	if err := Write(&b, []*report.Result{nil}, nil); err == nil {
		t.Error("nil result: no error")
	}
	if b.Len() != 0 {
		t.Errorf("wrote %d bytes on bad input", b.Len())
	}
}

// TestBrokenHistogram: a histogram that does not decode is said on the
// page and the curve drawn from the summary, not an error.
func TestBrokenHistogram(t *testing.T) {
	rs, _ := loadFixtures(t, []string{"bench.json"})
	rs[0].Phases[0].Histogram = "bm90IGEgaGlzdG9ncmFt"
	var b bytes.Buffer
	if err := Write(&b, rs, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "could not be read") {
		t.Error("page does not say the histogram could not be read")
	}
}

// TestExpectationVerdicts: an expectation too short to judge is shown as
// such with its reason, and not counted as met.
func TestExpectationVerdicts(t *testing.T) {
	rs, _ := loadFixtures(t, []string{"bench.json"})
	rs[0].Expectations = []report.Expectation{
		{Expr: "write-big>=1MiB/s", Metric: "write-big", Op: ">=", Want: 1, Unit: "MiB/s", Measured: 90, Pass: true, Verdict: report.VerdictPass},
		{Expr: "stat.p99<5ms", Metric: "stat.p99", Op: "<", Want: 5, Unit: "ms", Measured: 1, Pass: true, Verdict: report.VerdictTooShort,
			Reason: "80 latency samples, p99 needs 1000: a longer run or --repeat"},
	}
	var b bytes.Buffer
	if err := Write(&b, rs, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"too short to judge: 80 latency samples, p99 needs 1000: a longer run or --repeat",
		"1 of 2 expectations met, 1 too short to judge."} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
}

// TestNames: missing names are made from the command and time, and equal
// names are told apart.
func TestNames(t *testing.T) {
	rs, _ := loadFixtures(t, []string{"bench.json", "bench.json", "bench.json"})
	got := runNames(rs, []string{"x", "x"})
	if got[0] != "x" || got[1] != "x (2)" || got[2] != "bench 2026-11-20 09:00" {
		t.Errorf("runNames = %q", got)
	}
}

func TestTicks(t *testing.T) {
	var labels []string
	for _, tk := range (niceTicks{}).Ticks(0, 7783) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0 2000 4000 6000" {
		t.Errorf("ticks 0..7783: %s", got)
	}
	labels = nil
	for _, tk := range (niceTicks{}).Ticks(0, 1.1) {
		labels = append(labels, tk.Label)
	}
	if got := strings.Join(labels, " "); got != "0.00 0.25 0.50 0.75 1.00" {
		t.Errorf("ticks 0..1.1: %s", got)
	}
	labels = nil
	for _, tk := range (percentileTicks{}).Ticks(1, 20000) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got := strings.Join(labels, " "); got != "0% 90% 99% 99.9% 99.99%" {
		t.Errorf("percentile ticks: %s", got)
	}
}

// TestRepeatPage renders two repeated results compared with statistics:
// the verdict is the first thing on the page, each median carries its
// runs and interval, and the comparison marks changes that cannot be told
// from noise ("~") and percentiles with too few samples apart from
// regressions.
func TestRepeatPage(t *testing.T) {
	page := render(t, []string{"repeat.json", "repeat-b.json"})
	doc, err := html.Parse(bytes.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	checkSelfContained(t, doc)
	out := outline(doc)
	verdictAt := strings.Index(out, "repeat-b against repeat: 3 regressions beyond 10%: write-big -21.0%, write-big.p50 +27.2%, write-big.p90 +24.4%.")
	if verdictAt < 0 || verdictAt > strings.Index(out, "## Runs") {
		t.Errorf("the verdict is not before the runs (at %d)", verdictAt)
	}
	if p := strings.Index(out, "Parameters: block_size: 1 MiB, big_file_size: 512 MiB, threads: 4\n"); p < 0 || p > verdictAt {
		t.Errorf("the shared parameters are not in the page's header (at %d)", p)
	}
	if strings.Index(out, "## Comparison") > strings.Index(out, "## Throughput") {
		t.Error("the comparison comes after the throughput")
	}
	for _, w := range []string{
		"6 runs, CI 909.06–\u2060935.27", // a median's interval, under the median
		"| write-small | 413.3 files/s | 411.5 files/s | ~ -0.4% no significant change p=0.59, 0.89 adjusted for 14 figures {nochange}",
		"| write-big | 915.35 MiB/s | 723.12 MiB/s | -21.0% regression {bad}",
		// p=0.02 alone, not once adjusted for the 14 figures tested
		"| read-big | 1295.21 MiB/s | 1240.15 MiB/s | ~ -4.2% no significant change p=0.02, 0.05 adjusted for 14 figures {nochange}",
		"| write-small.p99 | 31.3ms | 36.4ms | +16.3% too few samples p99 needs 1000 samples, has 600 {toofew}",
		"11 changes that cannot be told from noise (~).",
		"6 against 6 runs: a change is called when significant at 5%.",
		"percentiles with too few samples to judge.",
		"Runs: 6 (--repeat)",
		"[chart: Throughput in MiB/s]",
	} {
		if !strings.Contains(out, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	if !strings.Contains(string(page), "latency (ms, log scale)") {
		t.Error("the latency axis is not logarithmic")
	}
	checkGolden(t, filepath.Join(fixtureDir(), "golden", "repeat.txt"), out)
}

// TestJudge: each status has its own label and class, and "~" only where a
// figure moved but compare found no change beyond noise.
func TestJudge(t *testing.T) {
	in := &input{names: []string{"a", "b"}, opts: Options{Threshold: 10}}
	pct := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		it           compare.Item
		change       string
		label, class string
	}{
		{compare.Item{Status: compare.Regression, ChangePct: pct(-20)}, "-20.0%", "regression", "bad"},
		{compare.Item{Status: compare.Worse, ChangePct: pct(-5)}, "-5.0%", "worse, within threshold", "worse"},
		// beyond 10% by its medians, its interval reaching within
		{compare.Item{Status: compare.Worse, ChangePct: pct(-14)}, "-14.0%", "worse, not surely beyond threshold", "worse"},
		{compare.Item{Status: compare.Better, ChangePct: pct(25)}, "+25.0%", "improvement", "good"},
		{compare.Item{Status: compare.Better, ChangePct: pct(5)}, "+5.0%", "better, within threshold", "better"},
		{compare.Item{Status: compare.Same, Old: pct(100), New: pct(96.5), ChangePct: pct(-3.5)}, "~ -3.5%", "no significant change", "nochange"},
		{compare.Item{Status: compare.Same, Old: pct(100), New: pct(100), ChangePct: pct(0)}, "+0.0%", "same", "muted"},
		{compare.Item{Status: compare.TooFew, ChangePct: pct(40)}, "+40.0%", "too few samples", "toofew"},
		{compare.Item{Status: compare.Missing}, "-", "only in a", "muted"},
	} {
		label, class := in.judge(c.it)
		if got := changeText(c.it); got != c.change || label != c.label || class != c.class {
			t.Errorf("%s %v: %q %q %q, want %q %q %q", c.it.Status, *pctOr(c.it.ChangePct), got, label, class, c.change, c.label, c.class)
		}
	}
}

func pctOr(p *float64) *float64 {
	if p == nil {
		return new(float64)
	}
	return p
}

// TestParamText: a parameter without a value is left out, not shown as
// "storage_class: ".
func TestParamText(t *testing.T) {
	ps := report.Params{{Key: "storage", Value: "minio"}, {Key: "storage_class", Value: ""}, {Key: "checksum", Value: nil},
		{Key: "block_size", Label: "BlockSize", Value: json.Number("4194304")}}
	if got := paramText(ps); got != "storage: minio, BlockSize: 4 MiB" {
		t.Errorf("paramText = %q", got)
	}
}

// TestRunProblems: a run of a repeated benchmark that failed or was
// interrupted is named among the problems.
func TestRunProblems(t *testing.T) {
	rs, names := loadFixtures(t, []string{"repeat.json"})
	rs[0].Runs[2].Error = "write-big: no space left on device"
	rs[0].Runs[5].Interrupted = true
	var b bytes.Buffer
	if err := Write(&b, rs, names); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	out := outline(doc)
	for _, w := range []string{"| error {bad} | run 3 of 6 | write-big: no space left on device", "| interrupted {warn} | run 6 of 6 |"} {
		if !strings.Contains(out, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}

// TestVerdictWarnings: a parameter that differs between the results is
// said with the verdict at the top of the page, before any figure.
func TestVerdictWarnings(t *testing.T) {
	rs, names := loadFixtures(t, []string{"bench.json", "bench-b.json"})
	rs[1].Parameters = append(rs[1].Parameters[:2:2], report.Param{Key: "threads", Value: json.Number("8")})
	var b bytes.Buffer
	if err := Write(&b, rs, names); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(&b)
	if err != nil {
		t.Fatal(err)
	}
	out := outline(doc)
	if strings.Contains(out[:strings.Index(out, "## Runs")], "Parameters:") {
		t.Error("the page's header gives parameters that differ between the results as shared")
	}
	at := strings.Index(out, "Warning: parameter threads differs: 4 (OLD) vs 8 (NEW).")
	if at < 0 || at > strings.Index(out, "## Runs") {
		t.Errorf("the differing parameter is not said before the runs (at %d):\n%s", at, out[:min(len(out), 800)])
	}
}
