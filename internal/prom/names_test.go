package prom

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

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
			Targets []struct{ Expr string }
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
