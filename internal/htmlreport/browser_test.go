package htmlreport

import (
	"bytes"
	"context"
	"encoding/base64"
	"fmt"
	"html/template"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/fsbench/fsbench/internal/history"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
)

// browser starts headless Chromium (Debian's chromium package) for one
// test and returns a context to drive it with.
func browser(t *testing.T) context.Context {
	t.Helper()
	testenv.NeedsServer(t, "a Chromium browser")
	path, err := exec.LookPath("chromium")
	if err != nil {
		testenv.Unavailable(t, "chromium is not installed")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 1800),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // start it now, without a deadline
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// pageEvents records what a page did: console errors, exceptions, log
// errors, and every request it made.
type pageEvents struct {
	mu       sync.Mutex
	errors   []string
	requests []string
}

func (p *pageEvents) add(ev any) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning {
			p.errors = append(p.errors, fmt.Sprintf("console %s", ev.Type))
		}
	case *runtime.EventExceptionThrown:
		p.errors = append(p.errors, "exception: "+ev.ExceptionDetails.Text)
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError || ev.Entry.Level == log.EntryLevelWarning {
			p.errors = append(p.errors, "log: "+ev.Entry.Text)
		}
	case *network.EventRequestWillBeSent:
		p.requests = append(p.requests, ev.Request.URL)
	}
}

// TestBrowser loads a report of every fixture in Chromium from a file://
// URL: no console error, no request but the page itself, every chart
// drawn, a screenshot that is not blank, and colours that follow the
// reader's dark preference and print.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
	files := []string{"bench.json", "bench-b.json", "v1.json", "objbench.json", "job.json", "hosts.json"}
	page := render(t, files)
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	url := "file://" + path
	ev := &pageEvents{}
	if err := chromedp.Listen(ctx, ev.add); err != nil {
		t.Fatal(err)
	}
	for _, enable := range []func() error{
		func() error { _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); return err },
		func() error { _, err := chromedp.Call(ctx, log.Enable, cdp.Empty{}); return err },
		func() error { _, err := chromedp.Call(ctx, runtime.Enable, cdp.Empty{}); return err },
	} {
		if err := enable(); err != nil {
			t.Fatal(err)
		}
	}
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.Navigate(url)); err != nil {
		t.Fatal(err)
	}
	want := countCharts(t, page)
	drawn := eval[int](t, tctx, `[...document.querySelectorAll("svg.chart")].filter(s => { const r = s.getBoundingClientRect(); return r.width > 200 && r.height > 100 }).length`)
	if drawn != want || want < 20 {
		t.Errorf("%d charts drawn with a size, want %d (of the page's %d)", drawn, want, want)
	}
	checkScreenshot(t, tctx)
	checkColourSchemes(t, tctx)

	ev.mu.Lock()
	defer ev.mu.Unlock()
	if len(ev.errors) > 0 {
		t.Errorf("console errors: %q", ev.errors)
	}
	for _, u := range ev.requests {
		if u != url {
			t.Errorf("the page requested %s", u)
		}
	}
	if len(ev.requests) == 0 {
		t.Error("no request seen at all: the network events were not recorded")
	}
}

func countCharts(t *testing.T, page []byte) int {
	t.Helper()
	return strings.Count(string(page), `<svg class="chart"`)
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("evaluate %s: %v", js, err)
	}
	return v
}

// checkScreenshot takes a screenshot and checks that it shows something:
// many colours, and a good share of pixels that are not the background.
func checkScreenshot(t *testing.T, ctx context.Context) {
	t.Helper()
	data, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := base64.StdEncoding.DecodeString(string(data)); err == nil && bytes.HasPrefix(raw, []byte("\x89PNG")) {
		data = raw
	}
	img, err := png.Decode(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	colours, busy := pixelStats(img)
	if colours < 50 {
		t.Errorf("screenshot has %d distinct colours: blank or nearly", colours)
	}
	if busy < 0.03 {
		t.Errorf("only %.1f%% of the screenshot differs from the background", busy*100)
	}
}

// pixelStats counts distinct colours and the share of pixels unlike the
// top-left one (the page's background).
func pixelStats(img image.Image) (int, float64) {
	b := img.Bounds()
	bg := img.At(b.Min.X, b.Min.Y)
	br, bgc, bb, _ := bg.RGBA()
	seen := map[[3]uint32]bool{}
	diff := 0
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if r != br || g != bgc || bl != bb {
				diff++
			}
		}
	}
	return len(seen), float64(diff) / float64(b.Dx()*b.Dy())
}

