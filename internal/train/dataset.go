package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// Dataset is the shape of a dataset: its files, the samples in each, and
// every sample's size, drawn from a normal distribution seeded by Seed.
// With one sample per file a sample is a file; otherwise samples lie one
// after another in their file (a record file) and are read by offset.
type Dataset struct {
	Version int    `json:"version"`
	Files   int    `json:"files"`
	PerFile int    `json:"samples_per_file"`
	Mean    int64  `json:"sample_size"`
	Stdev   int64  `json:"sample_size_stdev"`
	Seed    uint64 `json:"seed"`
	// Align rounds every sample's size up to a multiple (O_DIRECT's
	// alignment); 1 otherwise.
	Align int64 `json:"align"`
	Bytes int64 `json:"bytes"`
	// Compress and Dedupe are the ratios the files were written at
	// (pattern.Data); absent (0) for content that neither compresses nor
	// repeats.
	Compress float64 `json:"compress_ratio,omitempty"`
	Dedupe   float64 `json:"dedupe_ratio,omitempty"`

	dir string
	off []int64 // start of each sample in its file, then the file's end; nil with Stdev 0
	max int64
	// paths are the files of a dataset of existing files (openFiles), one
	// sample each, relative to dir; nil for a dataset fsbench made.
	paths []string
	// keyed: the files are objects of a store, and dir is the URL of
	// their prefix, ending in "/".
	keyed bool
}

// markerName is the file that says a directory holds a complete dataset
// and what its shape is.
const markerName = "fsbench-train.json"

const datasetVersion = 1

// NewDataset lays out the shape of a dataset in dir.
func NewDataset(dir string, files, perFile int, mean, stdev int64, seed uint64, align int64) *Dataset {
	d := &Dataset{Version: datasetVersion, Files: files, PerFile: perFile, Mean: mean, Stdev: stdev, Seed: seed, Align: max(align, 1), dir: dir}
	d.layout()
	return d
}

// Data is how the dataset's content compresses and repeats.
func (d *Dataset) Data() pattern.Data { return pattern.Data{Compress: d.Compress, Dedupe: d.Dedupe} }

// setData records that the files are written like d: ratios of 1 as none.
func (d *Dataset) setData(x pattern.Data) {
	d.Compress, d.Dedupe = 0, 0
	if x.Compress > 1 {
		d.Compress = x.Compress
	}
	if x.Dedupe > 1 {
		d.Dedupe = x.Dedupe
	}
}

// layout computes the samples' sizes and offsets.
func (d *Dataset) layout() {
	if d.Stdev == 0 {
		d.max = d.round(d.Mean)
		d.Bytes = d.max * int64(d.Samples())
		return
	}
	rng := rand.New(rand.NewPCG(d.Seed, 0x73616d706c65))
	d.off = make([]int64, 0, d.Samples()+d.Files)
	d.Bytes, d.max = 0, 0
	for f := 0; f < d.Files; f++ {
		var pos int64
		for range d.PerFile {
			size := d.round(int64(math.Round(float64(d.Mean) + float64(d.Stdev)*rng.NormFloat64())))
			d.off = append(d.off, pos)
			pos += size
			d.max = max(d.max, size)
		}
		d.off = append(d.off, pos)
		d.Bytes += pos
	}
}

// round clips a size to at least one byte and rounds it up to the
// alignment.
func (d *Dataset) round(n int64) int64 {
	n = max(n, 1)
	return (n + d.Align - 1) / d.Align * d.Align
}

// Samples is the number of samples.
func (d *Dataset) Samples() int { return d.Files * d.PerFile }

// MaxSample is the size of the largest sample.
func (d *Dataset) MaxSample() int64 { return d.max }

// Dir is where the dataset's files are.
func (d *Dataset) Dir() string { return d.dir }

// Locate returns the file of sample i, and its offset and size there.
func (d *Dataset) Locate(i int) (file int, off, size int64) {
	file, k := i/d.PerFile, i%d.PerFile
	if d.off == nil {
		return file, int64(k) * d.max, d.max
	}
	j := file*(d.PerFile+1) + k
	return file, d.off[j], d.off[j+1] - d.off[j]
}

// FileSize is the size of file f.
func (d *Dataset) FileSize(f int) int64 {
	if d.off == nil {
		return int64(d.PerFile) * d.max
	}
	return d.off[f*(d.PerFile+1)+d.PerFile]
}

// Key is the name of file f relative to the dataset's directory (or
// prefix).
func (d *Dataset) Key(f int) string {
	if d.paths != nil {
		return d.paths[f]
	}
	return "sample-" + pad(f) + ".rec"
}

