package replay

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReplayStraceTruncate: ftruncate and truncate are replayed, so the
// reads after them move what the program's did (before, the file kept its
// old length and the replay read more than was recorded), on a file the
// program made and on one it found.
func TestReplayStraceTruncate(t *testing.T) {
	found := func(work string) {
		if err := os.WriteFile(filepath.Join(work, "sub", "found"), make([]byte, 5000), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	log, work := straceCmdAfter(t, found, python3(t), "-c", `
import os
with open("made", "wb") as f: f.write(b"a" * 10000)
fd = os.open("made", os.O_RDWR)
os.ftruncate(fd, 100)
os.pread(fd, 4096, 0)
os.close(fd)
os.truncate("made", 50)
fd = os.open("made", os.O_RDONLY)
os.pread(fd, 4096, 0)
os.close(fd)
os.truncate("sub/found", 10)
fd = os.open("sub/found", os.O_RDONLY)
os.pread(fd, 4096, 0)
os.close(fd)
`)
	res, run, _ := replayIn(t, log)
	checkReplayed(t, res)
	ops := map[string]int64{}
	for _, o := range res.Replay.Ops {
		ops[o.Op] = o.Ops
	}
	if ops["ftruncate"] != 1 || ops["truncate"] != 2 {
		t.Errorf("ftruncate %d, truncate %d replayed; the program made 1 and 2", ops["ftruncate"], ops["truncate"])
	}
	for name, size := range map[string]int64{"made": 50, "sub/found": 10} {
		st, err := os.Stat(filepath.Join(run, work, name))
		if err != nil || st.Size() != size {
			t.Errorf("%s after the replay: %v, %v; want %d bytes", name, st, err, size)
		}
	}
}
