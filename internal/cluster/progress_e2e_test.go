package cluster_test

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestHostsProgress: a coordinator shows each phase's progress summed
// over its hosts, ending with the exact count of every host together
// (stderr is no terminal here: one line per phase), and nothing but the
// result on stdout; each agent logs one line for the job.
func TestHostsProgress(t *testing.T) {
	root := t.TempDir()
	a, b := startAgent(t, root), startAgent(t, root)
	out := coordinator(t, context.Background(), "bench", root, "-p", "2", "--big-file-size", "8M", "--small-file-count", "10",
		"--small-file-size", "16K", "--hosts", hostsFlag(a, b), "-o", "json")
	resultOf(t, out)
	for _, want := range []string{
		// No rate: the table's is over the hosts' own times.
		`(?m)^write-big \(2 hosts\): 32/32 blocks in \d+\.\d\ds$`,
		`(?m)^read-big \(2 hosts\): 32/32 blocks in `,
		`(?m)^write-small \(2 hosts\): 40/40 files in `,
		`(?m)^read-small \(2 hosts\): 40/40 files in `,
		`(?m)^stat \(2 hosts\): 40/40 files in `,
	} {
		if !regexp.MustCompile(want).MatchString(out.Stderr) {
			t.Errorf("coordinator's stderr has no line matching %s:\n%s", want, out.Stderr)
		}
	}
	if strings.Contains(out.Stdout, "hosts)") || !strings.HasPrefix(out.Stdout, "{") {
		t.Errorf("stdout is not only the result: %.300s", out.Stdout)
	}
	line := regexp.MustCompile(`job \S+: bench \(host [12] of 2, run fsbench-\S+\) finished after \d+\.\ds, 5 phases\n`)
	for _, ag := range []*agent{a, b} {
		// The agent logs the line as the job ends, which may come just
		// after the coordinator has its result.
		waitFor(t, time.Minute, func() bool { return line.MatchString(ag.log.String()) })
		if n := len(line.FindAllString(ag.log.String(), -1)); n != 1 {
			t.Errorf("agent %s logged %d lines for the job, want 1:\n%s", ag.addr, n, ag.log.String())
		}
	}
}
