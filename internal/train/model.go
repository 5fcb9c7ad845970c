// Package train is `fsbench train`: an emulator of the data loading of AI
// training, with DLIO's model (what MLPerf Storage measures). A dataset of
// samples is generated in the run's own directory (or reused); then each
// emulated accelerator (a rank) has reader goroutines that read the
// samples of its shard, shuffled per epoch, into batches ahead of use,
// while the accelerator "computes" each batch for a fixed time (a sleep)
// and waits when the next batch is not ready. The figure of merit is the
// accelerator utilisation (AU): compute time over wall time.
//
// A model is a job file (YAML); the MLPerf Storage workloads are presets
// embedded in the binary.
//
// It is an emulation, not an MLPerf Storage result; it knows nothing of the
// command line, and writes and removes nothing outside the run's own
// directory or key prefix.
package train

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/fsbench/fsbench/internal/units"
)

// Model is what a training job emulates: the dataset, the reader and the
// accelerators' computation.
type Model struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
	Model       string `yaml:"model"`
	Accelerator string `yaml:"accelerator"`
	Dataset     struct {
		Files          int  `yaml:"files"`
		SamplesPerFile int  `yaml:"samples_per_file"`
		SampleSize     Size `yaml:"sample_size"`
		SampleStdev    Size `yaml:"sample_size_stdev"`
	} `yaml:"dataset"`
	Reader struct {
		BatchSize   int `yaml:"batch_size"`
		ReadThreads int `yaml:"read_threads"`
		Prefetch    int `yaml:"prefetch"`
	} `yaml:"reader"`
	Train struct {
		Epochs      int      `yaml:"epochs"`
		ComputeTime Duration `yaml:"compute_time"`
		AUThreshold float64  `yaml:"au_threshold"` // percent
	} `yaml:"train"`
	File string `yaml:"-"` // where it was read from
}

// Size is a byte count in a job file: a number or a size such as 112K.
type Size int64

// UnmarshalYAML reads a size.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := units.ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*s = Size(v)
	return nil
}

// Duration is a time in a job file: 0.224s, 500ms, or a number of seconds
// (as DLIO's computation_time).
type Duration time.Duration

// UnmarshalYAML reads a duration.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := units.ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %v", n.Line, err)
	}
	*d = Duration(v)
	return nil
}

//go:embed presets/*.yaml
var presets embed.FS

// Presets lists the embedded models as MODEL-ACCELERATOR names.
func Presets() []string {
	ents, _ := fs.ReadDir(presets, "presets")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// PresetModels lists the models of the presets, and PresetAccelerators
// the accelerator types a model has presets for.
func PresetModels() []string {
	var out []string
	for _, p := range Presets() {
		if m, _ := cutPreset(p); !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

func PresetAccelerators(model string) []string {
	var out []string
	for _, p := range Presets() {
		if m, a := cutPreset(p); m == strings.ToLower(model) {
			out = append(out, a)
		}
	}
	return out
}

// cutPreset cuts a preset's name at its last dash: models have dashes of
// their own, accelerator types none.
func cutPreset(name string) (string, string) {
	i := strings.LastIndex(name, "-")
	return name[:i], name[i+1:]
}

// Preset returns the embedded model for a model name and an accelerator
// type.
func Preset(model, accel string) (*Model, error) {
	name := strings.ToLower(model) + "-" + strings.ToLower(accel)
	data, err := presets.ReadFile("presets/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no preset %s for accelerator %s (presets: %s)", model, accel, strings.Join(Presets(), ", "))
	}
	return Parse(data, "preset "+name)
}

// PresetText returns the job file of a preset, to start one's own from.
func PresetText(model, accel string) ([]byte, error) {
	return presets.ReadFile("presets/" + strings.ToLower(model) + "-" + strings.ToLower(accel) + ".yaml")
}

// Parse reads a job file; name is used in messages. Unknown keys are
// errors, so that a typo does not silently keep a default.
func Parse(data []byte, name string) (*Model, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	m := &Model{File: name}
	if err := dec.Decode(m); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s: empty job file", name)
		}
		return nil, yamlError(name, err)
	}
	if m.Model == "" {
		m.Model = m.Name
	}
	return m, nil
}

// Apply sets the options the model defines; the others stay.
func (m *Model) Apply(o *Options) {
	o.Model, o.Accelerator = m.Model, m.Accelerator
	o.Files, o.SamplesPerFile = m.Dataset.Files, m.Dataset.SamplesPerFile
	o.SampleSize, o.SampleStdev = int64(m.Dataset.SampleSize), int64(m.Dataset.SampleStdev)
	o.BatchSize, o.ReadThreads, o.Prefetch = m.Reader.BatchSize, m.Reader.ReadThreads, m.Reader.Prefetch
	o.Epochs, o.ComputeTime, o.AUThreshold = m.Train.Epochs, time.Duration(m.Train.ComputeTime), m.Train.AUThreshold
}

var (
	yamlLine     = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)
	unknownField = regexp.MustCompile(`^field (\S+) not found in type .*$`)
)

// yamlError is a job file's first mistake in one line: FILE:LINE: what.
func yamlError(name string, err error) error {
	msg := err.Error()
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		msg = te.Errors[0]
	}
	m := yamlLine.FindStringSubmatch(strings.TrimSpace(msg))
	if m == nil {
		return fmt.Errorf("%s: %s", name, strings.TrimPrefix(msg, "yaml: "))
	}
	what := m[2]
	if u := unknownField.FindStringSubmatch(what); u != nil {
		what = fmt.Sprintf("unknown key %q", u[1])
	}
	return fmt.Errorf("%s:%s: %s", name, m[1], what)
}