// Path is the path of file f, or the URL of its object.
func (d *Dataset) Path(f int) string {
	if d.keyed {
		return d.dir + d.Key(f)
	}
	return filepath.Join(d.dir, d.Key(f))
}

// Paths are the paths of the dataset's files.
func (d *Dataset) Paths() []string {
	out := make([]string, d.Files)
	for f := range out {
		out[f] = d.Path(f)
	}
	return out
}

// Existing reports whether the dataset is a directory of existing files,
// which fsbench reads and never writes.
func (d *Dataset) Existing() bool { return d.paths != nil }

// openFiles makes a dataset of the regular files below dir, one sample
// each, of its size: any directory of data, such as a real training set.
// Empty files hold no sample and are left out, as are symbolic links and
// special files.
func openFiles(dir string) (*Dataset, error) {
	l, err := workload.ListTree(context.Background(), dir)
	if err != nil {
		return nil, fmt.Errorf("--dataset %s: %w", dir, sysio.PathCause(err))
	}
	d := &Dataset{Version: datasetVersion, PerFile: 1, Align: 1, dir: dir}
	for _, f := range l.Files {
		if f.Size == 0 {
			continue
		}
		d.paths = append(d.paths, f.Name)
		d.off = append(d.off, 0, f.Size)
		d.Bytes += f.Size
		d.max = max(d.max, f.Size)
	}
	return d, d.checkExisting()
}

// checkExisting counts the files of a dataset of existing files and
// checks that it can be trained on.
func (d *Dataset) checkExisting() error {
	d.Files = len(d.paths)
	switch {
	case d.Files == 0:
		return badf("--dataset %s holds no files to read (and no %s of a generated dataset)", d.dir, markerName)
	case d.Files > maxSamples:
		return badf("--dataset %s holds %d files, more than %d samples", d.dir, d.Files, maxSamples)
	case d.max > maxSample:
		return badf("--dataset %s: a file of %s is larger than a sample may be (%s)", d.dir, units.FormatBytes(d.max), units.FormatBytes(maxSample))
	}
	d.Mean = d.Bytes / int64(d.Files)
	return nil
}

func pad(n int) string {
	s := strconv.Itoa(n)
	for len(s) < 7 {
		s = "0" + s
	}
	return s
}

// writeMarker records that the dataset in its directory is complete.
func (d *Dataset) writeMarker() error {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(d.dir, markerName)
	if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("write %s: %w", p, sysio.PathCause(err))
	}
	return nil
}

// OpenDataset reads the dataset an earlier run kept in dir, and checks
// that its files are there at their sizes. A directory without the
// description of a kept dataset is a dataset of existing files, one
// sample each (openFiles).
func OpenDataset(dir string) (*Dataset, error) {
	st, err := os.Stat(dir)
	switch {
	case err != nil:
		return nil, badf("--dataset %s: %v", dir, sysio.PathCause(err))
	case !st.IsDir():
		return nil, badf("--dataset %s is not a directory", dir)
	}
	data, err := os.ReadFile(filepath.Join(dir, markerName))
	if errors.Is(err, fs.ErrNotExist) {
		return openFiles(dir)
	} else if err != nil {
		return nil, fmt.Errorf("--dataset %s: %w", dir, sysio.PathCause(err))
	}
	d, err := parseMarker(data, dir)
	if err != nil {
		return nil, err
	}
	return d, d.check()
}

// parseMarker reads the description of a dataset kept in dir and lays
// it out.
func parseMarker(data []byte, dir string) (*Dataset, error) {
	var d Dataset
	if err := json.Unmarshal(data, &d); err != nil || d.Version != datasetVersion {
		return nil, badf("--dataset %s: %s is not a dataset description this fsbench reads", dir, markerName)
	}
	if d.Files < 1 || d.PerFile < 1 || d.Mean < 1 || d.Stdev < 0 || d.Mean > maxSample || d.Stdev > maxSample ||
		d.Align < 1 || d.Align > 1<<20 || int64(d.Files)*int64(d.PerFile) > maxSamples || d.Data().Check() != nil {
		return nil, badf("--dataset %s: %s describes no valid dataset", dir, markerName)
	}
	d.dir = dir
	d.layout()
	return &d, nil
}

// check compares the files with the shape.
func (d *Dataset) check() error {
	for f := 0; f < d.Files; f++ {
		st, err := os.Stat(d.Path(f))
		if err != nil {
			return badf("--dataset %s is incomplete: %v", d.dir, err)
		}
		if st.Size() != d.FileSize(f) {
			return badf("--dataset %s is incomplete: %s is %d bytes, want %d", d.dir, d.Path(f), st.Size(), d.FileSize(f))
		}
	}
	return nil
}
