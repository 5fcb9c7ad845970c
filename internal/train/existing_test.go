package train

import (
	"context"
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
)

// TestRunExistingDataset trains on a directory of files fsbench did not
// write (nested, of many sizes, with an empty file and a symbolic link):
// one sample a file, every read sample counted with its file's size, and
// the files, their times included, unchanged.
func TestRunExistingDataset(t *testing.T) {
	data := t.TempDir()
	old := time.Unix(1_000_000_000, 0)
	for i, size := range []int{1, 100, 4096, 5000, 70 << 10, 3, 200 << 10, 12345, 9, 64 << 10, 1 << 20, 777, 0} {
		p := filepath.Join(data, "class-"+string(rune('a'+i%3)), "img-"+string(rune('a'+i))+".jpg")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		b := make([]byte, size)
		rand.Read(b)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("class-a", filepath.Join(data, "link")); err != nil {
		t.Fatal(err)
	}
	before := testenv.Snapshot(t, data, true)

	ds, err := OpenDataset(data)
	if err != nil {
		t.Fatal(err)
	}
	if !ds.Existing() || ds.Samples() != 12 || ds.MaxSample() != 1<<20 {
		t.Fatalf("dataset: %d samples, largest %d; want 12 (the empty file holds none), 1 MiB", ds.Samples(), ds.MaxSample())
	}
	work := t.TempDir()
	o := small(work)
	o.Dataset, o.Accelerators, o.BatchSize, o.DropCaches = data, 2, 2, true
	var res report.Result
	if err := Run(context.Background(), o, &res); err != nil {
		t.Fatal(err)
	}
	// What the plan reads: the shards of every rank in every epoch, each
	// sample its file's size.
	p, err := NewPlan(ds.Samples(), o.ranks(), o.BatchSize)
	if err != nil {
		t.Fatal(err)
	}
	var samples, bytes int64
	for e := range o.Epochs {
		s := NewShuffle(p.Samples, o.Seed, e)
		for r := range p.Ranks {
			for j := range p.Steps * p.Batch {
				_, _, size := ds.Locate(p.Sample(s, r, j))
				samples++
				bytes += size
			}
		}
	}
	tr := res.FindPhase("train")
	if res.FindPhase("generate") != nil || tr == nil || tr.Items != samples || tr.Bytes != bytes || tr.Errors != 0 {
		t.Errorf("phases %+v; want a train phase of %d samples, %d bytes", res.Phases, samples, bytes)
	}
	testenv.SameTree(t, "dataset", before, testenv.Snapshot(t, data, true))
	if ents, _ := os.ReadDir(work); len(ents) != 0 {
		t.Errorf("left %d entries in PATH", len(ents))
	}

	o.Direct = true
	if err := Run(context.Background(), o, &report.Result{}); err == nil {
		t.Errorf("--direct with a dataset of existing files: no error")
	}
}
