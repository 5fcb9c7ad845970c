package checkpoint

import (
	"math"
	"testing"
)

// transformer is a transformer model as a DLIO checkpoint config gives
// it (model: num_layers, parallelism, transformer), fp16 weights and fp32
// optimizer states.
type transformer struct {
	layers, hidden, ffn, vocab, heads, kvHeads int64
	tp, pp, zero                               int64
}

// params is the model's parameter count, as DLIO counts it: embedding
// and lm_head, and per layer two norms, the QKV and output projections
// and a gated MLP, and the final norm.
func (m transformer) params() int64 {
	kv := m.hidden / m.heads * m.kvHeads
	layer := 2*m.hidden + m.hidden*(m.hidden+2*kv) + m.hidden*m.hidden + 3*m.ffn*m.hidden
	return 2*m.vocab*m.hidden + m.layers*layer + m.hidden
}

// layerParams is what one rank holds of layer i (0 the embedding, 1 to
// layers the transformer layers, layers+1 the lm_head, layers+2 the final
// norm), split over tp and, at ZeRO stage 3, over the dp replicas.
func (m transformer) layerParams(i, dp int64) int64 {
	shard := int64(1)
	if m.zero == 3 {
		shard = dp
	}
	switch {
	case i == 0 || i == m.layers+1:
		return m.hidden * m.vocab / m.tp / shard
	case i == m.layers+2:
		return m.hidden / shard
	}
	kv := m.hidden / m.heads * m.kvHeads
	return 2*(m.hidden/shard) + (m.hidden*(m.hidden+2*kv)/m.tp+m.hidden*m.hidden/m.tp+3*m.hidden*m.ffn/m.tp)/shard
}

// stages are the first and last layer of pipeline stage s: the
// transformer layers spread evenly, the first stage also holds the
// embedding, the last the lm_head and final norm.
func (m transformer) stages(s int64) (int64, int64) {
	per, rem := m.layers/m.pp, m.layers%m.pp
	first := rem*(per+1) + (s-rem)*per + 1
	last := first + per - 1
	if s < rem {
		first = s*(per+1) + 1
		last = first + per
	}
	if s == m.pp-1 {
		last = m.layers + 2
	}
	if s == 0 {
		first = 0
	}
	return first, last
}

// bytes is what DLIO writes for one checkpoint over tp x pp x dp ranks:
// each model-parallel rank of the first replica (every replica's share
// at ZeRO stage 3) writes its layers in fp16, and every rank writes its
// share of the optimizer: three fp32 groups of the parameters over all
// ranks, and three of 5 x hidden.
func (m transformer) bytes(dp int64) int64 {
	var total int64
	ranks := m.tp * m.pp * dp
	for r := range ranks {
		stage, replica := r/m.tp%m.pp, r/(m.tp*m.pp)
		if m.zero == 3 || replica == 0 {
			first, last := m.stages(stage)
			for i := first; i <= last; i++ {
				total += 2 * m.layerParams(i, dp)
			}
		}
		total += 4 * 3 * (m.params()/ranks + 5*m.hidden)
	}
	return total
}

// TestDLIOModels: the checkpoints taken from DLIO's configs have the size
// DLIO writes for them, computed here from the figures of each config
// (transcribed; see Models for the commit), at their fewest ranks, and at
// least the 2 a read-back by another rank needs.
func TestDLIOModels(t *testing.T) {
	llama7b := transformer{layers: 32, hidden: 4096, ffn: 11008, vocab: 32000, heads: 32, kvHeads: 32, tp: 1, pp: 1, zero: 1}
	// megatron_deepspeed_LLNL.yaml predefines its states: per layer
	// [52583936, 209715200] parameters split over tp 4, 40 layers over pp
	// 8; optimizer groups [1009254400, 865075200, 793600], each written
	// twice and once combined; all one-byte elements. Its model_size key
	// is not one DLIO reads, so DLIO's default model state of 10,240
	// bytes is written by every rank too.
	const tp, pp = 4, 8
	megatronRank := int64(40/pp)*(52583936/tp+209715200/tp) + 3*(1009254400+865075200+793600) + 10240
	for _, tc := range []struct {
		name  string
		bytes int64
		ranks int
	}{
		{"unet3d", 499153191, 2},          // unet3d_*.yaml model.model_size, written by DLIO's rank 0
		{"bert", 4034713312, 2},           // bert_v100.yaml model.model_size_bytes, written by DLIO's rank 0
		{"llama-7b", llama7b.bytes(2), 2}, // tp 1 x pp 1: two data-parallel replicas
		{"megatron-deepspeed", tp * pp * megatronRank, tp * pp},
	} {
		m, err := FindModel(tc.name)
		if err != nil || m.Bytes != tc.bytes || m.Ranks != tc.ranks {
			t.Errorf("%s: %+v, %v; want %d bytes over %d ranks", tc.name, m, err, tc.bytes, tc.ranks)
		}
	}
}

// TestMLPerfSizesAreDLIOs: the sizes of MLPerf Storage's Table 2 are what
// DLIO writes for the llama3 configs at the CLOSED ranks, in DLIO's "GB"
// (GiB, 1000 of them a "TB"): llama3-8b writes 104.7 GiB, shown 105. The
// models keep the table's figures as decimal bytes, 7% under what DLIO
// writes; llama3-1t's 18 TB is not what its config gives (15.4 "TB").
func TestMLPerfSizesAreDLIOs(t *testing.T) {
	for _, tc := range []struct {
		name string
		m    transformer
		dp   int64
		want float64 // DLIO's figure in the table's unit
	}{
		{"llama3-8b", transformer{32, 4096, 14336, 128256, 32, 8, 1, 1, 3}, 8, 105},
		{"llama3-70b", transformer{80, 8192, 28672, 128256, 128, 8, 8, 1, 3}, 8, 912},
		{"llama3-405b", transformer{126, 16384, 53248, 128256, 128, 8, 8, 32, 1}, 2, 5290},
		{"llama3-1t", transformer{128, 25872, 98304, 128256, 192, 32, 8, 64, 1}, 2, 15427},
	} {
		model, err := FindModel(tc.name)
		if err != nil || int64(model.Ranks) != tc.m.tp*tc.m.pp*tc.dp {
			t.Fatalf("%s: %+v %v", tc.name, model, err)
		}
		gib := float64(tc.m.bytes(tc.dp)) / (1 << 30)
		if math.Abs(gib-tc.want) > 0.005*tc.want {
			t.Errorf("%s: DLIO writes %.1f GiB, want about %v", tc.name, gib, tc.want)
		}
	}
}
