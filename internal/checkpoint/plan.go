// Package checkpoint is `fsbench checkpoint`: the checkpointing workload of
// MLPerf Storage v2 emulated on workload.Runner. Every rank writes its
// shard of a model's checkpoint and fsyncs it; the caches are dropped; then
// every rank reads back, and checks byte for byte, a shard another rank
// wrote. A plain sequential write of the same total size, one stream, runs
// beside it, so that what the checkpoint's pattern costs shows.
//
// It knows nothing of the command line or of other hosts, and writes and
// removes nothing outside the run's own directory or key prefix.
package checkpoint

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fsbench/fsbench/internal/units"
)

// Model is one checkpoint of MLPerf Storage v2's checkpointing workload
// (Submission_guidelines.md, Table 2): its total size and its number of
// ranks (MPI processes) in the CLOSED division.
type Model struct {
	Name  string
	Bytes int64 // the checkpoint's size, as the table gives it (decimal units)
	Ranks int
}

// Models are the four checkpoints of MLPerf Storage v2, then those of
// DLIO's configs that are not one of them. MLPerf's come from
// github.com/mlcommons/storage Submission_guidelines.md, Table 2, at commit
// caa90c9c7d6a543de815222fff834a846823f922 (configs/dlio/workload/llama3_*.yaml
// there). DLIO's are what DLIO writes for a config of
// github.com/argonne-lcf/dlio_benchmark dlio_benchmark/configs/workload/
// at commit e1919d7b6ccffbe15143cd616517da9e5d7b26a7, at the fewest ranks
// the config runs on (its tensor x pipeline parallelism, one data-parallel
// replica) but at least 2, the fewest a read-back by another rank needs
// (llama-7b: two replicas; unet3d and bert: DLIO's rank 0 writes the
// model, here split over two); DLIO's configs that are MLPerf's models again (llama_8b_zero3,
// llama_70b, llama_70b_zero3, llama_405b, llama_1t) or another of the same
// size (llama_7b_zero3) are not repeated.
var Models = []Model{
	{"llama3-8b", 105e9, 8},
	{"llama3-70b", 912e9, 64},
	{"llama3-405b", 5.29e12, 512},
	{"llama3-1t", 18e12, 1024},
	{"unet3d", 499153191, 2},                 // DLIO unet3d_{a100,h100,v100}.yaml: model_size
	{"bert", 4034713312, 2},                  // DLIO bert_v100.yaml: model_size_bytes
	{"llama-7b", 94338310144, 2},             // DLIO llama_7b.yaml: fp16 model, fp32 optimizer, tp 1, pp 1, dp 2
	{"megatron-deepspeed", 190504120320, 32}, // DLIO megatron_deepspeed_LLNL.yaml: tp 4, pp 8
}

// FindModel returns the model of that name.
func FindModel(name string) (Model, error) {
	for _, m := range Models {
		if m.Name == name {
			return m, nil
		}
	}
	return Model{}, fmt.Errorf("unknown model %q (want one of %s)", name, strings.Join(ModelNames(), ", "))
}

// ModelNames lists the models' names: MLPerf's, smallest first, then DLIO's.
func ModelNames() []string {
	var names []string
	for _, m := range Models {
		names = append(names, m.Name)
	}
	return names
}

// ShardAlign is the unit shards are rounded down to: a multiple of it
// suits O_DIRECT on every common file system.
const ShardAlign = 4 * units.KiB

// MaxRanks bounds the ranks of all hosts together: each rank is a goroutine with its own buffer.
const MaxRanks = 65536

// Plan is how a checkpoint is cut into shards.
type Plan struct {
	Ranks int
	Shard int64 // bytes of every rank's shard
	// Asked is the total asked for; Total = Ranks × Shard is what is
	// written, at most Ranks × ShardAlign bytes less.
	Asked, Total int64
}

// NewPlan cuts total bytes over ranks: every rank's shard is total/ranks
// rounded down to a multiple of ShardAlign, so that all shards are equal
// and suit O_DIRECT; the remainder (less than ranks × 4 KiB) is not written.
func NewPlan(total int64, ranks int) (Plan, error) {
	switch {
	case ranks < 1:
		return Plan{}, fmt.Errorf("-p/--threads (the ranks on each host) must be at least 1 (got %d ranks)", ranks)
	case ranks > MaxRanks:
		return Plan{}, fmt.Errorf("%d ranks (-p/--threads on each host, over all hosts) are more than %d", ranks, MaxRanks)
	case total <= 0:
		return Plan{}, fmt.Errorf("--size must be greater than 0")
	}
	shard := total / int64(ranks) / ShardAlign * ShardAlign
	if shard == 0 {
		return Plan{}, fmt.Errorf("--size %s over %d ranks leaves less than %s per rank", units.FormatBytes(total), ranks, units.FormatBytes(ShardAlign))
	}
	return Plan{Ranks: ranks, Shard: shard, Asked: total, Total: shard * int64(ranks)}, nil
}

// Part is one host's share of a plan on many hosts: ranks [First,
// First+Ranks) write here, and read the shards of ranks [ReadFirst,
// ReadFirst+Ranks), written on the next host.
type Part struct {
	Host, Hosts      int
	First, ReadFirst int
	Ranks            int
}

// Split gives host h of n its ranks. The ranks must divide evenly over
// the hosts, so that every shard is read back exactly once, by a rank of
// the host before the one that wrote it. One host alone reads its own
// ranks' shards shifted by one (rank r reads rank r+1's).
func (p Plan) Split(h, n int) (Part, error) {
	switch {
	case n < 1 || h < 0 || h >= n:
		return Part{}, fmt.Errorf("host %d of %d", h, n)
	case n == 1 && p.Ranks < 2:
		return Part{}, fmt.Errorf("-p/--threads must be at least 2 on one host: a rank reads back a shard another rank wrote")
	case p.Ranks%n != 0:
		return Part{}, fmt.Errorf("%d ranks do not divide evenly over %d hosts: give -p N, the ranks on each host", p.Ranks, n)
	}
	per := p.Ranks / n
	return Part{Host: h, Hosts: n, First: h * per, ReadFirst: (h + 1) % n * per, Ranks: per}, nil
}

// Reads is the rank whose shard local rank i of the part reads back.
func (pt Part) Reads(i int) int {
	if pt.Hosts == 1 {
		return (i + 1) % pt.Ranks
	}
	return pt.ReadFirst + i
}

// ShardName is the file name of rank r's shard.
func ShardName(r int) string { return fmt.Sprintf("rank-%05d.shard", r) }

// DecimalBytes renders n with a decimal unit, as MLPerf gives checkpoint
// sizes: "105 GB", "5.29 TB".
func DecimalBytes(n int64) string {
	for _, u := range []struct {
		name string
		mult float64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"kB", 1e3}} {
		if float64(n) >= u.mult {
			return strconv.FormatFloat(float64(n)/u.mult, 'f', -1, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(n, 10) + " B"
}
