package objbench

// The workloads (--workload) against a real MinIO server, through the
// binary.

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// workloadBucket is a new bucket holding one object of the user's.
func workloadBucket(t *testing.T) (*testenv.MinIO, []string, string, object.Storage) {
	m, env := minioEnv(t, false)
	bucket, s := userBucket(t, m, "objwl")
	return m, env, bucket, s
}

// runWorkload runs one workload with JSON output and returns its result;
// the user's object must be untouched and nothing of the run left.
func runWorkload(t *testing.T, env []string, url string, s object.Storage, args ...string) *report.Result {
	t.Helper()
	r := fsbench(t, env, append([]string{"objbench", "--storage", "minio", url, "--json", "-p", "3"}, args...)...)
	if r.Code != 0 {
		t.Fatalf("%v: exit %d\nstderr: %s", args, r.Code, r.Stderr)
	}
	res, err := report.ReadJSON(strings.NewReader(r.Stdout))
	if err != nil {
		t.Fatalf("%v: not a JSON result: %v", args, err)
	}
	if n := res.TotalErrors(); n > 0 {
		t.Errorf("%v: %d operations failed", args, n)
	}
	checkPrecious(t, s)
	return res
}

func phase(t *testing.T, res *report.Result, name string) *report.PhaseResult {
	t.Helper()
	p := res.FindPhase(name)
	if p == nil {
		t.Fatalf("no row %s in the result", name)
	}
	return p
}

// Each workload does exactly --ops operations (delete: each prepared
// object once), and leaves the user's object alone.
func TestWorkloadOpsExact(t *testing.T) {
	m, env, bucket, s := workloadBucket(t)
	url := m.URL(bucket)
	for _, c := range []struct {
		workload string
		ops      int64
	}{{"get", 77}, {"put", 41}, {"stat", 53}, {"list", 5}, {"mixed", 101}, {"delete", 30}} {
		res := runWorkload(t, env, url, s, "--workload", c.workload, "--objects", "30", "--obj-size", "8K", "--ops", strconv.FormatInt(c.ops, 10))
		p := phase(t, res, c.workload)
		if p.Ops != c.ops || p.Errors != 0 {
			t.Errorf("%s: %d operations, %d errors; want %d", c.workload, p.Ops, p.Errors, c.ops)
		}
		if items := c.ops * map[bool]int64{true: 30, false: 1}[c.workload == "list"]; p.Items != items {
			t.Errorf("%s: %d objects, want %d", c.workload, p.Items, items)
		}
		if seed := fmt.Sprint(res.Parameters.Get("seed")); seed == "0" || seed == "<nil>" {
			t.Errorf("%s: the seed drawn is not in the parameters: %v", c.workload, res.Parameters.Get("seed"))
		}
	}
	// Delete stops when the prepared objects are gone, whatever --ops says.
	res := runWorkload(t, env, url, s, "--workload", "delete", "--objects", "20", "--obj-size", "1K", "--ops", "500")
	if p := phase(t, res, "delete"); p.Ops != 20 {
		t.Errorf("delete of 20 objects with --ops 500: %d operations", p.Ops)
	}
}

// Under a fixed seed the mix's realised proportions are within 4 points
// of its weights (about 3.5 standard deviations at 2000 operations), and
// the rows of the operations add up to the total.
func TestWorkloadMixProportions(t *testing.T) {
	m, env, bucket, s := workloadBucket(t)
	res := runWorkload(t, env, m.URL(bucket), s, "--workload", "mixed", "--objects", "60", "--obj-size", "4K",
		"--ops", "2000", "--seed", "42", "--mix", "get=50,stat=20,put=20,delete=10")
	total := phase(t, res, "mixed")
	want := map[string]float64{"get": 50, "stat": 20, "put": 20, "delete": 10}
	var sum int64
	for op, w := range want {
		p := phase(t, res, "mixed-"+op)
		sum += p.Ops
		share := 100 * float64(p.Ops) / float64(total.Ops)
		if math.Abs(share-w) > 4 {
			t.Errorf("%s: %.1f%% of operations, want %g%% ± 4", op, share, w)
		}
		if !strings.Contains(p.LatencyOf, fmt.Sprintf("%.1f%% of operations", share)) {
			t.Errorf("%s: the row says %q, not its share %.1f%%", op, p.LatencyOf, share)
		}
	}
	if sum != total.Ops || total.Ops != 2000 {
		t.Errorf("operation rows add up to %d, total %d", sum, total.Ops)
	}
}

