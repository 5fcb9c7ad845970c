package cli

import (
	"context"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"
)

// liveAfterProbe runs a probe of n rounds of the command args in
// this process and returns the live heap and the goroutines after it.
func liveAfterProbe(t *testing.T, n int, hist string, args ...string) (heap uint64, goroutines int) {
	t.Helper()
	app, _, errb := testApp(nil)
	o := &ProbeOptions{Interval: time.Millisecond, Rounds: n, Args: args, History: hist, HistoryEvery: 1}
	if err := o.resolve(); err != nil {
		t.Fatal(err)
	}
	if err := runProbe(context.Background(), app, o); err != nil {
		t.Fatalf("probe: %v\n%s", err, errb)
	}
	if res, _ := rounds(errb.String()); len(res) != n {
		t.Fatalf("probe ran %d rounds, want %d:\n%s", len(res), n, errb)
	}
	// Two collections: the first may leave what a finalizer or cleanup
	// frees to the next.
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc, runtime.NumGoroutine()
}

// TestProbeKeepsNothingOfItsRounds runs a probe of 20 rounds, then one of
// 200, of each kind of command, and compares the live heap after each:
// what a round keeps (a command tree, buffers, results) shows ten times
// over in the second. The bench runs once more with --history, each
// round's result kept in a directory. Every round built a command tree whose flags cobra
// kept for shell completion, 150 KB a round of a tiny bench.
func TestProbeKeepsNothingOfItsRounds(t *testing.T) {
	if testing.Short() {
		t.Skip("runs 880 rounds")
	}
	dir := t.TempDir()
	bench := []string{"bench", dir, "--rw", "write", "--file-size", "64K", "--xfer-size", "16K", "--ops", "8", "-p", "2"}
	for _, c := range []struct {
		name string
		hist bool
		args []string
	}{
		{"bench", false, bench},
		{"objbench", false, []string{"objbench", dir, "--workload", "put", "--ops", "8", "--obj-size", "4K", "-p", "2"}},
		{"replay", false, []string{"replay", juiceFSSample, dir, "--drop-caches", "never"}},
		{"bench-history", true, bench},
	} {
		args := c.args
		t.Run(c.name, func(t *testing.T) {
			hist := func() string {
				if c.hist {
					return t.TempDir()
				}
				return ""
			}
			heap20, g20 := liveAfterProbe(t, 20, hist(), args...)
			heap200, g200 := liveAfterProbe(t, 200, hist(), args...)
			t.Logf("%v: live heap %d B after 20 rounds, %d B after 200; goroutines %d, %d", args, heap20, heap200, g20, g200)
			// 10% and 512 KiB of slack: the runtime's own caches and
			// the test binary's other state move a little.
			if heap200 > heap20+heap20/10+512<<10 {
				t.Errorf("live heap grew from %d B after 20 rounds to %d B after 200", heap20, heap200)
			}
			if g200 > g20 {
				t.Errorf("goroutines grew from %d after 20 rounds to %d after 200", g20, g200)
			}
		})
	}
}

// memoryLine is a round's line with the probe's memory after it.
var memoryLine = regexp.MustCompile(`(?m)^time=\S+ round=\d+ result=pass seconds=\S+ rss_mib=(\d+\.\d) anon_mib=(\d+\.\d)$`)

// TestProbeReturnsEachRoundsMemory runs a probe of two rounds of a
// big-file bench and reads the runtime's accounts right after it: the
// heap's pages taken from the system are what they were before the probe,
// give or take what a probe keeps. Before each round's memory was given
// back at its end, a round's 16 MiB of buffers stayed there, garbage not
// yet collected or free pages the runtime's scavenger returns over
// minutes, so a probe's resident memory between rounds was wherever the
// collector's cycle stood.
func TestProbeReturnsEachRoundsMemory(t *testing.T) {
	dir := t.TempDir()
	app, _, errb := testApp(nil)
	o := &ProbeOptions{Interval: time.Millisecond, Rounds: 2, HistoryEvery: 1,
		Args: []string{"bench", dir, "--big-file-size", "16M", "--small-file-count", "0", "--drop-caches", "never"}}
	if err := o.resolve(); err != nil {
		t.Fatal(err)
	}
	debug.FreeOSMemory()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if err := runProbe(context.Background(), app, o); err != nil {
		t.Fatalf("probe: %v\n%s", err, errb)
	}
	runtime.ReadMemStats(&after)
	// Each round's line says what the probe holds then.
	lines := memoryLine.FindAllStringSubmatch(errb.String(), -1)
	if len(lines) != 2 {
		t.Fatalf("%d round lines with rss_mib and anon_mib, want 2:\n%s", len(lines), errb)
	}
	for _, m := range lines {
		rss, _ := strconv.ParseFloat(m[1], 64)
		anon, _ := strconv.ParseFloat(m[2], 64)
		if anon <= 0 || anon >= rss {
			t.Errorf("rss_mib=%s anon_mib=%s: the anonymous part is more than nothing and less than all", m[1], m[2])
		}
	}
	held := func(ms *runtime.MemStats) uint64 { return ms.HeapSys - ms.HeapReleased }
	t.Logf("heap pages held from the system: %d B before the probe, %d B after its last round (%d B of them in use)", held(&before), held(&after), after.HeapInuse)
	if held(&after) > held(&before)+4<<20 {
		t.Errorf("the heap holds %d B of the system's memory after the probe's last round, %d B before it: the rounds' memory was not given back", held(&after), held(&before))
	}
}
