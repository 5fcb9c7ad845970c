package workload

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// benchBeneath runs b.N operations of a phase of kind on 64 files of 4 KiB
// in a subdirectory of the run's directory (the resolution beneath it
// walks one directory), reporting allocations per operation.
func benchBeneath(b *testing.B, kind Kind) {
	dir := b.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d"), 0o755); err != nil {
		b.Fatal(err)
	}
	e := NewRunner(Config{Dir: dir, Workers: 1, Seed: 1}, 64<<10)
	names := make([]string, 64)
	for i := range names {
		names[i] = "d/f" + strconv.Itoa(i)
	}
	tg := e.NewTargets(dir, names)
	if _, err := e.Run(context.Background(), FilePhase{Title: "lay", Kind: Create, Targets: tg, FileSize: 4096, BlockSize: 4096}); err != nil {
		b.Fatal(err)
	}
	p := FilePhase{Title: kind.String(), Kind: kind, Targets: tg, FileSize: 4096, BlockSize: 4096, PerFile: kind == Read, Ops: int64(b.N)}
	if kind == Readdir {
		p.Targets = e.NewTargets(dir, []string{"d"})
	}
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := e.Run(context.Background(), p); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkReadSmallFile(b *testing.B) { benchBeneath(b, Read) }
func BenchmarkStat(b *testing.B)          { benchBeneath(b, Stat) }
func BenchmarkReaddir(b *testing.B)       { benchBeneath(b, Readdir) }
