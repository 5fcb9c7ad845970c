package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/history"
)

// TestProbeFeedsHistory runs real probes of a tiny bench with --history:
// every finished round (a failed expectation included) is kept, all in
// one series; --history-every 2 keeps the first round and every second;
// history check judges a kept round inside its series and a planted slow
// copy of it outside (exit 3). The rounds are paced (--rate) so that
// their throughput is steady on a loaded machine too.
func TestProbeFeedsHistory(t *testing.T) {
	dir, h := t.TempDir(), filepath.Join(t.TempDir(), "hist")
	round := []string{"bench", dir, "--rw", "write", "--file-size", "64K", "--xfer-size", "16K", "--ops", "64", "--rate", "2000", "-p", "2"}
	probe := func(extra ...string) string {
		t.Helper()
		args := append(append([]string{"probe", "--interval", "1ms", "--history", h}, extra...), round...)
		code, _, stderr := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("probe %v: exit %d: %s", extra, code, stderr)
		}
		return stderr
	}
	log := probe("--rounds", "6", "--expect", "write>1000TiB/s")
	if res, _ := rounds(log); len(res) != 6 || res[0] != "fail" {
		t.Fatalf("rounds %q, want 6 failing ones:\n%s", res, log)
	}
	kept := regexp.MustCompile(`round=\d+ result=\w+ .*history=(\w+)`).FindAllStringSubmatch(log, -1)
	if len(kept) != 6 || strings.Count(log, "new_series=") != 1 {
		t.Fatalf("%d rounds say they were kept, want 6, the first starting the series:\n%s", len(kept), log)
	}
	log = probe("--rounds", "5", "--history-every", "2")
	if n := strings.Count(log, " history="); n != 3 || strings.Contains(log, "new_series") {
		t.Fatalf("--history-every 2 of 5 rounds kept %d, want 3 in the same series:\n%s", n, log)
	}
	files, _ := filepath.Glob(filepath.Join(h, "results", kept[0][1], "*.json"))
	if len(files) != 9 {
		t.Fatalf("series %s holds %d results, want 9", kept[0][1], len(files))
	}
	code, out, stderr := runCLI(t, "history", "show", "--history", h, "--json")
	var shown []history.SeriesAnalysis
	if err := json.Unmarshal([]byte(out), &shown); code != 0 || err != nil || len(shown) != 1 || shown[0].Runs != 9 {
		t.Fatalf("history show: exit %d, %v: %d series: %s%s", code, err, len(shown), out, stderr)
	}
	// The round of median throughput: paced rounds differ by a percent or
	// two, and the slowest of them may rightly lie outside the others.
	mid := medianRound(t, files)
	if code, out, stderr := runCLI(t, "history", "check", "--history", h, mid); code != 0 {
		t.Errorf("a kept round: exit %d, want 0:\n%s%s", code, out, stderr)
	}
	slow := plantSlow(t, mid, 100)
	if code, out, stderr := runCLI(t, "history", "check", "--history", h, slow); code != 3 {
		t.Errorf("a round 100 times slower: exit %d, want 3:\n%s%s", code, out, stderr)
	}
}

// medianRound is the result among files whose first phase's throughput
// is the median.
func medianRound(t *testing.T, files []string) string {
	t.Helper()
	type round struct {
		file string
		v    float64
	}
	var rs []round
	for _, f := range files {
		res, err := readResult(f)
		if err != nil || len(res.Phases) == 0 {
			t.Fatalf("%s: %v", f, err)
		}
		rs = append(rs, round{f, res.Phases[0].Value.Value})
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i].v < rs[j].v })
	return rs[len(rs)/2].file
}

// plantSlow writes a copy of the result at path with every phase's
// throughput divided by div, as a new run, and returns its path.
func plantSlow(t *testing.T, path string, div float64) string {
	t.Helper()
	res, err := readResult(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Phases {
		res.Phases[i].Value.Value /= div
	}
	res.StartedAt = res.StartedAt.Add(1e9)
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "slow.json")
	if err := os.WriteFile(out, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return out
}
