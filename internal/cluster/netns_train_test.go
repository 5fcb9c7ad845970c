package cluster_test

import (
	"context"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/train"
)

// TestNetnsTrain: train on three test hosts with two accelerators each.
// Each host makes a third of the dataset in the run's shared directory;
// the six ranks read the shards of one shuffled order, so every host
// reads files the others made. The counts and bytes are exact, and
// nothing is left behind.
func TestNetnsTrain(t *testing.T) {
	_, agents, root := nsAgents(t, 3)
	out := coordinator(t, context.Background(), "train", root, "--dataset-files", "9", "--samples-per-file", "20",
		"--sample-size", "8K", "--sample-size-stdev", "1K", "--batch-size", "5", "-p", "2", "--read-threads", "2",
		"--compute-time", "5ms", "--epochs", "2", "--au-threshold", "1", "--seed", "3", "--hosts", hostsFlag(agents...), "-o", "json")
	r := resultOf(t, out)
	samples, bytes, foreign := trainPlan(t)
	gen, tr := r.FindPhase("generate"), r.FindPhase("train")
	ds := train.NewDataset("", 9, 20, 8192, 1024, 3, 1)
	if gen == nil || gen.Items != 9 || gen.Bytes != ds.Bytes || len(gen.Hosts) != 3 {
		t.Fatalf("generate: %+v", gen)
	}
	if tr == nil || tr.Items != samples || tr.Bytes != bytes || tr.Errors != 0 || len(tr.Hosts) != 3 {
		t.Fatalf("train read %d samples, %d bytes; want %d, %d: %+v", tr.Items, tr.Bytes, samples, bytes, tr)
	}
	f := r.Training
	if f == nil || f.Accelerators != 6 || len(f.Ranks) != 6 || f.Samples != samples || !f.Pass || tr.Cost.Unit != report.UnitAUPercent || tr.Cost.Value != f.AU {
		t.Fatalf("figures: %+v", f)
	}
	for i, rk := range f.Ranks {
		if rk.Rank != i || rk.Host != agents[i/2].addr || rk.Samples != samples/6 {
			t.Errorf("rank %d: %+v", i, rk)
		}
	}
	if foreign == 0 {
		t.Error("no rank read a file another host made")
	}
	if l := left(t, root); len(l) != 0 {
		t.Errorf("left behind: %v", l)
	}
}

// trainPlan is what the run of TestNetnsTrain reads.
func trainPlan(t *testing.T) (samples, bytes, foreign int64) {
	return trainShape{files: 9, perFile: 20, size: 8192, stdev: 1024, seed: 3, hosts: 3, perHost: 2, batch: 5, epochs: 2}.reads(t)
}

// trainShape is the dataset and the ranks of a train run on many hosts.
type trainShape struct {
	files, perFile                int
	size, stdev                   int64
	seed                          uint64
	hosts, perHost, batch, epochs int
}

// reads is what the run reads: samples, bytes, and how many of the
// samples lie in files another host made (host h makes every hosts-th
// file from h on).
func (sh trainShape) reads(t *testing.T) (samples, bytes, foreign int64) {
	ds := train.NewDataset("", sh.files, sh.perFile, sh.size, sh.stdev, sh.seed, 1)
	ranks := sh.hosts * sh.perHost
	p, err := train.NewPlan(ds.Samples(), ranks, sh.batch)
	if err != nil {
		t.Fatal(err)
	}
	for e := range sh.epochs {
		s := train.NewShuffle(p.Samples, sh.seed, e)
		for r := range ranks {
			for j := range p.Steps * p.Batch {
				file, _, size := ds.Locate(p.Sample(s, r, j))
				samples++
				bytes += size
				if file%sh.hosts != r/sh.perHost {
					foreign++
				}
			}
		}
	}
	return samples, bytes, foreign
}
