package cli

import (
	"os"
	"strings"
	"testing"
)

// TestReplaySpeedBound: a --speed at which pacing the log would take more
// than a week, as bench bounds its open loops, is a usage error of one
// line, found before anything is made: from the value alone when even a
// microsecond of a log would (or the value overflows the pacing), from
// the log's span once it is read.
func TestReplaySpeedBound(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		speed, want string
	}{
		{"1e-300", "a microsecond of the log would take more than a week"},
		{"1e-12", "a microsecond of the log would take more than a week"},
		{"5e-324", "a microsecond of the log would take more than a week"},
		{"Inf", "want 0 (as fast as possible) or more"},
		// The sample's operations span 15.8 s: 183 days at 1e-6.
		{"1e-6", "the log's 15.813s would take more than a week"},
		{"1e-9", "the log's 15.813s would take more than a week"},
	} {
		_, stderr, code := runFsbenchEnv(t, nil, "replay", juiceFSSample, dir, "--speed", tc.speed, "--drop-caches", "never")
		if code != ExitUsage || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("--speed %s: exit %d, %q; want exit 2 and one line with %q", tc.speed, code, stderr, tc.want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused replays left %d entries in %s", len(entries), dir)
	}
}