// Every read records its time to first byte, which is never later than
// the end of the request: every percentile of TTFB is at most the same
// percentile of latency.
func TestWorkloadTTFB(t *testing.T) {
	m, env, bucket, s := workloadBucket(t)
	res := runWorkload(t, env, m.URL(bucket), s, "--workload", "get", "--objects", "20", "--obj-size", "256K", "--ops", "300")
	p := phase(t, res, "get")
	if p.TTFB == nil || p.TTFB.Count != p.Ops {
		t.Fatalf("get: %d operations, time to first byte %+v", p.Ops, p.TTFB)
	}
	l, f := p.Latency, *p.TTFB
	for _, q := range [][2]float64{{f.Min, l.Min}, {f.P50, l.P50}, {f.P90, l.P90}, {f.P99, l.P99}, {f.Max, l.Max}} {
		if q[0] > q[1] {
			t.Errorf("time to first byte %v above latency %v", q[0], q[1])
		}
	}
	if p.TTFBHistogram == "" {
		t.Errorf("no TTFB histogram in the JSON result")
	}
}

// Range reads move exactly --range bytes each; a range larger than the
// smallest object is refused.
func TestWorkloadRange(t *testing.T) {
	m, env, bucket, s := workloadBucket(t)
	url := m.URL(bucket)
	res := runWorkload(t, env, url, s, "--workload", "get", "--objects", "10", "--obj-size-dist", "log2:64K-1M", "--range", "12K", "--ops", "200")
	p := phase(t, res, "get")
	if p.Ops != 200 || p.Bytes != 200*12*units.KiB {
		t.Errorf("200 ranges of 12 KiB: %d operations, %d bytes", p.Ops, p.Bytes)
	}
	r := fsbench(t, env, "objbench", "--storage", "minio", url, "--workload", "get", "--obj-size", "8K", "--range", "16K")
	if r.Code != 2 || !strings.Contains(r.Stderr, "larger than the smallest object") {
		t.Errorf("range above the object size: exit %d, %s", r.Code, r.Stderr)
	}
}

// Sizes drawn from a distribution fall in its classes: every class row
// holds objects of its own sizes, and the rows add up to the total.
func TestWorkloadSizeClasses(t *testing.T) {
	m, env, bucket, s := workloadBucket(t)
	url := m.URL(bucket)
	res := runWorkload(t, env, url, s, "--workload", "put", "--obj-size-dist", "log2:1K-64K", "--ops", "300")
	total := phase(t, res, "put")
	var ops, bytes int64
	for k := 10; k < 16; k++ {
		lo, hi := int64(1)<<k, int64(1)<<(k+1)
		name := "put-" + strings.ToLower(compactSize(lo)+"-"+compactSize(hi))
		p := phase(t, res, name)
		ops, bytes = ops+p.Ops, bytes+p.Bytes
		if p.Ops == 0 || p.Bytes < p.Ops*lo || p.Bytes >= p.Ops*hi {
			t.Errorf("%s: %d objects of %d bytes in all", name, p.Ops, p.Bytes)
		}
	}
	if ops != total.Ops || bytes != total.Bytes || total.Ops != 300 {
		t.Errorf("classes hold %d objects and %d bytes; the total %d and %d", ops, bytes, total.Ops, total.Bytes)
	}
	// Sizes and picks are random: of 400 objects and 1,000 stats, the 4 KiB
	// share (75%) spreads by 2.6 points, and falling to half is nearly ten such
	// spreads away (with 40 and 100 it was 3, one run in 400).
	res = runWorkload(t, env, url, s, "--workload", "stat", "--objects", "400", "--obj-size-dist", "4K:3,32K:1", "--ops", "1000")
	small, big := phase(t, res, "stat-4kib"), phase(t, res, "stat-32kib")
	if small.Ops+big.Ops != 1000 || small.Ops <= big.Ops {
		t.Errorf("stat of 4 KiB (weight 3) and 32 KiB (weight 1) objects: %d and %d", small.Ops, big.Ops)
	}
}

