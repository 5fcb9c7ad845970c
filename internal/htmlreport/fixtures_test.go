package htmlreport

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/metrics"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/verdict"
)

// The result files under testdata/report are made by the code below, so
// that every histogram in them is a real encoding of recorded samples.
// TestFixtures checks that the files are what it makes; go test -run
// TestFixtures ./internal/htmlreport -update rewrites them.

// The secrets below must never reach a page (see TestNoSecret).
const (
	secretPassword = "Sup3rSecretPw"
	secretKey      = "S3cretKeyValue"
	secretToken    = "T0kenValue"
)

func fixtureDir() string { return filepath.Join(testenv.RepoRoot(), "testdata", "report") }

// fixtures returns every fixture by file name.
func fixtures(t *testing.T) map[string]*report.Result {
	return map[string]*report.Result{
		"bench.json":    benchFixture(t, 1, 1.0),
		"bench-b.json":  benchFixture(t, 2, 0.8),
		"objbench.json": objbenchFixture(t),
		"job.json":      jobFixture(t),
		"hosts.json":    hostsFixture(t),
		"v1.json":       v1Fixture(t),
		"repeat.json":   repeatFixture(t, 7, [4]float64{1, 1, 1, 1}),
		// Write big file clearly slower, read big file within the runs'
		// noise, stat a little faster.
		"repeat-b.json": repeatFixture(t, 8, [4]float64{0.78, 0.98, 1, 1.03}),
	}
}

// sampler records lognormal latencies around a median, with a slow tail.
type sampler struct{ rng *rand.Rand }

func newSampler(seed uint64) *sampler { return &sampler{rand.New(rand.NewPCG(seed, 7))} }

func (s *sampler) hist(n int, median time.Duration) *metrics.Histogram {
	h := metrics.NewHistogram()
	for i := 0; i < n; i++ {
		v := float64(median) * math.Exp(0.45*s.rng.NormFloat64())
		if s.rng.IntN(100) == 0 {
			v *= 8 // the tail: one in a hundred is slow
		}
		h.Record(time.Duration(v))
	}
	return h
}

// phase fills a phase from counts and a latency histogram.
func phase(t *testing.T, name, title, of string, h *metrics.Histogram, items, bytes int64, secs float64, unit report.Unit) report.PhaseResult {
	t.Helper()
	p := report.PhaseResult{Name: name, Title: title, LatencyOf: of, Ops: h.Count(), Items: items, Bytes: bytes, Seconds: secs}
	p.SetRates()
	switch unit {
	case "MiB/s":
		p.Value = report.Measure{Value: p.BytesPerSec / (1 << 20), Unit: unit, Grade: report.Good}
	case "files/s", "objects/s":
		p.Value = report.Measure{Value: p.ItemsPerSec, Unit: unit, Grade: report.Fair}
	default:
		p.Value = report.Measure{Value: p.OpsPerSec, Unit: unit}
	}
	p.Cost = report.Measure{Value: secs * 1000 / float64(max(items, 1)), Unit: "ms/file"}
	if err := report.SetLatency(&p, h); err != nil {
		t.Fatal(err)
	}
	return p
}

func baseResult(command, cmdline string, at time.Time) *report.Result {
	return &report.Result{
		SchemaVersion: report.SchemaVersion, Tool: "fsbench", Version: "v0.9.0", Command: command,
		CommandLine: cmdline, StartedAt: at,
		Host:  report.Host{Name: "client-1", OS: "linux", Arch: "amd64", Kernel: "6.1.0-18-amd64", CPUs: 8},
		Usage: report.Usage{Seconds: 12.5, CPUPercent: 61.5, PeakRSSBytes: 48 << 20},
	}
}

