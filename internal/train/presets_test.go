package train

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/verdict"
)

// Commits of the configs the presets come from.
const (
	mlperfStorage = "github.com/mlcommons/storage configs/dlio/workload/"
	mlperfCommit  = "caa90c9c7d6a543de815222fff834a846823f922"
	dlio          = "github.com/argonne-lcf/dlio_benchmark dlio_benchmark/configs/workload/"
	dlioCommit    = "e1919d7b6ccffbe15143cd616517da9e5d7b26a7"
)

// source is what a DLIO workload config says, transcribed from it: the
// preset must carry the same figures. files and epochs are the config's;
// a preset shrinks them (and, where one record file alone is hours of
// steps, perFile) for a test machine and says the config's figures in its
// comment.
type source struct {
	repo, config, commit string
	size, stdev          int64
	perFile, batch       int
	readers              int
	compute              time.Duration
	threshold            float64 // the config's metric.au, or DLIO's default 0.90
	files, epochs        int
}

var sources = map[string]source{
	"unet3d-h100":    {mlperfStorage, "unet3d_h100.yaml", mlperfCommit, 146600628, 68341808, 1, 7, 4, 323 * time.Millisecond, 90, 168, 5},
	"unet3d-a100":    {mlperfStorage, "unet3d_a100.yaml", mlperfCommit, 146600628, 68341808, 1, 7, 4, 636 * time.Millisecond, 90, 168, 5},
	"resnet50-h100":  {mlperfStorage, "resnet50_h100.yaml", mlperfCommit, 114660, 0, 1251, 400, 8, 224 * time.Millisecond, 90, 1024, 5},
	"resnet50-a100":  {mlperfStorage, "resnet50_a100.yaml", mlperfCommit, 114660, 0, 1251, 400, 8, 435 * time.Millisecond, 90, 1024, 5},
	"cosmoflow-h100": {mlperfStorage, "cosmoflow_h100.yaml", mlperfCommit, 2828486, 71311, 1, 1, 4, 3500 * time.Microsecond, 70, 524288, 5},
	"cosmoflow-a100": {mlperfStorage, "cosmoflow_a100.yaml", mlperfCommit, 2828486, 71311, 1, 1, 4, 5510 * time.Microsecond, 70, 524288, 5},
	"unet3d-v100":    {dlio, "unet3d_v100.yaml", dlioCommit, 146600628, 68341808, 1, 4, 4, 1360400 * time.Microsecond, 90, 168, 5},
	"resnet50-v100":  {dlio, "resnet50_v100.yaml", dlioCommit, 114660, 0, 1251, 64, 8, 195 * time.Millisecond, 90, 1024, 5},
	"resnet50-dlio":  {dlio, "resnet50_tf.yaml", dlioCommit, 114660, 0, 1251, 64, 8, 98 * time.Millisecond, 90, 1024, 1},
	"cosmoflow-v100": {dlio, "cosmoflow_v100.yaml", dlioCommit, 2828486, 71311, 1, 1, 4, 9360 * time.Microsecond, 90, 524288, 5},
	"bert-v100":      {dlio, "bert_v100.yaml", dlioCommit, 2500, 0, 313532, 48, 1, 968 * time.Millisecond, 90, 500, 1},
	"dlrm-dlio":      {dlio, "dlrm.yaml", dlioCommit, 671088640, 0, 1024, 1, 1, 64296 * time.Microsecond, 90, 1, 1},
	"megatron-deepspeed-dlio": {dlio, "megatron_deepspeed_LLNL.yaml", dlioCommit, 2048, 0, 277203535, 16, 1,
		2440 * time.Millisecond, 90, 1, 3},
}

// TestPresets: every preset reads, carries the figures of the config it
// comes from, and cites that config (repository, path and commit) and its
// dataset's real size.
func TestPresets(t *testing.T) {
	if got := Presets(); len(got) != len(sources) {
		t.Fatalf("presets %v, want the %d of the table", got, len(sources))
	}
	for name, w := range sources {
		model, accel := cutPreset(name)
		o := presetOptions(t, name)
		if o.SampleSize != w.size || o.SampleStdev != w.stdev || o.BatchSize != w.batch || o.ReadThreads != w.readers ||
			o.ComputeTime != w.compute || o.AUThreshold != w.threshold || o.Model != model || o.Accelerator != accel {
			t.Errorf("%s: %+v, want %+v", name, o, w)
		}
		if o.SamplesPerFile != w.perFile && !strings.Contains(name, "bert") && !strings.Contains(name, "dlrm") && !strings.Contains(name, "megatron") {
			t.Errorf("%s: %d samples per file, want the config's %d", name, o.SamplesPerFile, w.perFile)
		}
		text, _ := PresetText(model, accel)
		comment := strings.Join(strings.Fields(strings.ReplaceAll(string(text), "\n#", "\n")), " ")
		for _, cite := range []string{w.repo + w.config, "at commit " + w.commit, commas(w.files) + " file", commas(w.perFile)} {
			if !strings.Contains(comment, cite) {
				t.Errorf("%s: the comment does not say %q", name, cite)
			}
		}
		if w.epochs > 1 && !strings.Contains(comment, strconv.Itoa(w.epochs)+" epochs") {
			t.Errorf("%s: the comment does not name the config's %d epochs", name, w.epochs)
		}
		if err := o.Validate(); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := NewPlan(o.Files*o.SamplesPerFile, 1, o.BatchSize); err != nil {
			t.Errorf("%s: one accelerator cannot train on the default dataset: %v", name, err)
		}
	}
	if _, err := Preset("bert", "h100"); err == nil || !strings.Contains(err.Error(), "resnet50-h100") {
		t.Errorf("unknown preset: %v", err)
	}
}

// commas writes n with thousands separators, as the comments do.
func commas(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// presetOptions are the options of preset name, on one accelerator.
func presetOptions(t *testing.T, name string) Options {
	t.Helper()
	m, err := Preset(cutPreset(name))
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Path: "/x", Accelerators: 1, GenThreads: 1}
	m.Apply(&o)
	return o
}

// presetBytes is the most data a preset's default dataset may hold: a
// test machine's run.
const presetBytes = 8 << 30

// TestPresetsJudged: a preset's default run on one accelerator measures
// the steps its AU threshold needs for a verdict, unless those steps read
// more than presetBytes; then the default run is too short to judge, as
// docs/training-models.md says of unet3d and dlrm.
func TestPresetsJudged(t *testing.T) {
	var short []string
	for name := range sources {
		o := presetOptions(t, name)
		plan, err := NewPlan(o.Files*o.SamplesPerFile, 1, o.BatchSize)
		if err != nil {
			t.Fatal(err)
		}
		measured := int64(plan.Steps-1) * int64(o.Epochs)
		need := verdict.MinSteps(o.AUThreshold)
		perEpoch := (need+int64(o.Epochs)-1)/int64(o.Epochs) + 1
		if bytes := perEpoch * int64(o.BatchSize) * o.SampleSize; measured < need {
			if bytes <= presetBytes {
				t.Errorf("%s: %d measured steps by default, a verdict needs %d (%s of samples would do)", name, measured, need, units.FormatBytes(bytes))
			}
			short = append(short, name)
		}
	}
	slices.Sort(short)
	if want := []string{"dlrm-dlio", "unet3d-a100", "unet3d-h100", "unet3d-v100"}; !slices.Equal(short, want) {
		t.Errorf("too short to judge by default: %v, want %v (docs/training-models.md)", short, want)
	}
}
