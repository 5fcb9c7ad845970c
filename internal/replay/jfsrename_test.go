package replay

import (
	"os"
	"path/filepath"
	"testing"
)

// TestReplayJuiceFSRenameNoReplace: mv over an existing file on a JuiceFS
// mount is a rename with RENAME_NOREPLACE (flags 1), which fails, then one
// without: the replay does both as recorded, the first failing too.
func TestReplayJuiceFSRenameNoReplace(t *testing.T) {
	log := filepath.Join(t.TempDir(), "access.log")
	err := os.WriteFile(log, []byte(`2026.11.21 21:03:18.400355 [uid:0,gid:0,pid:7] create (1,a,-rw-r--r--:0100644): (3,[-rw-r--r--:0100644,1,0,0,1795294998,1795294998,1795294998,0]) [fh:10] - OK <0.000066>
2026.11.21 21:03:18.400356 [uid:0,gid:0,pid:7] write (3,100,0,10): OK <0.000066>
2026.11.21 21:03:18.400357 [uid:0,gid:0,pid:7] release (3,10) - OK <0.000066>
2026.11.21 21:03:18.400358 [uid:0,gid:0,pid:7] create (1,b,-rw-r--r--:0100644): (4,[-rw-r--r--:0100644,1,0,0,1795294998,1795294998,1795294998,0]) [fh:11] - OK <0.000066>
2026.11.21 21:03:18.400359 [uid:0,gid:0,pid:7] release (4,11) - OK <0.000066>
2026.11.21 21:03:18.400360 [uid:0,gid:0,pid:7] rename (1,a,1,b,1): file exists <0.000020>
2026.11.21 21:03:18.400361 [uid:0,gid:0,pid:7] rename (1,a,1,b,0): OK <0.000030>
`), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	res, run, _ := replayIn(t, log)
	checkReplayed(t, res)
	if st, err := os.Stat(filepath.Join(run, "b")); err != nil || st.Size() != 100 {
		t.Errorf("b after the replay: %v, %v; want a's 100 bytes", st, err)
	}
	if _, err := os.Stat(filepath.Join(run, "a")); err == nil {
		t.Error("a is still there after the replay")
	}
}
