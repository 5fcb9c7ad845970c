package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
)

// liveLog is an excerpt of the access log of a JuiceFS 1.4.1 mount (the
// file store, SQLite metadata), recorded live while `juicefs bench -p 2
// --big-file-size 8 --small-file-count 20` ran and a shell made,
// listed, renamed, truncated, linked and removed a directory's files;
// trimmed to the first 1 MiB of the big files and 4 small files per
// thread, every line otherwise as the mount wrote it.
var liveLog = filepath.Join("testdata", "juicefs-1.4.1-bench.log")

// TestJuiceFSLiveLog: every operation of the live log is counted as
// recorded, with its bytes: a read's from the size its line reports
// ("read (ino,size,off,fh): N"), a write's from its arguments. The
// replay then performs each of them, moving the same bytes.
func TestJuiceFSLiveLog(t *testing.T) {
	want := map[string]string{
		"getattr": "110 ops, 0 bytes, 0 failed", "lookup": "22 ops, 0 bytes, 17 failed",
		"mkdir": "2 ops, 0 bytes, 0 failed", "create": "11 ops, 0 bytes, 0 failed",
		"write": "25 ops, 3145734 bytes, 0 failed", "flush": "24 ops, 0 bytes, 0 failed",
		"release": "23 ops, 0 bytes, 0 failed", "open": "12 ops, 0 bytes, 0 failed",
		"read": "25 ops, 3145734 bytes, 0 failed", "opendir": "3 ops, 0 bytes, 0 failed",
		"readdir": "5 ops, 0 bytes, 0 failed", "releasedir": "3 ops, 0 bytes, 0 failed",
		"statfs": "1 ops, 0 bytes, 0 failed", "unlink": "12 ops, 0 bytes, 0 failed",
		"rmdir": "2 ops, 0 bytes, 0 failed", "rename": "1 ops, 0 bytes, 0 failed",
	}
	text, err := os.ReadFile(liveLog)
	if err != nil {
		t.Fatal(err)
	}
	// The reads' bytes as their lines say them, JuiceFS's virtual files
	// (inodes from 2^63-2^32 up) aside.
	var lineBytes int64
	for _, m := range regexp.MustCompile(`\] read \((\d+),\d+,\d+,\d+\): \(?(\d+)\)? - OK`).FindAllSubmatch(text, -1) {
		if ino, _ := strconv.ParseUint(string(m[1]), 10, 64); ino < minInternal {
			n, _ := strconv.ParseInt(string(m[2]), 10, 64)
			lineBytes += n
		}
	}
	if lineBytes != 3145734 {
		t.Fatalf("the log's reads say %d bytes, the test expects 3145734", lineBytes)
	}
	tr, err := load(text)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format != FormatJuiceFS {
		t.Errorf("format %q", tr.Format)
	}
	got := map[string]string{}
	for _, c := range tr.Classes {
		got[c.Name] = fmt.Sprintf("%d ops, %d bytes, %d failed", c.Ops, c.Bytes, c.Failed)
	}
	for op, w := range want {
		if got[op] != w {
			t.Errorf("%s: recorded %q, want %q", op, got[op], w)
		}
	}
	for op := range got {
		if _, ok := want[op]; !ok {
			t.Errorf("%s: recorded %q, not expected", op, got[op])
		}
	}

	res, _, _ := replayIn(t, liveLog)
	if res.Replay == nil {
		t.Fatal("no replay in the result")
	}
	for _, o := range res.Replay.Ops {
		rec := fmt.Sprintf("%d ops, %d bytes, %d failed", o.Recorded.Ops, o.Recorded.Bytes, o.Recorded.Failed)
		here := fmt.Sprintf("%d ops, %d bytes, %d failed", o.Ops, o.Bytes, o.Failed)
		if rec != want[o.Op] || here != rec || o.Errors != 0 {
			t.Errorf("%s: replayed %s (%d differed), recorded %s; want %s both", o.Op, here, o.Errors, rec, want[o.Op])
		}
	}
	if len(res.Replay.Ops) != len(want) {
		t.Errorf("%d operations in the replay's table, want %d", len(res.Replay.Ops), len(want))
	}
}
