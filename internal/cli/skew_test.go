package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// access is the one Access of kind of in the single phase of a JSON result.
func access(t *testing.T, out, of string) report.Access {
	t.Helper()
	var res report.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Phases) == 0 {
		t.Fatalf("result: %v\n%s", err, out)
	}
	p := res.Phases[len(res.Phases)-1]
	for _, a := range p.Access {
		if a.Of == of {
			return a
		}
	}
	t.Fatalf("phase %s has no access of %s: %+v", p.Name, of, p.Access)
	return report.Access{}
}

// near fails unless the measured shares of a are within points of the
// distribution's, or within five standard deviations of them where the
// picks are too few for that: a pick falls in the hottest items with the
// wanted share as its chance, so the measured share of n picks spreads by
// sqrt(p(1-p)/n). The fio job's 4,096 picks of a 40% share spread by 0.77
// points, and one run in a hundred or so would be 2 points off by chance
// alone (37.87% was measured once on a busy machine); a distribution
// drawn wrongly is off by tens of points.
func near(t *testing.T, a report.Access, points float64) {
	t.Helper()
	if accessOff(a, points) {
		t.Errorf("%s over %d %s: measured %.2f%%/%.2f%%, want %.2f%%/%.2f%% (%d picks)",
			a.Distribution, a.Items, a.Of, a.Top1Pct, a.Top10Pct, a.Want1Pct, a.Want10Pct, a.Picks)
	}
}

// accessOff says whether a's measured shares are off the wanted ones by
// more than near allows.
func accessOff(a report.Access, points float64) bool {
	off := func(measured, want float64) bool {
		p := want / 100
		sd := 100 * math.Sqrt(p*(1-p)/float64(max(a.Picks, 1)))
		return math.Abs(measured-want) > max(points, 5*sd)
	}
	return a.Picks == 0 || off(a.Top1Pct, a.Want1Pct) || off(a.Top10Pct, a.Want10Pct)
}

// TestAccessOff: chance is allowed, a wrong distribution is not.
func TestAccessOff(t *testing.T) {
	zoned := report.Access{Picks: 4096, Top1Pct: 3.54, Want1Pct: 4.10, Top10Pct: 37.87, Want10Pct: 40}
	for _, tt := range []struct {
		a    report.Access
		want bool
	}{
		{zoned, false}, // the busy machine's run: 2.8 standard deviations
		{report.Access{Picks: 4096, Top1Pct: 1, Want1Pct: 4.10, Top10Pct: 10, Want10Pct: 40}, true},   // uniform picks
		{report.Access{Picks: 4096, Top1Pct: 4.1, Want1Pct: 4.10, Top10Pct: 36, Want10Pct: 40}, true}, // 5.2 deviations
		{report.Access{Picks: 1 << 20, Top1Pct: 4.1, Want1Pct: 4.10, Top10Pct: 37.5, Want10Pct: 40}, true},
		{report.Access{Picks: 20000, Top1Pct: 55, Want1Pct: 56.5, Top10Pct: 80, Want10Pct: 80}, false},
		{report.Access{}, true}, // no picks
	} {
		if got := accessOff(tt.a, 2); got != tt.want {
			t.Errorf("%+v: off %v, want %v", tt.a, got, tt.want)
		}
	}
}

