package cli

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

// parseTrain runs the train command's flag handling and captures the
// options.
func parseTrain(t *testing.T, args ...string) (*TrainOptions, int, string) {
	t.Helper()
	return parseWith(t, newTrainCmdWith, args)
}

func TestTrainFlags(t *testing.T) {
	o, code, msg := parseTrain(t, "/mnt/x", "--model", "unet3d", "--accelerator-type", "a100", "-p", "6", "--dataset-files", "84")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	if o.Model != "unet3d" || o.Accelerator != "a100" || o.Accelerators != 6 || o.ComputeTime != 636*time.Millisecond || o.BatchSize != 7 || o.Path != "/mnt/x" {
		t.Errorf("preset: %+v", o.Options)
	}
	o, code, msg = parseTrain(t, "/mnt/x", "--model", "resnet50", "--dataset-files", "3", "--samples-per-file", "1000", "--sample-size", "64K",
		"--sample-size-stdev", "1K", "--batch-size", "10", "--read-threads", "3", "--prefetch", "0", "--compute-time", "5ms",
		"--au-threshold", "55.5", "--epochs", "4", "--seed", "77")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, msg)
	}
	x := o.Options
	if x.Files != 3 || x.SamplesPerFile != 1000 || x.SampleSize != 65536 || x.SampleStdev != 1024 || x.BatchSize != 10 ||
		x.ReadThreads != 3 || x.Prefetch != 0 || x.ComputeTime != 5*time.Millisecond || x.AUThreshold != 55.5 || x.Epochs != 4 || x.Seed != 77 {
		t.Errorf("overrides: %+v", x)
	}
	job := filepath.Join(t.TempDir(), "mine.yaml")
	os.WriteFile(job, []byte("name: mine\ndataset: {files: 2, samples_per_file: 50, sample_size: 1K}\nreader: {batch_size: 5, read_threads: 1}\ntrain: {epochs: 1, compute_time: 1ms, au_threshold: 10}\n"), 0o644)
	o, code, msg = parseTrain(t, "/mnt/x", "-f", job, "--batch-size", "6")
	if code != 0 || o.Model != "mine" || o.BatchSize != 6 || o.Files != 2 {
		t.Errorf("job file: exit %d %s: %+v", code, msg, o)
	}
}

// TestTrainBadInput: mistakes are usage errors (exit 2) with one line
// naming them, before anything is created.
func TestTrainBadInput(t *testing.T) {
	notDataset := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--batch-size", "0"}, "--batch-size must be between 1"},
		{[]string{"--sample-size", "0"}, "--sample-size must be greater than 0"},
		{[]string{"--au-threshold", "101"}, "not a percentage"},
		{[]string{"--au-threshold", "-1"}, "not a percentage"},
		{[]string{"-p", "0"}, "--threads must be between 1"},
		{[]string{"--dataset-files", "1", "--samples-per-file", "2", "--batch-size", "1", "-p", "3"}, "3 accelerators for 2 samples"},
		{[]string{"--dataset-files", "1", "-p", "4"}, "at least 2 are needed"},
		{[]string{"--dataset", notDataset}, "holds no files to read"},
		{[]string{"--dataset", notDataset, "--dataset-files", "3"}, "--dataset-files shapes a new dataset"},
		{[]string{"--model", "gpt"}, "no preset gpt"},
		{[]string{"--model", "unet3d", "--accelerator-type", "b200"}, "no preset unet3d for accelerator b200"},
		{[]string{"--compute-time", "soon"}, "--compute-time"},
		{[]string{"--drop-caches", "always"}, "auto or never"},
		{[]string{"-f", "/nonexistent.yaml"}, "-f /nonexistent.yaml"},
	} {
		dir := t.TempDir()
		app, _, errb := testApp(nil)
		code := Run(context.Background(), app, append([]string{"train", dir}, c.args...))
		msg := errb.String()
		if code != ExitUsage || !strings.Contains(msg, c.want) || strings.Count(strings.TrimSpace(msg), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want 2 and one line saying %q", c.args, code, msg, c.want)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%v: created %v", c.args, ents)
		}
	}
}

