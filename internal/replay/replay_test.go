package replay

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
)

// sampleLog is a real JuiceFS access log: juicefs bench on a mount.
var sampleLog = filepath.Join("..", "..", "testdata", "juicefs", "accesslog-sample.txt")

// logCounts counts a JuiceFS log's successful operations per type and
// their bytes, and its failures, leaving out the virtual files (inodes
// from 0x7FFFFFFF00000000, or a .jfs name in the root): what a replay
// must reproduce, read with plain string handling.
func logCounts(t *testing.T, path string) (ops, bytes, failed map[string]int64) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ops, bytes, failed = map[string]int64{}, map[string]int64{}, map[string]int64{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		op := fields[3]
		args := strings.Split(strings.Trim(strings.SplitN(fields[4], ")", 2)[0], "("), ",")
		if ino, err := strconv.ParseUint(args[0], 10, 64); err == nil && ino >= 0x7FFFFFFF00000000 {
			continue
		}
		if args[0] == "1" && len(args) > 1 && strings.HasPrefix(args[1], ".jfs.") {
			continue
		}
		if !strings.Contains(sc.Text(), " - OK ") {
			failed[op]++
			continue
		}
		ops[op]++
		switch op {
		case "write":
			n, _ := strconv.ParseInt(args[1], 10, 64)
			bytes[op] += n
		case "read":
			n, _ := strconv.ParseInt(strings.TrimSuffix(fields[5], ""), 10, 64)
			bytes[op] += n
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ops, bytes, failed
}

func TestReplayJuiceFSSample(t *testing.T) {
	parent := t.TempDir()
	res := &report.Result{}
	if err := Run(context.Background(), Options{Log: sampleLog, Path: parent}, res); err != nil {
		t.Fatalf("replay: %v\n%+v", err, res.Phases)
	}
	ops, bytes, failed := logCounts(t, sampleLog)
	rp := res.Replay
	seen := map[string]bool{}
	for _, o := range rp.Ops {
		seen[o.Op] = true
		t.Logf("%-10s ops %4d/%4d bytes %8d/%8d failed %d/%d errors %d p50 %.0f/%.0f us", o.Op, o.Ops, o.Recorded.Ops, o.Bytes, o.Recorded.Bytes, o.Failed, o.Recorded.Failed, o.Errors, o.Latency.P50, o.Recorded.Latency.P50)
		if o.Ops != ops[o.Op] || o.Recorded.Ops != ops[o.Op] {
			t.Errorf("%s: replayed %d, recorded %d, the log has %d successful", o.Op, o.Ops, o.Recorded.Ops, ops[o.Op])
		}
		if o.Bytes != bytes[o.Op] || o.Recorded.Bytes != bytes[o.Op] {
			t.Errorf("%s: replayed %d bytes, recorded %d, the log has %d", o.Op, o.Bytes, o.Recorded.Bytes, bytes[o.Op])
		}
		if o.Failed != failed[o.Op] || o.Errors != 0 {
			t.Errorf("%s: %d failed as recorded (log: %d), %d differed", o.Op, o.Failed, failed[o.Op], o.Errors)
		}
	}
	for op := range ops {
		if !seen[op] {
			t.Errorf("%s: in the log, not replayed", op)
		}
	}
	if rp.Virtual == 0 || rp.Speedup <= 0 {
		t.Errorf("virtual %d, speedup %v", rp.Virtual, rp.Speedup)
	}
	left, _ := os.ReadDir(parent)
	if len(left) != 0 {
		t.Errorf("left behind in %s: %v", parent, left)
	}
	t.Log(report.ReplaySpeedLine(rp), res.Warnings)
}