// checkColourSchemes switches the page to dark and to print and reads the
// colours the browser computed, for the page and for the text in a chart.
func checkColourSchemes(t *testing.T, ctx context.Context) {
	t.Helper()
	const colours = `[getComputedStyle(document.body).backgroundColor, getComputedStyle(document.querySelector("svg.chart text")).fill, getComputedStyle(document.querySelector("nav")).display]`
	light := eval[[]string](t, ctx, colours)
	media := func(m string, dark bool) {
		p := emulation.SetEmulatedMediaParams{Media: m}
		if dark {
			p.Features = []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}
		}
		if _, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, p); err != nil {
			t.Fatal(err)
		}
	}
	media("", true)
	dark := eval[[]string](t, ctx, colours)
	media("print", false)
	print := eval[[]string](t, ctx, colours)
	media("", false)
	if light[0] != "rgb(255, 255, 255)" || light[1] != "rgb(28, 30, 33)" {
		t.Errorf("light: background %s, chart text %s", light[0], light[1])
	}
	if dark[0] != "rgb(21, 24, 28)" || dark[1] != "rgb(228, 230, 234)" {
		t.Errorf("dark: background %s, chart text %s", dark[0], dark[1])
	}
	if print[0] != "rgb(255, 255, 255)" || print[1] != "rgb(0, 0, 0)" || print[2] != "none" {
		t.Errorf("print: background %s, chart text %s, nav %s", print[0], print[1], print[2])
	}
}

// TestBrowserWidths loads a comparison of two repeated results at 1400
// and at 400 px: the verdict is on the first screen, charts take a good
// share of a wide page with tick labels a person can read, and on a phone
// the page does not scroll sideways and every table's Change column is in
// view without scrolling. FSBENCH_REPORT_SHOTS=DIR keeps a full-page
// screenshot of each width there, to look at.
func TestBrowserWidths(t *testing.T) {
	ctx := browser(t)
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, render(t, []string{"repeat.json", "repeat-b.json"}), 0o644); err != nil {
		t.Fatal(err)
	}
	three := filepath.Join(t.TempDir(), "three.html")
	if err := os.WriteFile(three, render(t, []string{"bench.json", "bench-b.json", "v1.json"}), 0o644); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(400, 900), chromedp.Navigate("file://"+three)); err != nil {
		t.Fatal(err)
	}
	if hidden := eval[[]string](t, tctx, changeColumnsOutOfView); len(hidden) > 0 {
		t.Errorf("three results at 400 px: a Change column is out of view in %q", hidden)
	}
	saveShot(t, tctx, "three-400.png")
	for _, w := range []int64{1400, 400} {
		if err := chromedp.Do(tctx, chromedp.EmulateViewport(w, 900), chromedp.Navigate("file://"+path)); err != nil {
			t.Fatal(err)
		}
		if top := eval[float64](t, tctx, `document.querySelector(".verdict").getBoundingClientRect().bottom`); top > 900 {
			t.Errorf("%d px: the verdict ends at %.0f px, below the first screen", w, top)
		}
		if over := eval[float64](t, tctx, `document.documentElement.scrollWidth - window.innerWidth`); over > 0 {
			t.Errorf("%d px: the page is %.0f px wider than the window", w, over)
		}
		// The smallest text in the first chart, as drawn on screen.
		tick := eval[float64](t, tctx, `Math.min(...[...document.querySelector("svg.chart").querySelectorAll("text")].map(e => e.getBoundingClientRect().height).filter(h => h > 0))`)
		if w == 1400 {
			share := eval[float64](t, tctx, `document.querySelector("svg.chart").getBoundingClientRect().width / document.querySelector("main").getBoundingClientRect().width`)
			if share < 0.45 {
				t.Errorf("%d px: a chart takes %.0f%% of the page's width", w, share*100)
			}
			if tick < 12 {
				t.Errorf("%d px: chart text %.1f px high", w, tick)
			}
		}
		hidden := eval[[]string](t, tctx, changeColumnsOutOfView)
		if len(hidden) > 0 {
			t.Errorf("%d px: the Change column is out of view in %q", w, hidden)
		}
		saveShot(t, tctx, fmt.Sprintf("report-%d.png", w))
	}
}