func TestTrainPrintJob(t *testing.T) {
	app, out, _ := testApp(nil)
	if code := Run(context.Background(), app, []string{"train", "--print-job", "--model", "cosmoflow"}); code != 0 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(out.String(), "sample_size: 2828486") {
		t.Errorf("printed %q", out.String())
	}
}

// TestTrainRun: the command on a tmpfs, with JSON out, an expectation,
// an AU too short to judge (18 measured steps; exit 0 and a warning) and
// a failing AU threshold over enough steps (exit 3, the AU named).
func TestTrainRun(t *testing.T) {
	dir := testenv.Tmpfs(t, "64m")
	args := []string{"train", dir, "--dataset-files", "4", "--samples-per-file", "25", "--sample-size", "8K", "--batch-size", "5",
		"-p", "2", "--compute-time", "2ms", "--epochs", "1", "-o", "json", "--expect", "train>=1MiB/s"}
	app, out, errb := testApp(nil)
	if code := Run(context.Background(), app, args); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	checkSchema(t, "train's result", out.Bytes())
	r, err := report.ReadJSON(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	if r.Command != "train" || r.Training == nil || r.Training.Samples != 100 || len(r.Expectations) != 2 || r.FindPhase("train").Items != 100 {
		t.Errorf("result: %+v", r)
	}
	if x := r.Expectations[0]; x.Expr != "au>=90%" || x.Verdict != report.VerdictTooShort || !x.Pass || r.Training.MeasuredSteps != 18 ||
		!strings.Contains(errb.String(), "Warning: au>=90%: too short to judge: 18 measured steps, an AU against 90% needs 100") {
		t.Errorf("AU over 18 steps: %+v, %d steps; stderr %s", x, r.Training.MeasuredSteps, errb)
	}
	// The accelerators cannot be kept busy when computing takes no time:
	// AU 0 over 48 measured steps, more than the 20 a threshold of 50%
	// needs.
	app, out, errb = testApp(nil)
	code := Run(context.Background(), app, append(args[:len(args)-2], "--compute-time", "0", "--au-threshold", "50", "--batch-size", "2"))
	if code != ExitExpectation || !strings.Contains(errb.String(), "au>=50%") {
		t.Errorf("failing AU: exit %d: %s", code, errb)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// TestTrainDLIOPresets: the presets of DLIO's own configs run like
// MLPerf's. bert has a v100 preset only, so --model bert alone takes it;
// --quick trains five epochs of it (here on 2 of its record files, with
// almost no computation, to be quick) and the result names the model and
// carries its batches of 48 samples of 2,500 B.
func TestTrainDLIOPresets(t *testing.T) {
	o, code, msg := parseTrain(t, "/mnt/x", "--model", "resnet50", "--accelerator-type", "v100")
	if code != 0 || o.BatchSize != 64 || o.ComputeTime != 195*time.Millisecond || o.Accelerator != "v100" {
		t.Errorf("resnet50 on v100: exit %d %s: %+v", code, msg, o)
	}
	app, out, _ := testApp(nil)
	if code := Run(context.Background(), app, []string{"train", "--print-job", "--model", "megatron-deepspeed"}); code != 0 ||
		!strings.Contains(out.String(), "megatron_deepspeed_LLNL.yaml") || !strings.Contains(out.String(), "compute_time: 2.44s") {
		t.Errorf("print-job: exit %d: %s", code, out)
	}
	dir := testenv.Tmpfs(t, "64m")
	app, out, errb := testApp(nil)
	if code := Run(context.Background(), app, []string{"train", dir, "--model", "bert", "--quick", "--dataset-files", "2",
		"--compute-time", "1ms", "-o", "json"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	r, err := report.ReadJSON(strings.NewReader(out.String()))
	if err != nil {
		t.Fatal(err)
	}
	tr := r.Training
	if tr == nil || tr.Model != "bert" || tr.Accelerator != "v100" || tr.BatchSize != 48 || tr.Epochs != 5 || tr.Samples != 5*41*48 ||
		tr.DatasetBytes != 2*1000*2500 {
		t.Errorf("bert --quick: %+v", tr)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}