func benchFixture(t *testing.T, seed uint64, speed float64) *report.Result {
	s := newSampler(seed)
	at := time.Date(2026, 11, 20, 9, 0, int(seed), 0, time.UTC)
	r := baseResult("bench", "fsbench bench /mnt/jfs -p 4 --big-file-size 1G --expect write-big>=200MiB/s", at)
	r.Target = report.Target{Path: "/mnt/jfs", FSType: "fuse.juicefs", MountPoint: "/mnt/jfs",
		MountSource: "JuiceFS:myjfs", MountOptions: "rw,relatime,user_id=0,group_id=0,default_permissions,allow_other"}
	r.Parameters = report.Params{
		{Key: "block_size", Label: "block size", Value: 1 << 20, Display: "1 MiB"},
		{Key: "big_file_size", Label: "big file size", Value: 1 << 30, Display: "1 GiB"},
		{Key: "threads", Label: "threads", Value: 4, Display: "4"},
	}
	r.CacheDrop = "drop_caches"
	d := func(v float64) time.Duration { return time.Duration(v / speed) }
	r.Phases = []report.PhaseResult{
		phase(t, "write-big", "Write big file", "1 MiB write", s.hist(4096, d(4e6)), 4, 4<<30, 4.4/speed, "MiB/s"),
		phase(t, "read-big", "Read big file", "1 MiB read", s.hist(4096, d(3e6)), 4, 4<<30, 3.1/speed, "MiB/s"),
		phase(t, "write-small", "Write small file", "128 KiB file (open to close)", s.hist(400, d(9e6)), 400, 400<<17, 0.95/speed, "files/s"),
		phase(t, "read-small", "Read small file", "128 KiB file (open to close)", s.hist(400, d(2e6)), 400, 400<<17, 0.21/speed, "files/s"),
		phase(t, "stat", "Stat file", "stat", s.hist(400, d(2e5)), 400, 0, 0.02/speed, "files/s"),
	}
	cpu, mem := 85.5, int64(310<<20)
	r.Internal = &report.Internal{Source: "JuiceFS", ClientCPUPercent: &cpu, ClientMemoryBytes: &mem, Rows: []report.InternalRow{
		{Name: "FUSE operation", Count: 71234, AvgMs: 0.61, Grade: report.Good},
		{Name: "Update meta", Count: 1630, AvgMs: 2.1, Grade: report.Fair},
		{Name: "Put object", Count: 1024, AvgMs: 45.3, Grade: report.Poor},
		{Name: "Get object", Unknown: true},
	}}
	wb := r.Phases[0].Value.Value
	r.Expectations = []report.Expectation{{Expr: "write-big>=200MiB/s", Metric: "write-big", Op: ">=", Want: 200, Unit: "MiB/s",
		Measured: math.Round(wb*100) / 100, Pass: wb >= 200}}
	if !r.Expectations[0].Pass {
		r.Expectations[0].Reason = "below 200 MiB/s"
	}
	return r
}

func objbenchFixture(t *testing.T) *report.Result {
	s := newSampler(3)
	at := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	// Deliberately unredacted, as a careless producer could write them.
	r := baseResult("objbench", "fsbench objbench --storage minio http://bench:"+secretPassword+"@127.0.0.1:9000/bench --secret-key "+secretKey+" --session-token="+secretToken, at)
	r.Target = report.Target{URL: "http://bench:" + secretPassword + "@127.0.0.1:9000/bench", Storage: "minio"}
	r.Parameters = report.Params{{Key: "block_size", Label: "block size", Value: 4 << 20, Display: "4 MiB"}, {Key: "threads", Label: "threads", Value: 4, Display: "4"}}
	get := phase(t, "get-big", "Download big objects", "4 MiB get", s.hist(256, 30e6), 256, 1<<30, 2.5, "MiB/s")
	if err := report.SetTTFB(&get, s.hist(256, 4e6)); err != nil {
		t.Fatal(err)
	}
	put := phase(t, "put-big", "Upload big objects", "4 MiB put", s.hist(256, 60e6), 256, 1<<30, 4.5, "MiB/s")
	put.Errors, put.ErrorSamples = 2, []string{"put fsbench-objbench/big/17: connection reset by peer"}
	r.Phases = []report.PhaseResult{put, get,
		phase(t, "put-small", "Put small objects", "128 KiB put", s.hist(100, 9e6), 100, 100<<17, 0.3, "objects/s"),
		phase(t, "head", "Head objects", "head", s.hist(100, 1e6), 100, 0, 0.05, "objects/s"),
		{Name: "chmod", Title: "Change permissions", Value: report.Measure{Unit: report.CheckNotSupport}, Cost: report.Measure{Unit: report.CheckNotSupport}},
	}
	r.Checks = []report.Check{
		{Category: "basic", Name: "create a bucket", Status: report.CheckPass},
		{Category: "basic", Name: "put an object", Status: report.CheckPass},
		{Category: "basic", Name: "list objects", Status: report.CheckFailed, Reason: "listed 3 objects, want 4"},
		{Category: "sync", Name: "special characters in keys", Status: report.CheckWarning, Reason: "keys with a trailing space are rewritten"},
		{Category: "sync", Name: "change owner", Status: report.CheckNotSupport},
	}
	r.Warnings = []string{"put-big: 2 operations failed (first: connection reset by peer)"}
	return r
}

