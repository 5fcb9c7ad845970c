package testenv

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Prometheus is a Prometheus server (Debian's package) that scrapes the
// given targets every second, with its data in the test's directory.
type Prometheus struct {
	URL  string
	proc *Process
}

// StartPrometheus starts a server scraping targets (host:port, /metrics)
// and waits until it is ready; it stops when the test ends.
func StartPrometheus(t testing.TB, targets ...string) *Prometheus {
	t.Helper()
	NeedsServer(t, "a Prometheus server")
	bin, err := LookPath("prometheus")
	if err != nil {
		Unavailable(t, "prometheus not installed")
	}
	dir := t.TempDir()
	quoted := make([]string, len(targets))
	for i, tg := range targets {
		quoted[i] = strconv.Quote(tg)
	}
	conf := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n"+
		"  - job_name: fsbench\n    static_configs:\n      - targets: [%s]\n", strings.Join(quoted, ", "))
	confPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", FreePort(t))
	p := &Prometheus{URL: "http://" + addr}
	p.proc = StartProcess(t, exec.Command(bin, "--config.file="+confPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn"))
	awaitHTTP(t, p.proc, p.URL+"/-/ready", "prometheus")
	return p
}

// awaitHTTP waits until url answers 200, failing if proc exits first.
func awaitHTTP(t testing.TB, proc *Process, url, what string) {
	t.Helper()
	proc.Await(what+" ready", 2*time.Minute, func() bool {
		resp, err := http.Get(url)
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// Query evaluates an instant PromQL query and returns the values of its
// series, by the label named key (all under "" when key is "").
func (p *Prometheus) Query(t testing.TB, query, key string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(p.URL + "/api/v1/query?query=" + url.QueryEscape(query))
	if err != nil {
		t.Fatalf("query %s: %v", query, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var r struct {
		Status string
		Error  string
		Data   struct {
			Result []struct {
				Metric map[string]string
				Value  [2]any
			}
		}
	}
	if err := json.Unmarshal(body, &r); err != nil || r.Status != "success" {
		t.Fatalf("query %s: %v %s: %s", query, err, r.Error, body)
	}
	out := map[string]float64{}
	for _, s := range r.Data.Result {
		v, _ := s.Value[1].(string)
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("query %s: value %v", query, s.Value[1])
		}
		out[s.Metric[key]] = f
	}
	return out
}

// Pushgateway is a Prometheus pushgateway (Debian's package).
type Pushgateway struct {
	URL  string
	proc *Process
}

// StartPushgateway starts a pushgateway and waits until it is ready; it
// stops when the test ends.
func StartPushgateway(t testing.TB) *Pushgateway {
	t.Helper()
	NeedsServer(t, "a Prometheus pushgateway")
	bin, err := LookPath("prometheus-pushgateway")
	if err != nil {
		if bin, err = LookPath("pushgateway"); err != nil {
			Unavailable(t, "prometheus-pushgateway not installed")
		}
	}
	addr := fmt.Sprintf("127.0.0.1:%d", FreePort(t))
	g := &Pushgateway{URL: "http://" + addr}
	g.proc = StartProcess(t, exec.Command(bin, "--web.listen-address="+addr, "--log.level=warn"))
	awaitHTTP(t, g.proc, g.URL+"/-/ready", "pushgateway")
	return g
}

// Metrics returns the gateway's exposition page.
func (g *Pushgateway) Metrics(t testing.TB) string {
	t.Helper()
	resp, err := http.Get(g.URL + "/metrics")
	if err != nil {
		t.Fatalf("pushgateway: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