// TestDistributionOnTmpfs: skewed random reads of a file on a tmpfs, by
// bench's flags and by a fio job file, state their distribution and a
// measured hot share within 2 points of the distribution's (or what
// chance allows, see near).
func TestDistributionOnTmpfs(t *testing.T) {
	testenv.NeedsServer(t, "a tmpfs mount")
	dir := testenv.Tmpfs(t, "64m")
	out, errs, code := runFsbench(t, "bench", dir, "--rw", "randread", "--file-size", "16M", "--xfer-size", "4K",
		"--distribution", "zipf:1.2", "-p", "2", "--ops", "20000", "--json", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	a := access(t, out, "blocks")
	if a.Distribution != "zipf:1.2" || a.Items != 4096 {
		t.Errorf("access %+v", a)
	}
	near(t, a, 2)

	job := filepath.Join(t.TempDir(), "hot.fio")
	src := "[hot]\ndirectory=" + dir + "\nrw=randread\nbs=4k\nsize=8m\nnumjobs=2\nrandom_distribution=zoned:80/20:20/80\n"
	if err := os.WriteFile(job, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runFsbench(t, "fio", job, "--json", "-q")
	if code != 0 {
		t.Fatalf("fio: exit %d: %s", code, errs)
	}
	a = access(t, out, "blocks")
	if a.Distribution != "zoned:80/20:20/80" || a.Picks < 4096 || a.Want10Pct != 40 {
		t.Errorf("fio access %+v", a)
	}
	near(t, a, 2)

	// Files of one block each: the picks of files are skewed and said,
	// and no line speaks of a skew among the one block of each.
	small := filepath.Join(dir, "small")
	if err := os.Mkdir(small, 0o755); err != nil {
		t.Fatal(err)
	}
	out, errs, code = runFsbench(t, "bench", small, "--rw", "randread", "--files", "2000", "-p", "1", "--file-size", "4K", "--xfer-size", "4K",
		"--file-select", "random", "--distribution", "zipf:1.2", "--ops", "20000", "--drop-caches", "never", "--json", "-q")
	if code != 0 {
		t.Fatalf("small files: exit %d: %s", code, errs)
	}
	if a = access(t, out, "files"); a.Items != 2000 {
		t.Errorf("small files: access %+v", a)
	}
	near(t, a, 2)
	if strings.Contains(out, `"of": "blocks"`) {
		t.Errorf("a skew among the one block of each file reported:\n%s", out)
	}
}

// TestDistributionObjects: objbench's get picks prepared objects from the
// distribution, in a directory store.
func TestDistributionObjects(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	store := t.TempDir() + "/"
	out, errs, code := runFsbench(t, "objbench", "--storage", "file", store, "--workload", "get", "--objects", "400",
		"--obj-size", "4K", "--ops", "20000", "--distribution", "pareto:0.2", "-p", "2", "--json", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	a := access(t, out, "objects")
	if a.Distribution != "pareto:0.2" || a.Items != 200 {
		t.Errorf("access %+v", a)
	}
	near(t, a, 2)
	// The mixed workload's gets and stats, among each thread's live objects.
	out, errs, code = runFsbench(t, "objbench", "--storage", "file", t.TempDir()+"/", "--workload", "mixed", "--objects", "400",
		"--obj-size", "4K", "--ops", "20000", "--distribution", "zoned:80/20:20/80", "-p", "2", "--json", "-q")
	if code != 0 {
		t.Fatalf("mixed: exit %d: %s", code, errs)
	}
	var res report.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Phases) == 0 || len(res.Phases[0].Access) != 1 {
		t.Fatalf("mixed: %v %s", err, out)
	}
	a = res.Phases[0].Access[0]
	if a.Distribution != "zoned:80/20:20/80" || a.Picks < 10000 {
		t.Errorf("mixed: access %+v", a)
	}
	near(t, a, 2)
}

// TestDistributionTrain: train's readers draw samples from the
// distribution over the whole dataset, and the result says how they fell.
func TestDistributionTrain(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	out, errs, code := runFsbench(t, "train", t.TempDir(), "--model", "resnet50", "--dataset-files", "8", "--epochs", "2",
		"--compute-time", "1ms", "-p", "1", "--au-threshold", "1", "--distribution", "zipf:1.2", "--json", "-q")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	a := access(t, out, "samples")
	if a.Distribution != "zipf:1.2" || a.Items != 10008 || a.Picks != 20000 {
		t.Errorf("access %+v", a)
	}
	near(t, a, 2)
}

// TestDistributionRefused: a spelling fsbench cannot read, or a
// distribution with nothing random to draw, is one line and exit 2.
func TestDistributionRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"bench", dir, "--rw", "randread", "--distribution", "zipf:1"}, `fsbench: --distribution: bad distribution "zipf:1"`},
		{[]string{"bench", dir, "--rw", "randread", "--distribution", "zoned:60/10:30/20"}, "sum to 90% and their sizes to 30%"},
		{[]string{"bench", dir, "--rw", "randread", "--distribution", "lognormal:2"}, "unknown distribution"},
		{[]string{"bench", dir, "--rw", "write", "--distribution", "pareto:0.2"}, "--distribution draws random picks"},
		{[]string{"objbench", "--storage", "file", dir, "--workload", "put", "--distribution", "zipf:1.2"}, "--distribution goes with --workload get, stat or mixed"},
		{[]string{"fio", "--name=z", "--directory=" + dir, "--rw=randread", "--size=1m", "--random_distribution=normal:0"}, "random_distribution=normal:0: bad distribution"},
	} {
		_, errs, code := runFsbench(t, c.args...)
		if code != 2 || !strings.HasPrefix(errs, "fsbench: ") || strings.Count(errs, "\n") != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want exit 2, one line with %q", c.args, code, errs, c.want)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