func jobFixture(t *testing.T) *report.Result {
	s := newSampler(4)
	at := time.Date(2026, 11, 20, 11, 0, 0, 0, time.UTC)
	r := baseResult("bench", "fsbench bench /data -f examples/fio-jobs.yaml --interval 1s", at)
	r.Target = report.Target{Path: "/data", FSType: "xfs", MountPoint: "/data", MountSource: "/dev/nvme0n1p1", MountOptions: "rw,noatime"}
	r.Parameters = report.Params{{Key: "workload", Label: "workload", Value: "examples/fio-jobs.yaml", Display: "examples/fio-jobs.yaml"}}
	read := phase(t, "seqread", "Sequential read", "1 MiB read", s.hist(3000, 2e6), 4, 3000<<20, 6, "MiB/s")
	rnd := phase(t, "randread-paced", "Random read at 2000 ops/s", "4 KiB read", s.hist(12000, 150e3), 4, 12000<<12, 6, "ops/s")
	if err := report.SetService(&rnd, s.hist(12000, 110e3)); err != nil {
		t.Fatal(err)
	}
	read.Series = series(s, 6, 500, 1<<20, 2e6)
	rnd.Series = series(s, 6, 2000, 4<<10, 150e3)
	r.Phases = []report.PhaseResult{read, rnd}
	return r
}

// series makes n one-second samples around rate operations of size bytes.
func series(s *sampler, n int, rate float64, size int64, median float64) []report.Sample {
	var out []report.Sample
	for i := 0; i < n; i++ {
		ops := int64(rate * (0.8 + 0.4*s.rng.Float64()))
		h := s.hist(int(ops), time.Duration(median*(0.8+0.4*s.rng.Float64())))
		out = append(out, report.Sample{Start: float64(i), Seconds: 1, Ops: ops, Bytes: ops * size,
			OpsPerSec: float64(ops), BytesPerSec: float64(ops * size), Latency: h.Summary()})
	}
	return out
}

func hostsFixture(t *testing.T) *report.Result {
	s := newSampler(5)
	at := time.Date(2026, 11, 20, 12, 0, 0, 0, time.UTC)
	r := baseResult("bench", "fsbench bench /mnt/jfs -p 4 --hosts 10.1.0.11:7781,10.1.0.12:7781", at)
	r.Target = report.Target{Path: "/mnt/jfs", FSType: "fuse.juicefs", MountPoint: "/mnt/jfs", MountSource: "JuiceFS:myjfs"}
	r.Hosts = []report.AgentHost{
		{Address: "10.1.0.11:7781", Host: report.Host{Name: "node-a", OS: "linux", Arch: "amd64", CPUs: 16}, Version: "v0.9.0"},
		{Address: "10.1.0.12:7781", Host: report.Host{Name: "node-b", OS: "linux", Arch: "arm64", CPUs: 8}, Version: "v0.9.0"},
	}
	var parts []report.PhaseResult
	var hosts []report.HostPhase
	for i, a := range r.Hosts {
		secs := 4.0 + 1.5*float64(i)
		p := phase(t, "write-big", "Write big file", "1 MiB write", s.hist(4096, time.Duration(4e6*(1+0.5*float64(i)))), 4, 4<<30, secs, "MiB/s")
		parts = append(parts, p)
		hosts = append(hosts, report.HostPhase{Address: a.Address, Ops: p.Ops, Items: p.Items, Bytes: p.Bytes, Seconds: secs,
			StartOffset: 0.004 * float64(i), BytesPerSec: p.BytesPerSec, OpsPerSec: p.OpsPerSec, Latency: p.Latency, Histogram: p.Histogram})
	}
	m, err := report.MergePhases(parts)
	if err != nil {
		t.Fatal(err)
	}
	m.Value = report.Measure{Value: m.BytesPerSec / (1 << 20), Unit: "MiB/s"}
	m.Hosts, m.StartSkew = hosts, 0.004
	m.Stonewall = &report.Stonewall{Seconds: 4, Ops: 7000, Bytes: 7000 << 20, BytesPerSec: float64(7000<<20) / 4, OpsPerSec: 1750}
	r.Phases = []report.PhaseResult{m}
	return r
}

