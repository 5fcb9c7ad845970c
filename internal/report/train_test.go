package report

import (
	"bytes"
	"strings"
	"testing"
)

// TestTrainingTable: the table of a train result shows the verdict, the
// epochs and the searched counts.
func TestTrainingTable(t *testing.T) {
	tr := &Training{Model: "resnet50", Accelerator: "h100", Epochs: 2, Steps: 3, BatchSize: 400, Threshold: 90,
		Ranks:   []RankTrain{{Epochs: []RankEpoch{{Compute: 9, Wall: 10, Seconds: 12}, {Compute: 8, Wall: 10, Seconds: 11}}}},
		FindMax: []Trial{{Accelerators: 1, AU: 95, Pass: true}, {Accelerators: 2, AU: 80}}}
	tr.Summarize()
	r := &Result{Command: "train", Phases: []PhaseResult{{Name: "train", Title: "Train resnet50"}}, Training: tr}
	var b bytes.Buffer
	if err := WriteTable(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"AU: 85.00% (stdev 5.00% over epochs), threshold 90%: FAIL", "epoch 1: AU 90.00%",
		"epoch 2: AU 80.00%", "find-max: 1 accelerators: AU 95.00% pass", "find-max: 2 accelerators: AU 80.00% fail"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}

// TestTrainingTableVerdict: an AU too short to judge is shown with its
// interval and what would make it judgeable, in the AU line and the
// expectations, never as PASS or FAIL.
func TestTrainingTableVerdict(t *testing.T) {
	lo, hi := 74.21, 100.0
	tr := &Training{Model: "resnet50", Accelerator: "h100", Epochs: 1, Steps: 6, BatchSize: 400, Threshold: 90,
		Ranks:         []RankTrain{{Epochs: []RankEpoch{{Compute: 1.12, Wall: 1.12}}}},
		MeasuredSteps: 10, AULow: &lo, AUHigh: &hi, AUConfidence: 0.95, Verdict: VerdictTooShort,
		VerdictReason: "10 measured steps, an AU against 90% needs 100: more steps per epoch (--files), more --epochs, or --repeat"}
	tr.Summarize()
	r := &Result{Command: "train", Phases: []PhaseResult{{Name: "train", Title: "Train resnet50"}}, Training: tr,
		Expectations: []Expectation{{Expr: "au>=90%", Metric: "au", Op: ">=", Want: 90, Unit: "%", Measured: 100, Pass: true,
			Verdict: VerdictTooShort, Reason: tr.VerdictReason}}}
	var b bytes.Buffer
	if err := WriteTable(&b, r, Options{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"AU: 100.00% (95% interval 74.21-100.00% over 10 measured steps, stdev 0.00% over epochs), threshold 90%: TOO SHORT TO JUDGE: 10 measured steps, an AU against 90% needs 100",
		// The expectation's result wraps inside its cell, within 120 columns.
		"| TOO SHORT TO JUDGE: 10 measured steps, an AU against 90% needs 100: more steps per epoch |",
		"| (--files), more --epochs, or --repeat ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String(), "PASS") || strings.Contains(b.String(), "FAIL") {
		t.Errorf("a verdict too short to judge shown as PASS or FAIL:\n%s", b.String())
	}
}
