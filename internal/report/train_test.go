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
	r := &Result{Command: "train", Phases: []Phase{{Name: "train", Title: "Train resnet50"}}, Training: tr}
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