// repeatFixture is a bench result repeated six times (--repeat 6): each
// run has its own figures, a few percent apart, and the summary is what
// verdict.SummarizeRuns makes of them. speed scales write-big, read-big,
// write-small and stat.
func repeatFixture(t *testing.T, seed uint64, speed [4]float64) *report.Result {
	s := newSampler(seed)
	at := time.Date(2026, 11, 21, 9, 0, int(seed), 0, time.UTC)
	r := baseResult("bench", "fsbench bench /mnt/jfs -p 4 --big-file-size 512M --repeat 6", at)
	r.Target = report.Target{Path: "/mnt/jfs", FSType: "fuse.juicefs", MountPoint: "/mnt/jfs", MountSource: "JuiceFS:myjfs"}
	r.Parameters = report.Params{
		{Key: "block_size", Label: "block size", Value: 1 << 20, Display: "1 MiB"},
		{Key: "big_file_size", Label: "big file size", Value: 512 << 20, Display: "512 MiB"},
		{Key: "threads", Label: "threads", Value: 4, Display: "4"},
	}
	r.CacheDrop = "drop_caches"
	for i := 0; i < 6; i++ {
		noise := func(k int) float64 { return speed[k] * (1 + 0.05*(s.rng.Float64()-0.5)) }
		d := func(v, f float64) time.Duration { return time.Duration(v / f) }
		w, rd, ws, st := noise(0), noise(1), noise(2), noise(3)
		r.Runs = append(r.Runs, report.Run{Index: i + 1, StartedAt: at.Add(time.Duration(i) * 9 * time.Second), Seconds: 8.5,
			Phases: []report.PhaseResult{
				phase(t, "write-big", "Write big file", "1 MiB write", s.hist(512, d(4e6, w)), 4, 2<<30, 2.2/w, "MiB/s"),
				phase(t, "read-big", "Read big file", "1 MiB read", s.hist(512, d(3e6, rd)), 4, 2<<30, 1.6/rd, "MiB/s"),
				phase(t, "write-small", "Write small file", "128 KiB file (open to close)", s.hist(100, d(9e6, ws)), 100, 100<<17, 0.24/ws, "files/s"),
				phase(t, "stat", "Stat file", "stat", s.hist(100, d(2e5, st)), 100, 0, 0.005/st, "files/s"),
			}})
	}
	if err := verdict.SummarizeRuns(r); err != nil {
		t.Fatal(err)
	}
	return r
}

// v1Fixture is a bench result as fsbench wrote it before histograms were
// kept: schema version 1, summaries only.
func v1Fixture(t *testing.T) *report.Result {
	r := benchFixture(t, 6, 1.1)
	r.SchemaVersion, r.Version, r.CommandLine = 1, "v0.3.0", ""
	r.Internal, r.Expectations = nil, nil
	for i := range r.Phases {
		r.Phases[i].Histogram = ""
	}
	return r
}

func encodeFixture(t *testing.T, r *report.Result) []byte {
	var b bytes.Buffer
	if err := report.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestFixtures(t *testing.T) {
	for name, r := range fixtures(t) {
		path := filepath.Join(fixtureDir(), name)
		got := encodeFixture(t, r)
		if *update {
			if err := os.MkdirAll(fixtureDir(), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run with -update to create it)", err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s is not what the generator makes (run with -update)", path)
		}
	}
}
