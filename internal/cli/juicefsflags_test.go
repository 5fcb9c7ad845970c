package cli

import (
	"context"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
)

// juicefsBytes is juicefs 1.4.1's reading of a size flag
// (pkg/utils.ParseBytesStr), written out again as the oracle of the tests
// below: a trailing letter is the unit, else unit is; the number is a
// float, truncated to whole bytes.
func juicefsBytes(t *testing.T, s string, unit byte) int64 {
	t.Helper()
	if c := s[len(s)-1]; c < '0' || c > '9' {
		unit, s = c, s[:len(s)-1]
	}
	shift := map[byte]int{'B': 0, 'k': 10, 'K': 10, 'm': 20, 'M': 20, 'g': 30, 'G': 30, 't': 40, 'T': 40}[unit]
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("juicefs refuses %q", s)
	}
	return int64(v * float64(int64(1)<<shift))
}

// Every flag of juicefs bench (1.4.1: cmd/bench.go) means here what it
// means there, a bare size in juicefs's unit.
func TestJuicefsBenchFlags(t *testing.T) {
	for _, c := range []struct {
		flag, value string
		unit        byte // juicefs's unit of a bare number; 0: not a size
		got         func(*BenchOptions) int64
	}{
		{"--block-size", "4", 'M', func(o *BenchOptions) int64 { return o.BlockSize }},
		{"--block-size", "0.5", 'M', func(o *BenchOptions) int64 { return o.BlockSize }},
		{"--block-size", "4K", 'M', func(o *BenchOptions) int64 { return o.BlockSize }},
		{"--block-size", "4M", 'M', func(o *BenchOptions) int64 { return o.BlockSize }},
		{"--big-file-size", "64", 'M', func(o *BenchOptions) int64 { return o.BigFileSize }},
		{"--big-file-size", "2G", 'M', func(o *BenchOptions) int64 { return o.BigFileSize }},
		{"--big-file-size", "0", 'M', func(o *BenchOptions) int64 { return o.BigFileSize }},
		{"--small-file-size", "64", 'K', func(o *BenchOptions) int64 { return o.SmallFileSize }},
		{"--small-file-size", "1M", 'K', func(o *BenchOptions) int64 { return o.SmallFileSize }},
		{"--small-file-size", "4096B", 'K', func(o *BenchOptions) int64 { return o.SmallFileSize }},
		{"--small-file-count", "7", 0, func(o *BenchOptions) int64 { return int64(o.SmallFileCount) }},
		{"--threads", "3", 0, func(o *BenchOptions) int64 { return int64(o.Threads) }},
		{"-p", "3", 0, func(o *BenchOptions) int64 { return int64(o.Threads) }},
	} {
		o, code, msg := parseBench(t, nil, "/x", c.flag, c.value)
		if code != 0 {
			t.Errorf("bench %s %s: exit %d: %s", c.flag, c.value, code, msg)
			continue
		}
		want, _ := strconv.ParseInt(c.value, 10, 64)
		if c.unit != 0 {
			want = juicefsBytes(t, c.value, c.unit)
		}
		if got := c.got(o); got != want {
			t.Errorf("bench %s %s = %d, want %d as juicefs bench", c.flag, c.value, got, want)
		}
	}
}

