package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// TestExpectFromStorage runs the built binary on ext4 over a loop device:
// a file read back from the page cache fails read-big.from_storage>=95%
// and warns on stderr, naming the cache and the remedy; with the caches
// dropped it passes; on tmpfs, where no counter applies, it fails saying
// the origin is unknown.
func TestExpectFromStorage(t *testing.T) {
	dir := testenv.LoopExt4(t, "128M")
	args := func(dir, drop string) []string {
		return []string{"bench", dir, "--big-file-size", "16M", "--small-file-count", "0", "--drop-caches", drop,
			"--expect", "read-big.from_storage>=95%", "--no-color"}
	}
	var out, errOut string
	var code int
	// Another process may drop every cache between the write and the read
	// (fsbench's tests as root do, up to several times a second on a
	// shared machine): a run that read much of the file from the device
	// fails the expectation without the warning, and is taken again.
	for attempt := 1; attempt <= 10; attempt++ {
		out, errOut, code = runFsbench(t, args(dir, "never")...)
		if code == ExitExpectation && strings.Contains(errOut, "the page cache served the rest") {
			break
		}
	}
	if code != ExitExpectation || !strings.Contains(out, "is not >= 95 %") {
		t.Errorf("cached read: exit %d, want %d and a failed expectation:\n%s\n%s", code, ExitExpectation, out, errOut)
	}
	if !strings.Contains(errOut, "Warning: read-big: only ") || !strings.Contains(errOut, "the page cache served the rest") || !strings.Contains(errOut, "--direct") {
		t.Errorf("cached read: no warning naming the page cache and the remedy:\n%s", errOut)
	}
	if !strings.Contains(out, "Origin of Read big file: ") || !strings.Contains(out, "block device loop") {
		t.Errorf("cached read: the table shows no origin:\n%s", out)
	}
	out, errOut, code = runFsbench(t, args(dir, "always")...)
	if code != 0 || !strings.Contains(out, "PASS") || strings.Contains(errOut, "read-big: only") {
		t.Errorf("dropped caches: exit %d, want 0, a pass and no warning:\n%s\n%s", code, out, errOut)
	}
	out, errOut, code = runFsbench(t, args(testenv.Tmpfs(t, "64m"), "never")...)
	if code != ExitExpectation || !strings.Contains(out, "from storage unknown: tmpfs on ") {
		t.Errorf("tmpfs: exit %d, want %d and an expectation failed as unknown:\n%s\n%s", code, ExitExpectation, out, errOut)
	}
	if !strings.Contains(errOut, "was in the page cache before it began") {
		t.Errorf("tmpfs: no warning that the page cache held the file:\n%s", errOut)
	}
}

// TestWorkloadReadOrigin checks that a workload's read phase, and the
// reads of a mixed phase, record where their bytes came from.
func TestWorkloadReadOrigin(t *testing.T) {
	dir := testenv.LoopExt4(t, "128M")
	var out, errOut string
	var code int
	for attempt := 1; attempt <= 3; attempt++ { // as in TestExpectFromStorage
		out, errOut, code = runFsbench(t, "bench", dir, "--rw", "read", "--file-size", "16M", "--drop-caches", "never",
			"--expect", "read.from_storage<5%", "--no-color")
		if code == 0 {
			break
		}
	}
	if code != 0 || !strings.Contains(out, "Origin of read: ") || !strings.Contains(errOut, "Warning: read: only ") {
		t.Errorf("exit %d, want 0, an origin line and a warning:\n%s\n%s", code, out, errOut)
	}
	var res report.Result
	for attempt := 1; attempt <= 3; attempt++ { // as in TestExpectFromStorage
		out, errOut, code = runFsbench(t, "bench", dir, "--rw", "randrw", "--file-size", "16M", "--drop-caches", "never", "--json")
		if code != 0 {
			t.Fatalf("randrw: exit %d:\n%s", code, errOut)
		}
		if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Phases) != 1 {
			t.Fatalf("randrw: %v: %s", err, out)
		}
		if o := res.Phases[0].Origin; o == nil || o.FromStorage == nil || *o.FromStorage < 5 {
			break
		}
	}
	p := res.Phases[0]
	if o := p.Origin; o == nil || o.ReadBytes <= 0 || o.ReadBytes >= p.Bytes || o.FromStorage == nil || *o.FromStorage >= 5 {
		t.Errorf("randrw phase of %d bytes: origin %+v: want its reads only, under 5%% from storage", p.Bytes, o)
	}
}

// TestObjbenchFileGetsFromStorage: a file store's objects are files the
// puts just left in the page cache. With --drop-caches never the download
// reads them from memory, which its origin shows and a warning names;
// with the caches dropped before the gets (always: all of them, and
// auto as root) it reads them from the loop device.
func TestObjbenchFileGetsFromStorage(t *testing.T) {
	dir := testenv.LoopExt4(t, "128M")
	args := func(drop string) []string {
		return []string{"objbench", dir + "/obj", "--big-object-size", "16M", "--block-size", "1M", "--small-objects", "20",
			"--skip-functional-tests", "--drop-caches", drop, "--expect", "download.from_storage>=95%", "--no-color"}
	}
	var out, errOut string
	var code int
	for attempt := 1; attempt <= 10; attempt++ { // as in TestExpectFromStorage
		out, errOut, code = runFsbench(t, args("never")...)
		if code == ExitExpectation && strings.Contains(errOut, "the page cache served the rest") {
			break
		}
	}
	if code != ExitExpectation || !strings.Contains(out, "Origin of download objects: ") || !strings.Contains(out, "page cache before: 16 MiB") {
		t.Errorf("never: exit %d, want %d and the page cache in the origin:\n%s\n%s", code, ExitExpectation, out, errOut)
	}
	if !strings.Contains(errOut, "drop the caches before the gets (--drop-caches auto") {
		t.Errorf("never: no warning naming the remedy:\n%s", errOut)
	}
	out, errOut, code = runFsbench(t, args("always")...)
	if code != 0 || !strings.Contains(out, "Cache drop: drop_caches") || !strings.Contains(out, "Origin of download objects: 100.0% from storage") {
		t.Errorf("always: exit %d, want 0 and the download from the device:\n%s\n%s", code, out, errOut)
	}
}
