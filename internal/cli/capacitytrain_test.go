package cli

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/testenv"
)

// smallTrain trains one accelerator on 64 samples of 4 KiB in a real
// directory, batches of 2 (32 steps an epoch), its caches left alone.
func smallTrain(dir string, extra ...string) []string {
	return append([]string{"train", dir, "--dataset-files", "64", "--samples-per-file", "1", "--sample-size", "4K",
		"--batch-size", "2", "-p", "1", "--read-threads", "2", "--epochs", "1", "--drop-caches", "never"}, extra...)
}

// replayLog is a small log fsbench wrote: 336 operations of one stream
// over 0.6 s.
var replayLog = filepath.Join("..", "replay", "testdata", "fsbench-bench.log")

func TestCapacityFlagsTrainReplay(t *testing.T) {
	o, code, msg := parseTrain(t, "/x", "--batch-size", "8", "--slo", "p99<5ms")
	if code != 0 || o.capacityRun() == nil || o.capacityRun().scale() != 8 || o.capacityRun().unit != "samples" {
		t.Fatalf("train --slo: exit %d %s", code, msg)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--slo", "p99<5ms", "--find-max"}, "give one of them"},
		{[]string{"--slo", "p99<5ms", "--storage", "file", "--hosts", "127.0.0.1:1"}, "with --storage, run them on one host"},
		{[]string{"--curve", "10,50"}, "write --curve=10,50"},
		{[]string{"--slo", "p99<5ms", "--curve"}, "give one of them"},
		{[]string{"--expect", "capacity>=5samples/s"}, "give --slo too"},
		{[]string{"--slo", "p99<5ms", "--expect", "capacity>=5files/s"}, "capacity>=5000samples/s"},
	} {
		_, code, msg := parseTrain(t, append([]string{"/x"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("train %v: exit %d, %q; want exit 2 and one line saying %q", c.args, code, msg, c.want)
		}
	}
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--slo", "p99<5ms", "--speed", "2"}, "--speed sets one pace"},
		{[]string{"--expect", "capacity>=5ops/s"}, "give --slo too"},
	} {
		_, code, msg := parseWith(t, newReplayCmdWith, append([]string{replayLog, dir}, c.args...))
		if code != ExitUsage || !strings.Contains(msg, c.want) || strings.Contains(msg, "\n") {
			t.Errorf("replay %v: exit %d, %q; want exit 2 and one line saying %q", c.args, code, msg, c.want)
		}
	}
}

// TestTrainCurve: --curve on train in a real directory runs the
// closed-loop maximum, then each step asked, its rate in samples per
// second, each a phase after the dataset's generation; nothing is left.
func TestTrainCurve(t *testing.T) {
	dir := t.TempDir()
	res, stderr := capacityResult(t, ExitOK, smallTrain(dir, "--curve=25,50,100")...)
	c := res.Capacity
	if c == nil || c.Answer != nil || c.Phase != "train" || c.Unit != "samples" || len(c.Steps) != 4 || c.MaxOpsPerSec <= 0 {
		t.Fatalf("capacity %+v\n%s", c, stderr)
	}
	names := []string{"generate", "train.25pct", "train.50pct", "train.100pct"}
	if len(res.Phases) != len(names) {
		t.Fatalf("%d phases, want %v", len(res.Phases), names)
	}
	for i, want := range []float64{25, 50, 100} {
		s, p := c.Steps[i+1], res.Phases[i+1]
		if p.Name != names[i+1] || s.Percent != want || s.Rate < 0.99*want/100*c.MaxOpsPerSec || s.Rate > 1.01*want/100*c.MaxOpsPerSec {
			t.Errorf("step %d: phase %s, %g%% asked %g samples/s of %g", i, p.Name, s.Percent, s.Rate, c.MaxOpsPerSec)
		}
		// Samples, not steps: a step is a batch of 2.
		if s.Ops < 32 || s.OpsPerSec < 1.9*float64(s.Ops)/s.Seconds || p.Items != 2*p.Ops {
			t.Errorf("step %d: %d steps, %g samples/s over %.3fs; phase %d items of %d ops", i, s.Ops, s.OpsPerSec, s.Seconds, p.Items, p.Ops)
		}
	}
	if res.Training != nil || len(res.Expectations) != 0 {
		t.Errorf("an AU judged of accelerators that computed nothing: %+v %+v", res.Training, res.Expectations)
	}
	if !strings.Contains(stderr, "samples/s asked") {
		t.Errorf("no progress in samples/s:\n%s", stderr)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind in %s: %v", dir, left)
	}
}

// TestTrainSLO: --slo on train answers a rate in samples per second with
// samples enough at every rate judged, and --expect capacity fails
// (exit 3) above it; an objective that cannot hold answers none.
func TestTrainSLO(t *testing.T) {
	dir := t.TempDir()
	res, stderr := capacityResult(t, ExitOK, smallTrain(dir, "--slo", "p90<1s", "--expect", "capacity>=1samples/s")...)
	c := res.Capacity
	if c == nil || c.Answer == nil || c.Answer.OpsPerSec <= 0 || c.Answer.OpsPerSec > c.MaxOpsPerSec || c.Answer.Values["p90"] >= 1e6 {
		t.Fatalf("capacity %+v\n%s", c, stderr)
	}
	for _, s := range c.Steps[1:] {
		if s.Holds == nil || *s.Holds && s.Ops < 100 {
			t.Errorf("step at %g samples/s: holds %v with %d steps (p90 needs 100)", s.Rate, s.Holds, s.Ops)
		}
	}
	if len(res.Expectations) != 1 || !res.Expectations[0].Pass || res.FindPhase("train") == nil {
		t.Errorf("capacity>=1samples/s: %+v; phases %d", res.Expectations, len(res.Phases))
	}
	stdout, stderr, code := runFsbench(t, smallTrain(dir, "--slo", "p90<1s", "--expect", "capacity>=1000000000samples/s")...)
	if code != ExitExpectation || !strings.Contains(stdout, "max rate under the objective p90<1s: ") || !strings.Contains(stdout, "samples/s") {
		t.Errorf("capacity above the answer: exit %d\n%s\n%s", code, stdout, stderr)
	}
	res, stderr = capacityResult(t, ExitOK, smallTrain(dir, "--slo", "p90<1ns")...)
	if a := res.Capacity.Answer; a == nil || a.OpsPerSec != 0 || !strings.Contains(res.Capacity.AnswerLine(), ": none; it did not hold down to") {
		t.Errorf("p90<1ns: %+v\n%s", a, stderr)
	}
}

// TestReplayCapacity: --curve on a small log replays it whole at each
// step's share of the closed-loop maximum, as a speed over the recorded
// rate; --slo answers in operations per second; a log too short to judge
// the objective is refused before anything runs.
func TestReplayCapacity(t *testing.T) {
	dir := t.TempDir()
	res, stderr := capacityResult(t, ExitOK, "replay", replayLog, dir, "--curve=50,100")
	c := res.Capacity
	if c == nil || c.Phase != "replay" || c.Unit != "" || len(c.Steps) != 3 || res.FindPhase("replay.50pct") == nil || res.FindPhase("replay.100pct") == nil {
		t.Fatalf("capacity %+v, phases %d\n%s", c, len(res.Phases), stderr)
	}
	for _, s := range c.Steps {
		if s.Ops != 336 {
			t.Errorf("step at %g ops/s replayed %d operations, want the log's 336", s.Rate, s.Ops)
		}
	}
	if sp := res.Replay.Speed; sp <= 0 || res.Replay.RecordedSeconds <= 0 || c.Steps[2].Rate != c.MaxOpsPerSec {
		t.Errorf("last step at %g ops/s of %g, speed %gx", c.Steps[2].Rate, c.MaxOpsPerSec, sp)
	}
	res, stderr = capacityResult(t, ExitOK, "replay", replayLog, dir, "--slo", "p90<1s", "--expect", "capacity>=1ops/s")
	if a := res.Capacity.Answer; a == nil || a.OpsPerSec <= 0 || len(res.Expectations) != 1 || !res.Expectations[0].Pass {
		t.Errorf("--slo p90<1s: %+v %+v\n%s", a, res.Expectations, stderr)
	}
	_, stderr, code := runFsbench(t, "replay", replayLog, dir, "--slo", "p99<1s")
	if code != ExitUsage || !strings.Contains(stderr, "the log holds 336 operations and judging p99<1s at a rate needs 1000") {
		t.Errorf("p99 of 336 operations: exit %d\n%s", code, stderr)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind in %s: %v", dir, left)
	}
}

// TestSLOUnmet: an objective that holds at no rate is no failure of the
// run: exit 0, and the answer is none, stated with the lowest rate tried;
// --expect capacity then fails (exit 3), as capacity was not found.
func TestSLOUnmet(t *testing.T) {
	dir := testenv.Tmpfs(t, "64M")
	args := []string{"bench", dir, "--rw", "randread", "--xfer-size", "4K", "--file-size", "4M", "--duration", "200ms", "-p", "2", "--slo", "p90<1ns"}
	stdout, stderr, code := runFsbench(t, append(args, "-q")...)
	if code != ExitOK || !strings.Contains(stdout, "max rate under the objective p90<1ns: none; it did not hold down to ") {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	res, stderr := capacityResult(t, ExitExpectation, append(args, "--expect", "capacity>=1ops/s")...)
	if a := res.Capacity.Answer; a == nil || a.OpsPerSec != 0 || len(res.Expectations) != 1 || res.Expectations[0].Pass ||
		!strings.Contains(stderr, "expectations failed: capacity>=1ops/s") {
		t.Errorf("answer %+v, %+v\n%s", a, res.Expectations, stderr)
	}
}

// TestTrainProbesShareDataset: on hosts, the first probe of train's
// search makes the dataset and keeps it, every probe after trains on it
// and asks for no room of its own, and rates are of samples; with
// --dataset, no probe makes or removes any.
func TestTrainProbesShareDataset(t *testing.T) {
	tp := &trainProbes{samples: 2, share: true}
	var got []string
	for _, rate := range []float64{0, 10, 20} {
		job := &cluster.Job{Need: 1 << 20, Pace: &cluster.Pace{Rate: rate}}
		tp.pace(job)
		if job.Pace.Rate != 2*rate || rate > 0 && job.Need != 0 {
			t.Errorf("probe at %g steps/s: %g samples/s asked, room %d", rate, job.Pace.Rate, job.Need)
		}
		got = append(got, job.Pace.Dataset)
	}
	if want := []string{cluster.DatasetKeep, cluster.DatasetReuse, cluster.DatasetReuse}; !slices.Equal(got, want) || !tp.oneRun() {
		t.Errorf("datasets %v, want %v in one run", got, want)
	}
	given := &trainProbes{samples: 2}
	job := &cluster.Job{Pace: &cluster.Pace{Rate: 1}}
	given.pace(job)
	if job.Pace.Dataset != "" || given.oneRun() {
		t.Errorf("--dataset: probe dataset %q", job.Pace.Dataset)
	}
}
