package report

import (
	"bytes"
	"strings"
	"testing"
)

// checkpointSample is a checkpoint's result: a write whose ranks wrote
// their own shards on two hosts, and a read-back of the next rank's shard
// where one rank did not finish.
func checkpointSample() *Result {
	write := PhaseResult{Name: "write", Title: "Checkpoint write", Ops: 512, Items: 4, Bytes: 512 << 20, Seconds: 0.65,
		Value: Measure{787.69, "MiB/s", ""}, Cost: Measure{0.65, "s", ""}, LatencyOf: "1 MiB write", Latency: lat(494, 40900, 104000),
		Ranks: []RankPhase{
			{Rank: 0, Shard: 0, Host: "10.0.0.1:7781", Bytes: 128 << 20, Seconds: 0.64, BytesPerSec: 200 << 20},
			{Rank: 1, Shard: 1, Host: "10.0.0.2:7781", Bytes: 128 << 20, Seconds: 0.43, BytesPerSec: 297.5 * (1 << 20)},
		}}
	read := PhaseResult{Name: "read", Title: "Checkpoint read-back", Incomplete: true, Ops: 300, Items: 1, Bytes: 300 << 20, Seconds: 0.35,
		Value: Measure{857.14, "MiB/s", ""}, Cost: Measure{0.35, "s", ""}, LatencyOf: "1 MiB read", Latency: lat(222, 26700, 80700),
		Ranks: []RankPhase{
			{Rank: 0, Shard: 1, Bytes: 128 << 20, Seconds: 0.3, BytesPerSec: 426.67 * (1 << 20)},
			{Rank: 1, Shard: 0, Bytes: 172 << 20, Seconds: 0.35, BytesPerSec: 491.43 * (1 << 20), Errors: 1, Incomplete: true},
		}}
	return &Result{SchemaVersion: SchemaVersion, Command: "checkpoint", Phases: []PhaseResult{write, read},
		Parameters: Params{{Key: "model", Label: "Model", Value: "llama3-8b", Display: "llama3-8b"}}}
}

// The verbose table has a row per rank under each checkpoint phase; the
// plain one has none.
func TestRankRows(t *testing.T) {
	var b bytes.Buffer
	if err := WriteTable(&b, checkpointSample(), Options{Verbose: true}); err != nil {
		t.Fatal(err)
	}
	golden(t, "checkpoint.table-verbose.golden", b.Bytes())
	b.Reset()
	if err := WriteTable(&b, checkpointSample(), Options{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "rank 0") {
		t.Errorf("rank rows without -v:\n%s", b.String())
	}
}
