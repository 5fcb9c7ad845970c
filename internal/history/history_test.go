package history

import (
	"bytes"
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/pkg/object"
)

var t0 = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

// result is a fio-like result of one read phase at value MiB/s, run i
// hours after t0, with block size bs.
func result(i int, value float64, bs int) *report.Result {
	return &report.Result{
		SchemaVersion: report.SchemaVersion, Tool: "fsbench", Command: "bench", StartedAt: t0.Add(time.Duration(i) * time.Hour),
		Target:     report.Target{Path: "/mnt/data"},
		Parameters: report.Params{{Key: "block_size", Value: bs}, {Key: "threads", Value: 1}},
		Phases: []report.PhaseResult{{Name: "read", Title: "read", Value: report.Measure{Value: value, Unit: report.UnitMiBPerSec},
			Latency: metrics.Summary{Count: 1000, P50: 100, P99: 400}}},
	}
}

// A history in a directory keeps each run once, in its series in start
// order; a result whose parameters differ starts a series of its own and
// names how they differ.
func TestAddLoadSeries(t *testing.T) {
	ctx := context.Background()
	st, err := Open(ctx, t.TempDir()+"/h", object.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, i := range []int{2, 0, 1} {
		a, err := st.Add(ctx, result(i, 100+float64(i), 4096), "c"+string(rune('0'+i)))
		if err != nil {
			t.Fatal(err)
		}
		if a.New != (i == 2) {
			t.Errorf("run %d: new series %v", i, a.New)
		}
	}
	if a, err := st.Add(ctx, result(1, 101, 4096), ""); err != nil || !a.Duplicate {
		t.Errorf("the same run again: duplicate %v (%v)", a.Duplicate, err)
	}
	a, err := st.Add(ctx, result(3, 50, 8192), "")
	if err != nil {
		t.Fatal(err)
	}
	if !a.New || len(a.Differs) != 1 {
		t.Fatalf("other block size: new %v, differs %v", a.New, a.Differs)
	}
	for _, d := range a.Differs {
		if strings.Join(d, ";") != "block_size 4096 -> 8192" {
			t.Errorf("differs: %q", d)
		}
	}
	all, err := st.Load(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 2 || len(all[0].Entries) != 3 || len(all[1].Entries) != 1 {
		t.Fatalf("series: %d", len(all))
	}
	v, _ := all[0].Values("read")
	if v[0] != 100 || v[1] != 101 || v[2] != 102 || all[0].Entries[2].Label != "c2" {
		t.Errorf("series values %v, labels %v", v, all[0].Entries)
	}
	var b bytes.Buffer
	if err := Show(&b, all, ShowOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Series " + all[0].ID, "3 runs", "read.p99", "block_size=8192"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, b.String())
		}
	}
}

// series is a series of values of "read", one run an hour.
func series(values ...float64) []*Series {
	var es []Entry
	for i, v := range values {
		es = append(es, EntryOf(result(i, v, 4096), ""))
	}
	return group(es)
}

// A run far below a steady series is outside it; one like its runs is
// within; a series shorter than MinRuns is not judged and says how many
// runs it needs.
func TestCheck(t *testing.T) {
	steady := []float64{100, 96, 104, 99, 101, 103, 97, 100, 102, 98}
	n := len(steady)
	for _, c := range []struct {
		name   string
		all    []*Series
		v      float64
		out    int
		needs  int
		verdct string
	}{
		{"slow", series(steady...), 80, 1, 0, "outside its history in 1 of 1 figures (read;"},
		{"like", series(steady...), 95, 0, 0, "within its history (false-alarm rate 1% over 1 figures)"},
		{"faster", series(steady...), 130, 0, 0, "within"},
		{"short", series(100, 98, 101), 10, 0, 2, "2 more needed"},
	} {
		ch := CheckResult(c.all, result(n, c.v, 4096), Options{})
		if ch.Outside != c.out || ch.Needs != c.needs || !strings.Contains(ch.Verdict(), c.verdct) {
			t.Errorf("%s: outside %d, needs %d, %q", c.name, ch.Outside, ch.Needs, ch.Verdict())
		}
	}
	ch := CheckResult(series(steady...), result(n, 10, 8192), Options{})
	if !ch.New || ch.Outside != 0 || len(ch.Differs) != 1 {
		t.Errorf("other parameters: new %v, outside %d, differs %v", ch.New, ch.Outside, ch.Differs)
	}
	// A run the history holds is not judged against itself.
	all := series(append(steady, 80)...)
	if ch := CheckResult(all, result(n, 80, 4096), Options{}); ch.Outside != 1 || ch.Figures[0].Runs != n {
		t.Errorf("a run in the history: outside %d over %d runs", ch.Outside, ch.Figures[0].Runs)
	}
	// After a change point, a run is judged against the runs since: a run
	// at the new level is within, one at the old level is not judged
	// worse for being faster.
	var stepped []float64
	for i := range 30 {
		v := steady[i%n]
		if i >= 20 {
			v -= 30
		}
		stepped = append(stepped, v)
	}
	if ch := CheckResult(series(stepped...), result(30, 68, 4096), Options{}); ch.Outside != 0 || ch.Figures[0].Runs != 10 {
		t.Errorf("after a step: outside %d over %d runs", ch.Outside, ch.Figures[0].Runs)
	}
	if ch := CheckResult(series(stepped...), result(30, 50, 4096), Options{}); ch.Outside != 1 {
		t.Errorf("below the stepped level: outside %d", ch.Outside)
	}
	// Latency percentiles are judged with All only.
	if ch := CheckResult(series(steady...), result(n, 100, 4096), Options{All: true}); len(ch.Figures) != 3 {
		t.Errorf("all figures: %d judged", len(ch.Figures))
	}
}

// A paced series (runs at a fixed rate) swings by a tenth of a percent:
// a run 1% below it is beyond its bound; with MinChange 5% that counts as
// within the threshold, and a run 10% below is still outside. A latency
// figure (lower is better) is held to the threshold the other way.
func TestCheckMinChange(t *testing.T) {
	paced := []float64{1000, 1000.5, 999.6, 1000.2, 999.8, 1000.1, 999.9, 1000.3}
	n := len(paced)
	for _, c := range []struct {
		v      float64
		min    float64
		out    int
		small  bool
		result string
	}{
		{990, 0, 1, false, "OUTSIDE: below the bound"},
		{990, 0.05, 0, true, "within the threshold, beyond the bound"},
		{900, 0.05, 1, false, "OUTSIDE: below the bound"},
		{999.9, 0.05, 0, false, "within"},
	} {
		ch := CheckResult(series(paced...), result(n, c.v, 4096), Options{MinChange: c.min})
		j := ch.Figures[0]
		if ch.Outside != c.out || j.Small != c.small || j.result() != c.result {
			t.Errorf("%g with threshold %g: outside %d, small %v, %q", c.v, c.min, ch.Outside, j.Small, j.result())
		}
	}
	lat := Figure{Name: "read.p99", Value: 1.03}
	s := &Series{}
	for i := range 8 {
		e := EntryOf(result(i, 100, 4096), "")
		e.Figures = []Figure{{Name: "read.p99", Value: 1 + float64(i%3)/1000}}
		s.Entries = append(s.Entries, e)
	}
	if j := judge(s, lat, 0.01, Options{}); !j.Outside || j.Higher {
		t.Fatalf("p99 3%% above a steady series: %+v", j)
	}
	if j := judge(s, lat, 0.01, Options{MinChange: 0.05}); j.Outside || !j.Small {
		t.Errorf("p99 3%% above with a 5%% threshold: %+v", j)
	}
	if j := judge(s, Figure{Name: "read.p99", Value: 1.2}, 0.01, Options{MinChange: 0.05}); !j.Outside {
		t.Errorf("p99 20%% above with a 5%% threshold: %+v", j)
	}
}

// A history under a bucket prefix of a real S3 store (MinIO) keeps and
// loads runs as a directory does.
func TestStoreOnMinIO(t *testing.T) {
	m := testenv.SharedMinIO(t, false)
	ctx := context.Background()
	bucket := "history-" + time.Now().Format("150405000000")
	cfg := object.Config{AccessKey: m.AccessKey, SecretKey: object.NewSecret(m.SecretKey)}
	b, err := object.Open(ctx, "minio", m.URL(bucket), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Create(ctx); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"ACCESS_KEY": m.AccessKey, "SECRET_KEY": m.SecretKey}
	st, err := Open(ctx, m.URL(bucket)+"/ci/history", object.Config{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 6 {
		if _, err := st.Add(ctx, result(i, 100+float64(i%3), 4096), ""); err != nil {
			t.Fatal(err)
		}
	}
	all, err := st.Load(ctx)
	if err != nil || len(all) != 1 || len(all[0].Entries) != 6 {
		t.Fatalf("loaded %v (%v)", all, err)
	}
	page, err := b.List(ctx, object.ListOptions{Prefix: "ci/history/keys/"})
	if err != nil || len(page.Objects) != 1 {
		t.Errorf("keys under the prefix: %v (%v)", page, err)
	}
}

// A history on an NFS server (nfs-ganesha, NFSv3 from fsbench's own
// client) keeps and loads runs as a directory does, in the export's
// directory the URL names.
func TestStoreOnNFS(t *testing.T) {
	n := testenv.SharedNFS(t)
	ctx := context.Background()
	sub := "history-" + time.Now().Format("150405000000")
	if err := os.Mkdir(filepath.Join(n.Export, sub), 0o777); err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(filepath.Join(n.Export, sub))
	st, err := Open(ctx, n.URL(sub), object.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 6 {
		if _, err := st.Add(ctx, result(i, 100+float64(i%3), 4096), ""); err != nil {
			t.Fatal(err)
		}
	}
	all, err := st.Load(ctx)
	if err != nil || len(all) != 1 || len(all[0].Entries) != 6 {
		t.Fatalf("loaded %v (%v)", all, err)
	}
	keys, err := os.ReadDir(filepath.Join(n.Export, sub, "keys"))
	if err != nil || len(keys) != 1 {
		t.Errorf("keys in the export: %v (%v)", keys, err)
	}
}

// A history named by an unknown scheme is refused before anything runs.
func TestCheckWhere(t *testing.T) {
	for where, ok := range map[string]bool{"": true, "dir/h": true, "file:///tmp/h": true, "s3://b/p": true,
		"http://127.0.0.1:9000/b": true, "nfs://h/e/p": true, "ftp://h/p": false} {
		if err := CheckWhere(where); (err == nil) != ok {
			t.Errorf("%q: %v", where, err)
		}
	}
}

// show names each change point: its run, date, label, the medians on
// both sides and the shift, and marks it in the trend.
func TestShowChange(t *testing.T) {
	var es []Entry
	for i := range 30 {
		v := 100 + float64(i%4)
		if i >= 20 {
			v = 80 + float64(i%4)
		}
		e := EntryOf(result(i, v, 4096), "")
		if i == 20 {
			e.Label = "deploy-7"
		}
		es = append(es, e)
	}
	var b bytes.Buffer
	if err := Show(&b, group(es), ShowOptions{Last: 15}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"read changed at run 21 (2026-12-01 20:00, deploy-7): 101.50 MiB/s -> 81.00 MiB/s, -19.7%", "20 runs before, 10 after", "|▁"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("show lacks %q:\n%s", want, b.String())
		}
	}
}

// The trend page draws every run as a point linked to its result, marks
// the change point and names it.
func TestWriteHTML(t *testing.T) {
	var es []Entry
	for i := range 30 {
		v := 100 + float64(i%4)
		if i >= 20 {
			v -= 20
		}
		es = append(es, EntryOf(result(i, v, 4096), ""))
	}
	var b bytes.Buffer
	o := HTMLOptions{ResultLink: func(key string) string { return "h/" + key }}
	if err := WriteHTML(&b, group(es), o); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	if n := strings.Count(page, "<circle"); n != 90 {
		t.Errorf("%d points, want 30 runs x 3 figures", n)
	}
	for _, want := range []string{`<a href="h/results/`, `class="cp"`, "run 21: -19.", "read changed at run 21", "1 change point<"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") || strings.Contains(page, "<script") {
		t.Error("the page reaches for the network or runs scripts")
	}
}

// Runs like the series' own (normal noise) are called outside about as
// often as the stated false-alarm rate: at 1%, fewer than 2.5% of 2,000
// checks against 20 runs.
func TestCheckFalseAlarmRate(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	outside := 0
	const checks = 2000
	for range checks {
		v := make([]float64, 21)
		for i := range v {
			v[i] = 100 + rng.NormFloat64()*5
		}
		outside += CheckResult(series(v[:20]...), result(20, v[20], 4096), Options{}).Outside
	}
	if outside > checks*25/1000 {
		t.Errorf("%d of %d runs like the others called outside at 1%%", outside, checks)
	}
	t.Logf("%d of %d called outside", outside, checks)
}

// TestKeyOfPacedPhase: a paced phase's measured service times, which its
// description ends with, do not make each run a series of its own; the
// pacing itself does.
func TestKeyOfPacedPhase(t *testing.T) {
	a, b, free := result(0, 100, 4096), result(1, 90, 4096), result(2, 95, 4096)
	a.Phases[0].LatencyOf = "16 KiB sequential write, response time (service time p50 2.0us, p99 25us)"
	b.Phases[0].LatencyOf = "16 KiB sequential write, response time (service time p50 1.6us, p99 10us)"
	free.Phases[0].LatencyOf = "16 KiB sequential write"
	if KeyOf(a).ID() != KeyOf(b).ID() {
		t.Errorf("two paced runs are in different series: %v, %v", KeyOf(a).Phases, KeyOf(b).Phases)
	}
	if KeyOf(a).ID() == KeyOf(free).ID() {
		t.Errorf("a paced and an unpaced run share a series: %v", KeyOf(a).Phases)
	}
}