// Every flag of juicefs objbench (1.4.1: cmd/objbench.go) means here what
// it means there.
func TestJuicefsObjbenchFlags(t *testing.T) {
	sizes := []struct {
		flag, value string
		unit        byte
		got         func(*ObjbenchOptions) int64
	}{
		{"--block-size", "4", 'K', func(o *ObjbenchOptions) int64 { return o.BlockSize }},
		{"--block-size", "4096", 'K', func(o *ObjbenchOptions) int64 { return o.BlockSize }},
		{"--block-size", "1M", 'K', func(o *ObjbenchOptions) int64 { return o.BlockSize }},
		{"--big-object-size", "1024", 'M', func(o *ObjbenchOptions) int64 { return o.BigObjectSize }},
		{"--big-object-size", "256M", 'M', func(o *ObjbenchOptions) int64 { return o.BigObjectSize }},
		{"--small-object-size", "64", 'K', func(o *ObjbenchOptions) int64 { return o.SmallObjectSize }},
		{"--small-object-size", "1M", 'K', func(o *ObjbenchOptions) int64 { return o.SmallObjectSize }},
	}
	for _, c := range sizes {
		o, code, msg := parseObjbench(t, nil, "/data", c.flag, c.value)
		if code != 0 {
			t.Errorf("objbench %s %s: exit %d: %s", c.flag, c.value, code, msg)
			continue
		}
		if got, want := c.got(o), juicefsBytes(t, c.value, c.unit); got != want {
			t.Errorf("objbench %s %s = %d, want %d as juicefs objbench", c.flag, c.value, got, want)
		}
	}
	o, code, msg := parseObjbench(t, nil, "/data", "--storage", "file", "--small-objects", "9", "--skip-functional-tests",
		"-p", "6", "--sc", "IA", "--shards", "1")
	if code != 0 || o.Storage != "file" || o.SmallObjects != 9 || !o.SkipFunctional || o.Threads != 6 || o.Object.StorageClass != "IA" {
		t.Errorf("exit %d (%s), options %+v", code, msg, o.Options)
	}
	o, code, msg = parseObjbench(t, nil, "http://127.0.0.1:9/b", "--storage", "minio", "--access-key", "AK", "--secret-key", "SK",
		"--session-token", "TK", "--threads", "2", "--storage-class", "STANDARD_IA")
	if code != 0 || o.Object.AccessKey != "AK" || o.Object.SecretKey.Reveal() != "SK" || o.Object.SessionToken.Reveal() != "TK" ||
		o.Threads != 2 || o.Object.StorageClass != "STANDARD_IA" {
		t.Errorf("credentials: exit %d (%s), options %+v", code, msg, o.Object)
	}
	_, code, msg = parseObjbench(t, nil, "/data", "--shards", "4")
	if code != ExitUsage || !strings.Contains(msg, "--shards 4: juicefs objbench's spreading of objects over 4 buckets is not done here") {
		t.Errorf("--shards 4: exit %d, %q; want a refusal naming it", code, msg)
	}
}

// JuiceFS's global flags, which a juicefs bench or objbench line may hold
// anywhere: taken, each named on stderr as changing nothing.
func TestJuicefsGlobalFlags(t *testing.T) {
	for _, cmd := range []string{"bench", "objbench"} {
		for _, args := range [][]string{{"--debug"}, {"--trace"}, {"--log-level", "debug"}, {"--log-id", "x1"},
			{"--no-agent"}, {"--pyroscope", "http://p:4040"}} {
			app, _, errb := testApp(nil)
			c := newBenchCmdWith(app, func(context.Context, *BenchOptions) error { return nil })
			if cmd == "objbench" {
				c = newObjbenchCmdWith(app, func(context.Context, *ObjbenchOptions) error { return nil })
			}
			code, msg := runParse(app, errb, c, append([]string{"/x"}, args...))
			want := "Warning: " + args[0] + " is juicefs's "
			if code != 0 || !strings.Contains(msg, want) || !strings.HasSuffix(msg, ": ignored\n") || strings.Count(msg, "\n") != 1 {
				t.Errorf("%s %v: exit %d, stderr %q; want one line %q...: ignored", cmd, args, code, msg, want)
			}
		}
	}
	for _, args := range []string{"-v", "--verbose", "-q", "--quiet", "--no-color"} {
		if _, code, msg := parseBench(t, nil, "/x", args); code != 0 {
			t.Errorf("bench %s: exit %d: %s", args, code, msg)
		}
	}
}

// fsbench's own size flags refuse a bare number other than 0, showing the
// value with units; 0 and sizes with a unit are taken.
func TestOwnSizeFlagsRefuseBareNumbers(t *testing.T) {
	for _, c := range []struct{ cmd, flag string }{
		{"bench", "--xfer-size"}, {"bench", "--file-size"},
		{"objbench", "--obj-size"}, {"objbench", "--part-size"}, {"objbench", "--range"},
		{"checkpoint", "--block-size"}, {"checkpoint", "--size"},
		{"train", "--sample-size"}, {"train", "--sample-size-stdev"},
		{"io500", "--ior-easy-xfer"},
	} {
		args := []string{c.cmd, t.TempDir(), c.flag, "4"}
		switch {
		case c.flag == "--part-size":
			args = append(args, "--workload", "multipart")
		case c.cmd == "objbench":
			args = append(args, "--workload", "put")
		}
		app, _, errb := testApp(nil)
		_, err := execute(t.Context(), NewRoot(app), args)
		if err != nil {
			errb.WriteString(err.Error())
		}
		want := c.flag + " 4: a bare number is ambiguous; write 4K, 4M or 4B"
		if code := ExitCode(err); code != ExitUsage || !strings.HasPrefix(errb.String(), want) {
			t.Errorf("%s %s 4: exit %d, %q; want exit 2 and %q", c.cmd, c.flag, code, errb.String(), want)
		}
	}
	o, code, msg := parseBench(t, nil, "/x", "--xfer-size", "4K", "--file-size", "1M")
	if code != 0 || o.Job.Job == nil {
		t.Fatalf("--xfer-size 4K --file-size 1M: exit %d: %s", code, msg)
	}
}

