package replay

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
)

// TestRecordedBytes: the bytes the recording read and wrote, from each
// format's lines, JuiceFS's as 1.4 writes a read's result, "(N)", and as
// older clients do, ": N".
func TestRecordedBytes(t *testing.T) {
	jfs := "2026.11.21 21:03:18.400355 [uid:0,gid:0,pid:7] create (1,f,-rw-r--r--:0100644): (3,[-rw-r--r--:0100644,1,0,0,1,1,1,0]) [fh:10] - OK <0.000100>\n" +
		"2026.11.21 21:03:18.400356 [uid:0,gid:0,pid:7] write (3,131072,0,10) - OK <0.000100>\n" +
		"2026.11.21 21:03:18.400357 [uid:0,gid:0,pid:7] write (3,131072,131072,10) - OK <0.000100>\n" +
		"2026.11.21 21:03:18.400358 [uid:0,gid:0,pid:7] read (3,131072,0,10): (131072) - OK <0.000100>\n" +
		"2026.11.21 21:03:18.400359 [uid:0,gid:0,pid:7] read (3,131072,131072,10): 131072 - OK <0.000100>\n" +
		"2026.11.21 21:03:18.400360 [uid:0,gid:0,pid:7] read (3,131072,262144,10): (0) - OK <0.000100>\n"
	fsb := "2026.11.26 18:38:51.000001 [uid:0,gid:0,pid:7] create (/f) - OK <0.000010>\n" +
		"2026.11.26 18:38:51.000002 [uid:0,gid:0,pid:7] write (/f,131072,0): 131072 - OK <0.000010>\n" +
		"2026.11.26 18:38:51.000003 [uid:0,gid:0,pid:7] write (/f,131072,131072): 131072 - OK <0.000010>\n" +
		"2026.11.26 18:38:51.000004 [uid:0,gid:0,pid:7] read (/f,131072,0): 131072 - OK <0.000010>\n" +
		"2026.11.26 18:38:51.000005 [uid:0,gid:0,pid:7] read (/f,131072,131072): 131072 - OK <0.000010>\n" +
		"2026.11.26 18:38:51.000006 [uid:0,gid:0,pid:7] read (/f,131072,262144): 0 - OK <0.000010>\n"
	st := "7  1795718335.000001 openat(AT_FDCWD</d>, \"/d/f\", O_RDWR|O_CREAT|O_EXCL, 0644) = 3</d/f> <0.000010>\n" +
		"7  1795718335.000002 write(3</d/f>, \"\"..., 131072) = 131072 <0.000010>\n" +
		"7  1795718335.000003 pwrite64(3</d/f>, \"\"..., 131072, 131072) = 131072 <0.000010>\n" +
		"7  1795718335.000004 pread64(3</d/f>, \"\"..., 131072, 0) = 131072 <0.000010>\n" +
		"7  1795718335.000005 pread64(3</d/f>, \"\"..., 131072, 131072) = 131072 <0.000010>\n" +
		"7  1795718335.000006 pread64(3</d/f>, \"\"..., 131072, 262144) = 0 <0.000010>\n"
	for _, log := range []string{jfs, fsb, st} {
		tr, err := load([]byte(log))
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, c := range tr.Classes {
			got[c.Name] = fmt.Sprintf("%d ops %d bytes", c.Ops, c.Bytes)
		}
		read, write := "read", "write"
		if tr.Format == FormatStrace {
			read, write = "pread64", "write"
		}
		if got[read] != "3 ops 262144 bytes" || !strings.HasSuffix(got[write], " 131072 bytes") && !strings.HasSuffix(got[write], " 262144 bytes") {
			t.Errorf("%s: %v; want %s of 262144 bytes in 3 ops, and the writes'", tr.Format, got, read)
		}
	}
}

// TestMergeDiffered: the differences of a replay on many hosts are the
// hosts' summed, per distinct outcome, the most frequent first.
func TestMergeDiffered(t *testing.T) {
	enospc := "write: no space left on device, recorded as succeeded"
	hosts := []*report.Replay{
		{Differed: []report.ErrorCount{{Error: enospc, Count: 3}}},
		{Differed: []report.ErrorCount{{Error: "unlink: no such file or directory, recorded as succeeded", Count: 2}, {Error: enospc, Count: 4}}},
	}
	rp := Merge(&report.Result{}, hosts, nil, "log", 0)
	want := []report.ErrorCount{{Error: enospc, Count: 7}, {Error: "unlink: no such file or directory, recorded as succeeded", Count: 2}}
	if !slices.Equal(rp.Differed, want) {
		t.Errorf("merged %v, want %v", rp.Differed, want)
	}
}
