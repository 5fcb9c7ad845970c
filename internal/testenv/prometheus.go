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
	p := &Prometheus{}
	p.proc, p.URL = startHTTP(t, "prometheus", func() int { return FreePort(t) }, func(addr string) *exec.Cmd {
		return exec.Command(bin, "--config.file="+confPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
			"--web.listen-address="+addr, "--log.level=warn")
	})
	return p
}

// startHTTP starts a server on a port of 127.0.0.1 that port chooses (cmd
// makes its command for the address) and waits until its /-/ready answers
// 200. A server that ends because another process took the port between
// the choice and its listening is started again on another, a few times.
func startHTTP(t testing.TB, what string, port func() int, cmd func(addr string) *exec.Cmd) (*Process, string) {
	t.Helper()
	for try := 1; ; try++ {
		addr := fmt.Sprintf("127.0.0.1:%d", port())
		proc := StartProcess(t, cmd(addr))
		url := "http://" + addr
		if awaitReady(proc, url+"/-/ready", 2*time.Minute) {
			return proc, url
		}
		if proc.Exited() && strings.Contains(strings.ToLower(proc.Stderr()), "address already in use") && try < 5 {
			continue
		}
		t.Fatalf("waiting for %s ready on %s: %v, exited %v; stderr:\n%s", what, addr, proc.Cmd.Args, proc.Exited(), proc.Stderr())
	}
}

// awaitReady polls url until it answers 200 (true), the process ends or
// limit passes (false). Each request has a second: whatever else holds the
// port may take the connection and never answer.
func awaitReady(proc *Process, url string, limit time.Duration) bool {
	c := &http.Client{Timeout: time.Second}
	return proc.poll(limit, func() bool {
		resp, err := c.Get(url)
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
	g := &Pushgateway{}
	g.proc, g.URL = startHTTP(t, "pushgateway", func() int { return FreePort(t) }, func(addr string) *exec.Cmd {
		return exec.Command(bin, "--web.listen-address="+addr, "--log.level=warn")
	})
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

// Scrape returns the page at url, or "" while nothing answers there.
func Scrape(url string) string {
	resp, err := http.Get(url)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}
