package cluster_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// trainOnHosts is a small training on two real agents over a tmpfs: 64
// samples of 4 KiB, batches of 2, one accelerator a host.
func trainOnHosts(t *testing.T) (root string, args []string) {
	t.Helper()
	root = testenv.Tmpfs(t, "64m")
	a, b := startAgent(t, root), startAgent(t, root)
	return root, []string{"train", root, "--dataset-files", "64", "--samples-per-file", "1", "--sample-size", "4K",
		"--batch-size", "2", "-p", "1", "--read-threads", "2", "--epochs", "4", "--drop-caches", "never", "--hosts", hostsFlag(a, b)}
}

// checkSampleSplit checks an open-loop step of train on hosts, at a rate
// they carry: the samples per second done are no more than the total
// asked, not the hosts' count times it (each host asks for its share).
func checkSampleSplit(t *testing.T, st report.CapacityStep) {
	t.Helper()
	if st.OpsPerSec <= 0 || st.OpsPerSec > 1.2*st.Rate {
		t.Errorf("step at %.0f samples/s asked did %.0f samples/s (twice that if each host trained at the whole rate)", st.Rate, st.OpsPerSec)
	}
}

// A curve of train on two hosts (a step at 2% of the maximum, which they
// carry, shows the split): the dataset is made once, by both hosts,
// and every step trains on it at a rate of samples split across them;
// each step's phase is merged from both. With --keep the one dataset the
// steps shared stays, complete; without, nothing is left.
func TestTrainCurveOnHosts(t *testing.T) {
	root, args := trainOnHosts(t)
	r := resultOf(t, coordinator(t, context.Background(), append(args, "--curve=2,100", "--keep", "-o", "json")...))
	c := r.Capacity
	if c == nil || c.Unit != "samples" || len(c.Steps) != 3 || len(r.Hosts) != 2 {
		t.Fatalf("no curve in samples of 3 steps on 2 hosts: %d hosts, %+v", len(r.Hosts), c)
	}
	checkSampleSplit(t, c.Steps[1])
	names := []string{"generate", "train.2pct", "train.100pct"}
	if len(r.Phases) != len(names) {
		t.Fatalf("%d phases, want %v", len(r.Phases), names)
	}
	for i, p := range r.Phases {
		if p.Name != names[i] || len(p.Hosts) != 2 {
			t.Errorf("phase %d: %s of %d hosts, want %s of 2", i, p.Name, len(p.Hosts), names[i])
		}
	}
	if g := r.Phases[0]; g.Ops != 64 {
		t.Errorf("generate made %d files, want the dataset's 64 once", g.Ops)
	}
	runs := left(t, root)
	if len(runs) != 1 {
		t.Fatalf("--keep: %v under %s, want the one run whose dataset every step trained on", runs, root)
	}
	files, err := os.ReadDir(filepath.Join(root, runs[0], "dataset"))
	if err != nil || len(files) != 65 {
		t.Errorf("the kept dataset holds %d entries (%v), want 64 files and its description", len(files), err)
	}
	if err := os.RemoveAll(filepath.Join(root, runs[0])); err != nil {
		t.Fatal(err)
	}
	resultOf(t, coordinator(t, context.Background(), append(args, "--curve=100", "-o", "json")...))
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// A search of train on two hosts answers in samples per second, judged
// on both hosts' waits merged; --expect capacity above what they carry
// fails with exit code 3; nothing is left.
func TestTrainSLOOnHosts(t *testing.T) {
	root, args := trainOnHosts(t)
	r := resultOf(t, coordinator(t, context.Background(), append(args, "--slo", "p90<1s", "--expect", "capacity>=1samples/s", "-o", "json")...))
	c := r.Capacity
	if c == nil || c.Answer == nil || c.Answer.OpsPerSec <= 0 || c.Answer.OpsPerSec > c.MaxOpsPerSec || c.Unit != "samples" {
		t.Fatalf("no answer in samples/s: %+v", c)
	}
	for _, st := range c.Steps[1:] {
		if st.Holds == nil || *st.Holds && st.Ops < 100 {
			t.Errorf("step at %g samples/s: holds %v with %d steps of both hosts (p90 needs 100)", st.Rate, st.Holds, st.Ops)
		}
	}
	if p := r.FindPhase("train"); p == nil || len(p.Hosts) != 2 || r.FindPhase("generate") == nil || len(r.Expectations) != 1 || !r.Expectations[0].Pass {
		t.Errorf("phases %d, expectations %+v", len(r.Phases), r.Expectations)
	}
	out := coordinator(t, context.Background(), append(args, "--slo", "p90<1s", "--expect", "capacity>=1000000000samples/s")...)
	if out.Code != 3 || !strings.Contains(out.Stderr, "expectations failed: capacity>=1000000000samples/s") {
		t.Errorf("capacity above what the hosts carry: exit %d, want 3\n%s", out.Code, out.Stderr)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// replay's curve and search on two hosts, one log split between them by
// its recorded threads: every probe replays the whole log (each host its
// share) at one speed, its rate the log's operations per second at that
// speed; a log too short for the objective is refused before anything
// runs.
func TestReplayCapacityOnHosts(t *testing.T) {
	root := testenv.Tmpfs(t, "64m")
	a, b := startAgent(t, root), startAgent(t, root)
	args := []string{"replay", replaySample, root, "--hosts", hostsFlag(a, b)}
	r := resultOf(t, coordinator(t, context.Background(), append(args, "--curve=50,100", "-o", "json")...))
	c := r.Capacity
	if c == nil || c.Phase != "replay" || len(c.Steps) != 3 || r.Replay == nil || r.Replay.Speed <= 0 {
		t.Fatalf("no curve of 3 steps: %+v, replay %+v", c, r.Replay)
	}
	whole := c.Steps[0].Ops
	for _, st := range c.Steps[1:] {
		if st.Ops != whole || st.OpsPerSec > 1.15*st.Rate {
			t.Errorf("step at %.0f ops/s: %d operations (want the log's %d) at %.0f ops/s", st.Rate, st.Ops, whole, st.OpsPerSec)
		}
	}
	if p := r.FindPhase("replay.50pct"); p == nil || len(p.Hosts) != 2 {
		t.Errorf("phase replay.50pct not merged from 2 hosts: %+v", p)
	}
	r = resultOf(t, coordinator(t, context.Background(), append(args, "--slo", "p90<1s", "--expect", "capacity>=1ops/s", "-o", "json")...))
	if a := r.Capacity.Answer; a == nil || a.OpsPerSec <= 0 || len(r.Expectations) != 1 || !r.Expectations[0].Pass {
		t.Errorf("--slo p90<1s: %+v %+v", a, r.Expectations)
	}
	out := coordinator(t, context.Background(), append(args, "--slo", "p90<1s", "--expect", "capacity>=1000000000ops/s")...)
	if out.Code != 3 || !strings.Contains(out.Stderr, "expectations failed: capacity>=1000000000ops/s") {
		t.Errorf("capacity above what the hosts carry: exit %d, want 3\n%s", out.Code, out.Stderr)
	}
	out = coordinator(t, context.Background(), append(args, "--slo", "p99<1s")...)
	if out.Code != 2 || !strings.Contains(out.Stderr, "judging p99<1s at a rate needs 1000") {
		t.Errorf("p99 of a short log: exit %d, want 2\n%s", out.Code, out.Stderr)
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// Ctrl-C on the coordinator once the hosts hold the dataset that train's
// probes share: the search stops (exit 130), and the hosts still remove
// the dataset, which belongs to no probe.
func TestTrainSLOOnHostsInterrupted(t *testing.T) {
	root, args := trainOnHosts(t)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		waitFor(t, time.Minute, func() bool {
			held, _ := filepath.Glob(filepath.Join(root, "*", "dataset", "fsbench-train.json"))
			return len(held) > 0
		})
		cancel() // SIGINT, as Ctrl-C
	}()
	out := coordinator(t, ctx, append(args, "--slo", "p99<1s")...)
	if out.Code != 130 {
		t.Fatalf("exit %d, want 130:\n%s", out.Code, out.Stderr)
	}
	waitFor(t, 15*time.Second, func() bool { return len(left(t, root)) == 0 })
}
