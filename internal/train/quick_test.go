package train

import (
	"testing"

	"github.com/fsbench/fsbench/internal/verdict"
)

// TestQuickFiles: --quick's files hold the measured steps the AU needs
// over its epochs, the first step of each epoch aside, for any number of
// ranks: resnet50 (1,251 samples a file, batches of 400) on one h100 over
// five epochs needs 21 steps an epoch, 7 files.
func TestQuickFiles(t *testing.T) {
	o := Options{Accelerators: 1, Epochs: 5, BatchSize: 400, SamplesPerFile: 1251, AUThreshold: 90}
	if got := QuickFiles(o, 0); got != 7 {
		t.Errorf("resnet50, one rank: %d files, want 7", got)
	}
	for _, c := range []struct{ accel, hosts, epochs int }{{1, 0, 1}, {4, 0, 5}, {8, 3, 2}, {1, 0, 200}} {
		o.Accelerators, o.Epochs = c.accel, c.epochs
		files := QuickFiles(o, c.hosts)
		ranks := c.accel * max(c.hosts, 1)
		steps := files * o.SamplesPerFile / (ranks * o.BatchSize)
		if measured := int64(c.epochs * ranks * (steps - 1)); measured < verdict.MinSteps(90) {
			t.Errorf("%+v: %d files, %d measured steps, want %d", c, files, measured, verdict.MinSteps(90))
		}
	}
}