// juicefs bench's header, written out from its bench.go: the sizes as
// given; each file is written in whole blocks, its size rounded up.
func juicefsBenchBytes(block, size int64) int64 {
	if size <= block {
		return size
	}
	return (size + block - 1) / block * block
}

// The binary, on a directory, with bare numbers: the header line shows
// the sizes in juicefs's units, and the files written are the bytes
// juicefs bench writes for the same line.
func TestJuicefsBenchBinaryBareNumbers(t *testing.T) {
	dir := t.TempDir()
	resFile := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := runFsbenchEnv(t, []string{"NO_COLOR=1"}, "bench", dir, "--big-file-size", "5", "--block-size", "2",
		"--small-file-size", "1536", "--small-file-count", "3", "-p", "2", "--result-file", resFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	block, big, small := juicefsBytes(t, "2", 'M'), juicefsBytes(t, "5", 'M'), juicefsBytes(t, "1536", 'K')
	want := "BlockSize: " + units.FormatBytes(block) + ", BigFileSize: " + units.FormatBytes(big) +
		", SmallFileSize: " + units.FormatBytes(small) + ", SmallFileCount: 3, NumThreads: 2"
	if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).MatchString(stdout) {
		t.Errorf("header line: want %q in\n%s", want, stdout)
	}
	res, err := readResult(resFile)
	if err != nil {
		t.Fatal(err)
	}
	for name, bytes := range map[string]int64{
		"write-big": 2 * juicefsBenchBytes(block, big), "read-big": 2 * juicefsBenchBytes(block, big),
		"write-small": 2 * 3 * juicefsBenchBytes(block, small), "read-small": 2 * 3 * juicefsBenchBytes(block, small),
	} {
		if p := res.FindPhase(name); p == nil || p.Bytes != bytes {
			t.Errorf("%s: %s, want %d bytes as juicefs bench", name, phaseBytes(p), bytes)
		}
	}
}

// The same for objbench on a directory (--storage file): the big object
// goes up and down in whole blocks, as juicefs objbench's.
func TestJuicefsObjbenchBinaryBareNumbers(t *testing.T) {
	dir := t.TempDir()
	resFile := filepath.Join(t.TempDir(), "r.json")
	stdout, stderr, code := runFsbenchEnv(t, []string{"NO_COLOR=1"}, "objbench", dir, "--big-object-size", "3", "--block-size", "2048",
		"--small-object-size", "4", "--small-objects", "4", "-p", "2", "--skip-functional-tests", "--result-file", resFile)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	block, big, small := juicefsBytes(t, "2048", 'K'), juicefsBytes(t, "3", 'M'), juicefsBytes(t, "4", 'K')
	want := "BlockSize: " + units.FormatBytes(block) + ", BigObjectSize: " + units.FormatBytes(big) +
		", SmallObjectSize: " + units.FormatBytes(small) + ", SmallObjects: 4, NumThreads: 2"
	if !strings.Contains(stdout, want) {
		t.Errorf("header line: want %q in\n%s", want, stdout)
	}
	res, err := readResult(resFile)
	if err != nil {
		t.Fatal(err)
	}
	blocks := (big + block - 1) / block // juicefs: bCount = ceil(fsize/bSize) puts of bSize
	for name, bytes := range map[string]int64{"upload": blocks * block, "download": blocks * block, "put-small": 4 * small, "get-small": 4 * small} {
		if p := res.FindPhase(name); p == nil || p.Bytes != bytes {
			t.Errorf("%s: %s, want %d bytes as juicefs objbench", name, phaseBytes(p), bytes)
		}
	}
}

// phaseBytes says how many bytes phase p moved, or that it is missing.
func phaseBytes(p *report.PhaseResult) string {
	if p == nil {
		return "no such phase"
	}
	return strconv.FormatInt(p.Bytes, 10) + " bytes"
}
