package train

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/testenv"
)

// TestDatasetSizes: sample sizes follow the seeded normal distribution,
// are never below one byte, and lie one after another in their files.
func TestDatasetSizes(t *testing.T) {
	d := NewDataset("/x", 50, 200, 10000, 3000, 5, 1)
	var sum, sq float64
	for f := 0; f < d.Files; f++ {
		var pos int64
		for k := 0; k < d.PerFile; k++ {
			file, off, size := d.Locate(f*d.PerFile + k)
			if file != f || off != pos || size < 1 {
				t.Fatalf("sample %d of file %d: file %d offset %d size %d, want offset %d", k, f, file, off, size, pos)
			}
			pos += size
			sum += float64(size)
			sq += float64(size) * float64(size)
		}
		if d.FileSize(f) != pos {
			t.Fatalf("file %d: size %d, samples add to %d", f, d.FileSize(f), pos)
		}
	}
	n := float64(d.Samples())
	mean := sum / n
	stdev := math.Sqrt(sq/n - mean*mean)
	if math.Abs(mean-10000) > 100 || math.Abs(stdev-3000) > 150 {
		t.Errorf("mean %.0f stdev %.0f, want about 10000 and 3000", mean, stdev)
	}
	if int64(sum) != d.Bytes {
		t.Errorf("Bytes %d, samples add to %.0f", d.Bytes, sum)
	}
	again := NewDataset("/x", 50, 200, 10000, 3000, 5, 1)
	other := NewDataset("/x", 50, 200, 10000, 3000, 6, 1)
	if again.Bytes != d.Bytes || other.Bytes == d.Bytes {
		t.Errorf("seeded sizes: same seed %d vs %d bytes, other seed %d", again.Bytes, d.Bytes, other.Bytes)
	}
	clipped := NewDataset("/x", 10, 100, 10, 1000, 1, 1)
	for i := range clipped.Samples() {
		if _, _, size := clipped.Locate(i); size < 1 {
			t.Fatalf("sample %d is %d bytes", i, size)
		}
	}
	direct := NewDataset("/x", 2, 3, 5000, 100, 1, 4096)
	for i := range direct.Samples() {
		if _, off, size := direct.Locate(i); off%4096 != 0 || size%4096 != 0 {
			t.Fatalf("aligned dataset: sample %d at %d, %d bytes", i, off, size)
		}
	}
}

// TestOpenDatasetRefuses: a directory that is not a complete dataset is
// bad input, with a message naming it.
func TestOpenDatasetRefuses(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	empty := t.TempDir()
	junk := t.TempDir()
	os.WriteFile(filepath.Join(junk, markerName), []byte("{not json"), 0o644)
	partial := t.TempDir()
	d := NewDataset(partial, 2, 1, 100, 0, 1, 1)
	if err := d.writeMarker(); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(d.Path(0), make([]byte, 100), 0o644)
	for _, c := range []struct{ dir, want string }{
		{filepath.Join(dir, "missing"), "no such file"},
		{file, "not a directory"},
		{empty, "holds no files to read"},
		{junk, "not a dataset description"},
		{partial, "incomplete"},
	} {
		_, err := OpenDataset(c.dir)
		if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want bad input saying %q", c.dir, err, c.want)
		}
	}
	os.WriteFile(d.Path(1), make([]byte, 100), 0o644)
	if got, err := OpenDataset(partial); err != nil || got.Samples() != 2 || got.Bytes != 200 {
		t.Errorf("complete dataset: %v, %v", got, err)
	}
}

func TestParseJob(t *testing.T) {
	m, err := Parse([]byte("name: mine\ndataset: {files: 3, samples_per_file: 2, sample_size: 4K, sample_size_stdev: 1K}\nreader: {batch_size: 2, read_threads: 1}\ntrain: {epochs: 1, compute_time: 0.01, au_threshold: 50}\n"), "mine.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var o Options
	m.Apply(&o)
	if o.Model != "mine" || o.SampleSize != 4096 || o.SampleStdev != 1024 || o.ComputeTime != 10*time.Millisecond || o.AUThreshold != 50 {
		t.Errorf("options %+v", o)
	}
	ex, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "examples", "train", "small-images.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if m, err = Parse(ex, "small-images.yaml"); err != nil {
		t.Fatalf("the example: %v", err)
	}
	m.Apply(&o)
	o.Path, o.Accelerators, o.GenThreads = "/x", 1, 1
	if err := o.Check(1); err != nil || o.SampleSize != 256<<10 {
		t.Errorf("the example: %v, %+v", err, o)
	}
	for bad, want := range map[string]string{
		"":                               "bad.yaml: empty job file",
		"name: x\nbatch: 3\n":            `bad.yaml:2: unknown key "batch"`,
		"reader:\n  batchsize: 3\n":      `bad.yaml:2: unknown key "batchsize"`,
		"dataset: {sample_size: lots}\n": `bad.yaml:1: invalid size "lots"`,
		"train: {compute_time: -1s}\n":   "bad.yaml:1: duration",
		"dataset: [1\n":                  "bad.yaml:1: did not find",
	} {
		_, err := Parse([]byte(bad), "bad.yaml")
		if err == nil || !strings.HasPrefix(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: %v, want one line starting %q", bad, err, want)
		}
	}
}

// TestSearch: the accelerator counts find-max tries, for a storage that
// keeps up to 13 accelerators busy.
func TestSearch(t *testing.T) {
	for _, c := range []struct {
		start, limit, max int
		want              []int
	}{
		{1, 100, 13, []int{1, 2, 4, 8, 16, 12, 14, 13}},
		{20, 100, 13, []int{20, 10, 15, 12, 13, 14}},
		{1, 6, 13, []int{1, 2, 4, 6}},
		{1, 100, 0, []int{1}},
	} {
		s := &search{next: c.start, limit: c.limit}
		var got []int
		for n, ok := s.first(); ok; n, ok = s.step() {
			got = append(got, n)
			s.record(n, n <= c.max)
		}
		if len(got) != len(c.want) {
			t.Errorf("from %d: tried %v, want %v", c.start, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("from %d: tried %v, want %v", c.start, got, c.want)
				break
			}
		}
		if exp := min(c.max, c.limit); s.lo != exp && !(c.max == 0 && s.lo == 0) {
			t.Errorf("from %d: found %d, want %d", c.start, s.lo, exp)
		}
	}
}