// --autoterm ends a steady phase before --duration and says so.
func TestWorkloadAutoterm(t *testing.T) {
	m, env, bucket, s := workloadBucket(t)
	r := fsbench(t, env, "objbench", "--storage", "minio", m.URL(bucket), "--workload", "stat", "--objects", "10", "--obj-size", "1K",
		"--duration", "60s", "--interval", "200ms", "--autoterm", "--autoterm-dur", "2s", "--autoterm-pct", "50", "--rate", "200", "-p", "2")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	if !strings.Contains(r.Stderr, "autoterm ended stat objects after") || !strings.Contains(r.Stdout, "Ended by autoterm after") {
		t.Errorf("no word of autoterm ending the phase:\n%s\n%s", r.Stderr, r.Stdout)
	}
	checkPrecious(t, s)
}

// --batch deletes the prepared objects N a request: the operations are
// the requests, the row counts objects, and every object goes.
func TestWorkloadDeleteBatch(t *testing.T) {
	m, env, bucket, s := workloadBucket(t)
	res := runWorkload(t, env, m.URL(bucket), s, "--workload", "delete", "--objects", "30", "--obj-size", "1K", "--batch", "7")
	p := phase(t, res, "delete")
	if p.Ops != 5 || p.Items != 30 || p.Value.Unit != "objects/s" || p.Value.Value != p.ItemsPerSec {
		t.Errorf("30 objects 7 a request: %d requests, %d objects, value %v; want 5, 30, objects/s", p.Ops, p.Items, p.Value)
	}
	// runWorkload found only the user's object left.

	// --ops counts requests.
	res = runWorkload(t, env, m.URL(bucket), s, "--workload", "delete", "--objects", "30", "--obj-size", "1K", "--batch", "7", "--ops", "2")
	if p := phase(t, res, "delete"); p.Ops != 2 || p.Items != 14 {
		t.Errorf("--batch 7 --ops 2: %d requests, %d objects; want 2 and 14", p.Ops, p.Items)
	}
}

// A store without multi-object deletes has the workload named as not
// supported under the table, as a capability it lacks is everywhere in
// objbench, and a warning naming --batch, before anything is prepared.
func TestWorkloadDeleteBatchUnsupported(t *testing.T) {
	dir := t.TempDir()
	r := fsbench(t, nil, "objbench", "--storage", "file", dir, "--workload", "delete", "--objects", "5", "--batch", "2")
	if r.Code != 0 || !strings.Contains(r.Stderr, "--batch: multi-object delete: not supported") || !strings.Contains(r.Stdout, "Not supported by this storage, so not measured: ") {
		t.Errorf("exit %d\nstdout: %s\nstderr: %s\nwant exit 0, the workload named as not supported and a warning naming --batch", r.Code, r.Stdout, r.Stderr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the directory holds %d entries after the refused run", len(ents))
	}
}

// Bad input is one line and exit code 2.
func TestWorkloadBadInput(t *testing.T) {
	m, env, bucket, _ := workloadBucket(t)
	url := m.URL(bucket)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--workload", "mixed", "--mix", "get=0,put=0"}, "add up to 0"},
		{[]string{"--workload", "mixed", "--mix", "get=1,copy=1"}, "unknown operation"},
		{[]string{"--workload", "put", "--obj-size-dist", "log2:64M-1K"}, "lower bound must be below"},
		{[]string{"--workload", "put", "--obj-size-dist", "4K:50,1M"}, "want SIZE:WEIGHT"},
		{[]string{"--workload", "get", "--obj-size", "4K", "--range", "8K"}, "larger than the smallest object"},
		{[]string{"--workload", "gett"}, "unknown workload"},
		{[]string{"--workload", "get", "--autoterm"}, "needs --duration"},
		{[]string{"--objects", "5"}, "goes with --workload"},
		{[]string{"--workload", "delete", "--batch", "1001"}, "--batch must be between 1 and 1000"},
		{[]string{"--workload", "delete", "--batch", "-1"}, "--batch must be between 1 and 1000"},
		{[]string{"--workload", "get", "--batch", "10"}, "--batch applies to the delete workload"},
		{[]string{"--batch", "10"}, "goes with --workload"},
	} {
		r := fsbench(t, env, append([]string{"objbench", "--storage", "minio", url}, c.args...)...)
		msg := strings.TrimSpace(r.Stderr)
		if r.Code != 2 || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("%v: exit %d, %q; want exit 2 and one line with %q", c.args, r.Code, msg, c.want)
		}
	}
}
