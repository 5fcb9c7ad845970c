package cluster_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/replay"
	"github.com/fsbench/fsbench/internal/report"
)

// replaySample is a real JuiceFS access log: juicefs bench on a mount,
// seven recorded threads.
var replaySample = filepath.Join("..", "..", "testdata", "juicefs", "accesslog-sample.txt")

// TestNetnsReplaySplit replays one JuiceFS log on three test hosts, each
// the threads of its share: the merged replay does every operation of
// the log as often as recorded, with the recorded bytes, none differing
// from the recording; every host replayed some of it; nothing is left.
func TestNetnsReplaySplit(t *testing.T) {
	_, agents, root := nsAgents(t, 3)
	out := coordinator(t, context.Background(), "replay", replaySample, root, "--hosts", hostsFlag(agents...), "-o", "json")
	r := resultOf(t, out)
	whole, err := replay.ReadLog(replaySample)
	if err != nil {
		t.Fatal(err)
	}
	checkMerged(t, r, whole, 1)
	if r.Replay.Streams < whole.SplitStreams() {
		t.Errorf("%d streams replayed, the log has %d", r.Replay.Streams, whole.SplitStreams())
	}
	all := r.FindPhase("replay")
	for _, h := range all.Hosts {
		if h.Ops == 0 {
			t.Errorf("host %s replayed nothing", h.Address)
		}
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// TestNetnsReplayLogs gives each of two test hosts its own log (the same
// recording, once plain and once compressed): the merged replay counts
// each operation twice as often as one log records it. An agent reads
// only the copies the job carries: the logs lie outside its --allow-root.
func TestNetnsReplayLogs(t *testing.T) {
	_, agents, root := nsAgents(t, 2)
	data, err := os.ReadFile(replaySample)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	plain, packed := filepath.Join(dir, "a.log"), filepath.Join(dir, "b.log.gz")
	if err := os.WriteFile(plain, data, 0o644); err != nil {
		t.Fatal(err)
	}
	gz, err := compress(data)
	if err != nil || os.WriteFile(packed, gz, 0o644) != nil {
		t.Fatal(err)
	}
	out := coordinator(t, context.Background(), "replay", plain, packed, root, "--hosts", hostsFlag(agents...), "-o", "json")
	r := resultOf(t, out)
	whole, err := replay.ReadLog(replaySample)
	if err != nil {
		t.Fatal(err)
	}
	checkMerged(t, r, whole, 2)
	if r.Replay.Log != plain+","+packed {
		t.Errorf("log %q", r.Replay.Log)
	}
	// The agents' copies of the logs are theirs: the result names the
	// coordinator's.
	if strings.Contains(out.Stdout, "fsbench-agent-") {
		t.Errorf("an agent's copy of a log named in the result:\n%s", out.Stdout)
	}
	text := coordinator(t, context.Background(), "replay", plain, packed, root, "--hosts", hostsFlag(agents...))
	if strings.Contains(text.Stdout+text.Stderr, "fsbench-agent-") || !strings.Contains(text.Stdout, plain) {
		t.Errorf("an agent's copy of a log named, or the log not:\n%s\n%s", text.Stdout, text.Stderr)
	}
	bad := coordinator(t, context.Background(), "replay", plain, root, root, "--hosts", hostsFlag(agents...))
	if bad.Code != 2 || !strings.Contains(bad.Stderr, "2 logs for 2 hosts") && !strings.Contains(bad.Stderr, "directory") {
		t.Errorf("a directory as a log: exit %d: %s", bad.Code, bad.Stderr)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// checkMerged checks a merged replay against n times the whole log.
func checkMerged(t *testing.T, r *report.Result, whole *replay.Trace, n int64) {
	t.Helper()
	if r.Replay == nil || len(r.Hosts) == 0 {
		t.Fatalf("no replay: %+v", r)
	}
	got := map[string]report.ReplayOp{}
	for _, o := range r.Replay.Ops {
		got[o.Op] = o
	}
	for _, c := range whole.Classes {
		o := got[c.Name]
		if o.Ops != n*c.Ops || o.Bytes != n*c.Bytes || o.Failed != n*c.Failed || o.Errors != 0 {
			t.Errorf("%s: replayed %d ops, %d bytes, %d failed, %d errors; the log has %d, %d, %d (x%d)",
				c.Name, o.Ops, o.Bytes, o.Failed, o.Errors, c.Ops, c.Bytes, c.Failed, n)
		}
		if o.Recorded.Ops != n*c.Ops || o.Recorded.Bytes != n*c.Bytes {
			t.Errorf("%s: recorded %d ops %d bytes, want %d, %d", c.Name, o.Recorded.Ops, o.Recorded.Bytes, n*c.Ops, n*c.Bytes)
		}
		if p := r.FindPhase("replay-" + c.Name); p == nil || p.Ops != o.Ops {
			t.Errorf("%s: row %+v", c.Name, p)
		}
	}
	if r.Replay.Speedup <= 0 || r.Replay.Lines != n*whole.Skipped.Lines {
		t.Errorf("speedup %v, lines %d", r.Replay.Speedup, r.Replay.Lines)
	}
}

func compress(data []byte) ([]byte, error) {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		return nil, err
	}
	err := zw.Close()
	return b.Bytes(), err
}
