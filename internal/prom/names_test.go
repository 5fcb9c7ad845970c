package prom

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// names are the metric names fsbench exports.
func names(t *testing.T) map[string]bool {
	t.Helper()
	ch := make(chan *prometheus.Desc, 64)
	NewBoard("h").Describe(ch)
	for _, c := range NewProbe("h").Collectors() {
		c.Describe(ch)
	}
	close(ch)
	fq := regexp.MustCompile(`fqName: "([^"]+)"`)
	out := map[string]bool{}
	for d := range ch {
		m := fq.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("desc %s", d)
		}
		out[m[1]] = true
	}
	return out
}

var mentioned = regexp.MustCompile(`fsbench_[a-z_]+[a-z]`)

// known reports whether a name in a query or a document is an exported
// metric (a histogram's series included).
func known(all map[string]bool, n string) bool {
	for _, suf := range []string{"", "_bucket", "_sum", "_count"} {
		if all[strings.TrimSuffix(n, suf)] && strings.HasSuffix(n, suf) {
			return true
		}
	}
	return false
}

// TestMetricsDocumented keeps docs/metrics.md and the Grafana dashboard in
// step with what is exported: every metric documented, nothing documented
// or charted that does not exist.
func TestMetricsDocumented(t *testing.T) {
	all := names(t)
	root := testenv.RepoRoot()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	for n := range all {
		if !strings.Contains(string(doc), "`"+n+"`") {
			t.Errorf("docs/metrics.md does not document %s", n)
		}
		if !strings.HasPrefix(n, "fsbench_") {
			t.Errorf("%s lacks the fsbench_ prefix", n)
		}
	}
	for _, n := range mentioned.FindAllString(string(doc), -1) {
		if !known(all, n) && n != "fsbench_probe" {
			t.Errorf("docs/metrics.md names %s, which is not exported", n)
		}
	}
	raw, err := os.ReadFile(filepath.Join(root, "deploy", "grafana", "fsbench.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Type    string
			Title   string
			Targets []struct{ Expr, LegendFormat string }
		}
	}
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("fsbench.json: %v", err)
	}
	charted := map[string]bool{}
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		if len(p.Targets) == 0 {
			t.Errorf("panel %q has no query", p.Title)
		}
		for _, tg := range p.Targets {
			if mentioned.MatchString(tg.Expr) && (!strings.Contains(tg.LegendFormat, "{{host}}") || byWithout(tg.Expr, "host")) {
				t.Errorf("panel %q does not split by host: %s, legend %q", p.Title, tg.Expr, tg.LegendFormat)
			}
			for _, n := range mentioned.FindAllString(tg.Expr, -1) {
				if !known(all, n) {
					t.Errorf("panel %q queries %s, which is not exported", p.Title, n)
				}
				charted[strings.TrimSuffix(n, "_bucket")] = true
			}
		}
	}
	for _, n := range []string{"fsbench_operations_total", "fsbench_bytes_total", "fsbench_operation_duration_seconds", "fsbench_probe_rounds_total"} {
		if !charted[n] {
			t.Errorf("the dashboard does not chart %s", n)
		}
	}
}

// TestMetricsTable compares the table of docs/metrics.md with what is
// served: every metric with its type and labels, nothing more or less.
func TestMetricsTable(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "docs", "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("(?m)^\\| `(fsbench_[a-z_]+)` \\| ([a-z]+) \\| ([^|]*) \\|")
	documented := map[string]string{}
	for _, m := range row.FindAllStringSubmatch(string(doc), -1) {
		labels := strings.Fields(strings.NewReplacer("`", "", ",", " ").Replace(m[3]))
		slices.Sort(labels)
		documented[m[1]] = m[2] + " " + strings.Join(labels, ",")
	}
	served := servedMetrics(t)
	for name, want := range documented {
		if got, ok := served[name]; !ok {
			t.Errorf("docs/metrics.md documents %s, which is not served", name)
		} else if got != want {
			t.Errorf("%s: served as %q, documented as %q", name, got, want)
		}
	}
	for name, got := range served {
		if _, ok := documented[name]; !ok {
			t.Errorf("%s (%s) is served but not in docs/metrics.md's table", name, got)
		}
	}
}

// servedMetrics are the type and sorted label names of every fsbench
// metric a board and a probe serve once each has something to show.
func servedMetrics(t *testing.T) map[string]string {
	t.Helper()
	b := NewBoard("h1")
	ctx := engine.WithWatcher(context.Background(), b)
	if _, err := engine.New(1).Run(ctx, phase("write", 2, 10, nil)); err != nil {
		t.Fatal(err)
	}
	b.SetAddress("agent-1", "10.0.0.1:7781")
	p := NewProbe("h1")
	p.PushFailed()
	res := &report.Result{Phases: []report.PhaseResult{{Name: "write", Latency: metrics.Summary{Count: 1, P50: 1}}},
		Expectations: []report.Expectation{{Expr: "errors==0", Verdict: report.VerdictPass}}}
	p.Round(RoundPass, time.Now(), time.Second, res)
	reg, err := NewRegistry(append([]prometheus.Collector{b}, p.Collectors()...)...)
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "fsbench_") {
			continue
		}
		var labels []string
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			labels = append(labels, lp.GetName())
		}
		slices.Sort(labels)
		out[mf.GetName()] = strings.ToLower(mf.GetType().String()) + " " + strings.Join(labels, ",")
	}
	return out
}

var byClause = regexp.MustCompile(`\bby \(([^)]*)\)`)

// byWithout reports whether a query aggregates by labels that leave out
// label.
func byWithout(expr, label string) bool {
	for _, m := range byClause.FindAllStringSubmatch(expr, -1) {
		if !slices.Contains(strings.Fields(strings.ReplaceAll(m[1], ",", " ")), label) {
			return true
		}
	}
	return false
}
