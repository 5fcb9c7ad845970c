package replay

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
)

// TestReplayGenerated replays a small log of each format the benchmarks
// generate: every file's 8 writes and 8 reads are replayed with their
// bytes, every other operation as often as recorded, none fails. The
// strace log's first use of its directory is a create in it, which the
// replay must make the directory for.
func TestReplayGenerated(t *testing.T) {
	for _, format := range genFormats {
		t.Run(format, func(t *testing.T) {
			data := genLog(format, 2000)
			lines := int64(bytes.Count(data, []byte{'\n'}))
			files := lines / 22
			if format == FormatJuiceFS {
				files = lines / 23
			}
			log := filepath.Join(t.TempDir(), "gen.log")
			if err := os.WriteFile(log, data, 0o644); err != nil {
				t.Fatal(err)
			}
			res := &report.Result{}
			if err := Run(context.Background(), Options{Log: log, Path: t.TempDir()}, res); err != nil {
				t.Fatalf("replay: %v", err)
			}
			rp := res.Replay
			if rp.Format != format || rp.Lines != lines || len(rp.Unsupported) != 0 || rp.Malformed != 0 {
				t.Fatalf("format %s, %d lines of %d, unsupported %v, malformed %d", rp.Format, rp.Lines, lines, rp.Unsupported, rp.Malformed)
			}
			var total int64
			for _, o := range rp.Ops {
				total += o.Ops
				if o.Ops != o.Recorded.Ops || o.Bytes != o.Recorded.Bytes || o.Errors != 0 || o.Failed != 0 {
					t.Errorf("%s: replayed %d ops %d bytes (%d errors, %d failed), recorded %d ops %d bytes",
						o.Op, o.Ops, o.Bytes, o.Errors, o.Failed, o.Recorded.Ops, o.Recorded.Bytes)
				}
				if (o.Op == "write" || o.Op == "read") && (o.Ops != 8*files || o.Bytes != 8*files*genIO) {
					t.Errorf("%s: %d ops, %d bytes for %d files", o.Op, o.Ops, o.Bytes, files)
				}
			}
			if total != lines {
				t.Errorf("%d operations replayed of %d lines", total, lines)
			}
		})
	}
}

// TestReplaySplit replays a log split across three hosts' parts, each in
// a directory of its own: every part has streams, the parts together
// replay each type of operation as often and with as many bytes as the
// whole log records, and none fails; JuiceFS's releases, logged by pid 0,
// go with the handles they release.
func TestReplaySplit(t *testing.T) {
	for _, format := range []string{FormatJuiceFS, FormatStrace} {
		t.Run(format, func(t *testing.T) {
			log := filepath.Join(t.TempDir(), "gen.log")
			if err := os.WriteFile(log, genLog(format, 3000), 0o644); err != nil {
				t.Fatal(err)
			}
			whole, err := ReadLog(log)
			if err != nil || whole.SplitStreams() != genThreads {
				t.Fatalf("%v: %d streams to split", err, whole.SplitStreams())
			}
			ops, bytes := map[string]int64{}, map[string]int64{}
			streams := 0
			for part := range 3 {
				res := &report.Result{}
				if err := Run(context.Background(), Options{Log: log, Path: t.TempDir(), Part: part, Parts: 3}, res); err != nil {
					t.Fatalf("part %d: %v", part, err)
				}
				streams += res.Replay.Streams
				for _, o := range res.Replay.Ops {
					ops[o.Op] += o.Ops
					bytes[o.Op] += o.Bytes
					if o.Errors != 0 || o.Failed != 0 || o.Ops != o.Recorded.Ops {
						t.Errorf("part %d %s: %d ops of %d recorded, %d errors, %d failed", part, o.Op, o.Ops, o.Recorded.Ops, o.Errors, o.Failed)
					}
				}
				if res.Replay.Streams < genThreads/3 {
					t.Errorf("part %d: %d streams", part, res.Replay.Streams)
				}
			}
			for _, c := range whole.Classes {
				if ops[c.Name] != c.Ops || bytes[c.Name] != c.Bytes {
					t.Errorf("%s: parts replayed %d ops %d bytes, the log has %d, %d", c.Name, ops[c.Name], bytes[c.Name], c.Ops, c.Bytes)
				}
			}
			if streams < len(whole.Streams)-1 {
				t.Errorf("%d streams over the parts, the log has %d", streams, len(whole.Streams))
			}
		})
	}
}

// TestSplitPathLogPidZero: a log of fsbench's (paths, no JuiceFS fields)
// with lines of pid 0 splits across hosts: each line is replayed by one
// part, and a part left with none says so.
func TestSplitPathLogPidZero(t *testing.T) {
	log := writeLog(t, "2026.11.21 21:03:17.000001 [uid:0,gid:0,pid:0] read (/w/a,4096,0): 4096 - OK <0.000100>\n"+
		"2026.11.21 21:03:17.000002 [uid:0,gid:0,pid:5] read (/w/a,4096,0): 4096 - OK <0.000100>")
	ops := int64(0)
	for part := range 2 {
		tr, err := ReadLogPart(log, part, 2)
		if err != nil {
			if !strings.Contains(err.Error(), "no operation") {
				t.Fatalf("part %d: %v", part, err)
			}
			continue
		}
		ops += tr.Ops()
		if tr.Skipped.Lines != 2 || tr.Ops()+tr.Skipped.Elsewhere != 2 {
			t.Errorf("part %d: %d ops, skipped %+v", part, tr.Ops(), tr.Skipped)
		}
	}
	if ops != 2 {
		t.Errorf("%d operations over the parts, the log has 2", ops)
	}
}