// changeColumnsOutOfView lists the tables (by their first header) whose
// Change header cell ends beyond the right edge of the window.
const changeColumnsOutOfView = `[...document.querySelectorAll("table")].filter(t =>
	[...t.querySelectorAll("th")].some(th => th.textContent === "Change" && th.getBoundingClientRect().right > window.innerWidth + 0.5)
).map(t => t.closest(".block").querySelector("h3").textContent)`

// saveShot writes a full-page screenshot (or the one shot takes) to
// $FSBENCH_REPORT_SHOTS/name when that is set.
func saveShot(t *testing.T, ctx context.Context, name string, shot ...chromedp.Action[[]byte]) {
	t.Helper()
	dir := os.Getenv("FSBENCH_REPORT_SHOTS")
	if dir == "" {
		return
	}
	take := chromedp.FullScreenshot(100)
	if len(shot) > 0 {
		take = shot[0]
	}
	data, err := chromedp.Run(ctx, take)
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := base64.StdEncoding.DecodeString(string(data)); err == nil && bytes.HasPrefix(raw, []byte("\x89PNG")) {
		data = raw
	}
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserTrend loads a report whose Trend section holds a history of
// 30 runs of the bench fixture, 20% slower from run 21 on: every point of
// every trend chart is drawn inside its chart, the change point is marked
// and the page is not blank. FSBENCH_REPORT_SHOTS=DIR keeps a screenshot
// of the section there (trend.png), to look at.
func TestBrowserTrend(t *testing.T) {
	ctx := browser(t)
	hdir := t.TempDir()
	trend, last := trendOf(t, hdir, 30)
	var b bytes.Buffer
	if err := WriteOptions(&b, []*report.Result{last}, []string{"run 30"}, Options{Threshold: DefaultThreshold, Version: "test", Trend: trend}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	path := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	tctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(tctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate("file://"+path)); err != nil {
		t.Fatal(err)
	}
	want := strings.Count(page, `<circle class="pt"`)
	const inside = `[...document.querySelectorAll("#trend svg.trendchart")].map(s => { const r = s.getBoundingClientRect();
		return [...s.querySelectorAll("circle.pt")].filter(c => { const p = c.getBoundingClientRect();
			return p.width > 2 && p.left >= r.left && p.right <= r.right && p.top >= r.top && p.bottom <= r.bottom }).length }).reduce((a, b) => a + b, 0)`
	if drawn := eval[int](t, tctx, inside); drawn != want || want < 30*3 {
		t.Errorf("%d trend points drawn inside their charts, want %d (at least 90)", drawn, want)
	}
	if marks := eval[int](t, tctx, `document.querySelectorAll("#trend line.cp").length`); marks == 0 {
		t.Error("no change point marked on the trend, though run 21 is 20% slower")
	}
	eval[float64](t, tctx, `const y = document.querySelector("#trend").getBoundingClientRect().top + window.scrollY; window.scrollTo(0, y); y`)
	checkScreenshot(t, tctx)
	saveShot(t, tctx, "trend.png", chromedp.CaptureScreenshot())
	dark := emulation.SetEmulatedMediaParams{Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}}
	if _, err := chromedp.Call(tctx, emulation.SetEmulatedMedia, dark); err != nil {
		t.Fatal(err)
	}
	// In the dark, the charts' axis labels and medians take the page's
	// light text colour, not a dark grey that would vanish.
	if c := eval[string](t, tctx, `getComputedStyle(document.querySelector("#trend .ax")).fill`); c != "rgb(228, 230, 234)" {
		t.Errorf("dark: a trend axis label is %s, want the page's text colour", c)
	}
	saveShot(t, tctx, "trend-dark.png", chromedp.CaptureScreenshot())
}

// trendOf keeps n runs of the bench fixture in a history in dir, 20%
// slower from run 21 on, and returns the trend of its series and the last
// run.
func trendOf(t *testing.T, dir string, n int) (template.HTML, *report.Result) {
	t.Helper()
	ctx := context.Background()
	st, err := history.Open(ctx, dir, object.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var last *report.Result
	for i := 1; i <= n; i++ {
		speed := 1.0
		if i > 20 {
			speed = 0.8
		}
		last = benchFixture(t, uint64(i), speed)
		if _, err := st.Add(ctx, last, fmt.Sprintf("build-%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	all, err := st.Load(ctx)
	if err != nil || len(all) != 1 {
		t.Fatalf("%d series, %v", len(all), err)
	}
	var b bytes.Buffer
	if err := history.WriteTrend(&b, all, history.HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	return template.HTML(b.String()), last
}
