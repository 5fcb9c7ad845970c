package accesslog

import (
	"context"
	"io"
	"strconv"
	"testing"

	"github.com/fsbench/fsbench/internal/workload"
)

// BenchmarkEngineStat measures what the access log costs a benchmark on
// the engine's cheapest operation, a stat of a cached file: with no tracer
// and with a Writer (to io.Discard, so that the log's own disk is not
// measured). Compare the ns/op of the two.
func BenchmarkEngineStat(b *testing.B) {
	for _, traced := range []bool{false, true} {
		name := "no-log"
		if traced {
			name = "access-log"
		}
		b.Run(name, func(b *testing.B) {
			var w *Writer
			cfg := workload.Config{Dir: b.TempDir(), Workers: 1}
			if traced {
				w = New(io.Discard, 1)
				cfg.Tracer = w
			}
			e := workload.NewRunner(cfg, 4096)
			const files = 1000
			names := make([]string, files)
			for i := range names {
				names[i] = "f." + strconv.Itoa(i)
			}
			tg := e.NewTargets(cfg.Dir, names)
			p := workload.FilePhase{Name: "w", Title: "w", Kind: workload.Create, Targets: tg, FileSize: 4096, BlockSize: 4096}
			if _, err := e.Run(context.Background(), p); err != nil {
				b.Fatal(err)
			}
			p = workload.FilePhase{Name: "s", Title: "s", Kind: workload.Stat, Targets: tg}
			b.ResetTimer()
			for ops := 0; ops < b.N; ops += files {
				if _, err := e.Run(context.Background(), p); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			if w != nil {
				w.Close()
			}
		})
	}
}
