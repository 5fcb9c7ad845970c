package htmlreport

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// capacityResults reads the results of testdata/capacity: a curve and an
// SLO search on ext4 over a loop device whose reads a blkio cgroup
// limited to 200 a second (O_DIRECT 4 KiB random reads, 4 threads).
func capacityResults(t *testing.T) []*report.Result {
	t.Helper()
	var out []*report.Result
	for _, name := range []string{"curve.json", "slo.json"} {
		f, err := os.Open(filepath.Join(testenv.RepoRoot(), "testdata", "capacity", name))
		if err != nil {
			t.Fatal(err)
		}
		r, err := report.ReadJSON(f)
		f.Close()
		if err != nil || r.Capacity == nil {
			t.Fatalf("%s: %v, capacity %v", name, err, r.Capacity)
		}
		out = append(out, r)
	}
	return out
}

func renderCapacity(t *testing.T) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteOptions(&b, capacityResults(t), []string{"curve", "slo"}, Options{Threshold: DefaultThreshold, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCapacitySection: the page has a latency-throughput chart for each
// result, with the percentiles, the objective's bounds, the answer and
// the knee in its legend, each step in a table, and the results' p99
// curves laid over each other.
func TestCapacitySection(t *testing.T) {
	page := string(renderCapacity(t))
	for _, want := range []string{
		`<section id="capacity">`, `aria-label="curve: randread"`, `aria-label="slo: randread"`,
		"throughput done (ops/s)", "log scale", ">p50<", ">p99.9<",
		"objective p50 &lt; 10.0ms", "objective p99 &lt; 150ms", "max rate under the objective: 181 ops/s", "knee: ",
		"maximum (closed loop)", "90% (knee)", "not held: ", `aria-label="p99 against throughput, every result"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Index(page, `id="capacity"`) > strings.Index(page, `id="latency"`) {
		t.Error("the capacity section comes after the latency section; it belongs next to throughput")
	}
}

// TestBrowserCapacity loads the page in Chromium: both capacity charts
// are drawn with a size. With FSBENCH_REPORT_SHOTS set, it saves a
// screenshot of the section (capacity.png) to look at.
func TestBrowserCapacity(t *testing.T) {
	ctx := browser(t)
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, renderCapacity(t), 0o644); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate("file://"+path)); err != nil {
		t.Fatal(err)
	}
	drawn := eval[int](t, tctx, `[...document.querySelectorAll("#capacity svg.chart")].filter(s => { const r = s.getBoundingClientRect(); return r.width > 200 && r.height > 100 }).length`)
	if drawn != 3 {
		t.Errorf("%d capacity charts drawn with a size, want 3 (the two results and both together)", drawn)
	}
	top := eval[float64](t, tctx, `document.querySelector("#capacity").getBoundingClientRect().top + window.scrollY`)
	t.Logf("the capacity section starts %.0f pixels down the page", top)
	saveShot(t, tctx, "capacity.png")
}
