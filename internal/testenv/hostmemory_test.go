package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestWarmFreeMemory: host-memory.sh's warm_free_memory writes the MiB
// asked for into a file in its directory and removes it, while freed
// memory is held (hold_freed_memory), and writes nothing when it is not;
// release_freed_memory puts the setting back. The setting and the
// directory are the test's, not the kernel's /sys file and /dev/shm.
func TestWarmFreeMemory(t *testing.T) {
	dir := t.TempDir()
	setting, warm := filepath.Join(dir, "min_free_ms"), filepath.Join(dir, "shm")
	if err := os.WriteFile(setting, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(warm, 0o755); err != nil {
		t.Fatal(err)
	}
	script := `source "$1"; page_reporting=$2 warm_dir=$3
dd() { command dd "$@"; for f in "$warm_dir"/fsbench-warm.*; do echo "wrote $(stat -c %s "$f")"; done; }
warm_free_memory 4
hold_freed_memory 2>/dev/null
echo "held $(cat "$page_reporting")"
warm_free_memory 4
release_freed_memory
echo "setting $(cat "$page_reporting"), left: $(ls -A "$warm_dir")"`
	lib := filepath.Join(RepoRoot(), "benchmarks", "scripts", "host-memory.sh")
	out, err := exec.Command("bash", "-c", script, "bash", lib, setting, warm).CombinedOutput()
	if want := "held 60000\nwrote 4194304\nsetting 0, left: \n"; err != nil || string(out) != want {
		t.Errorf("%v, printed %q, want %q", err, out, want)
	}

	// A script that stops in the middle of a warming (its EXIT trap
	// calls release_freed_memory) leaves no file and the setting as it was.
	stops := `source "$1"; page_reporting=$2 warm_dir=$3
trap release_freed_memory EXIT
dd() { command dd "$@"; echo "stopped with $(ls "$warm_dir" | wc -l) file"; exit 1; }
hold_freed_memory 2>/dev/null
warm_free_memory 4`
	out, err = exec.Command("bash", "-c", stops, "bash", lib, setting, warm).CombinedOutput()
	left, _ := os.ReadDir(warm)
	if was, _ := os.ReadFile(setting); err == nil || string(out) != "stopped with 1 file\n" || len(left) != 0 || string(was) != "0\n" {
		t.Errorf("stopped in a warming: %v, printed %q, left %d files, setting %q", err, out, len(left), was)
	}
}
