package bench

import (
	"context"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/units"
)

func TestNeed(t *testing.T) {
	o := Defaults()
	o.Threads, o.BigFileSize, o.SmallFileCount, o.SmallFileSize = 3, 3*units.MiB+1, 10, units.KiB
	// The big file in whole blocks, each small file in a page at least.
	if got, want := o.need(), int64(3*(4*units.MiB+10*4096)); got != want {
		t.Errorf("need = %d, want %d", got, want)
	}
	o.BigFileSize, o.Threads = math.MaxInt64/2, 4096
	if got := o.need(); got != math.MaxInt64 {
		t.Errorf("need of sizes beyond int64 = %d, want it capped", got)
	}
	// job.W.0 and job.W.1 at 1 GiB, job.W.2-9 at 1 MiB; the shared file
	// as the threads' segments.
	ps := []jobfile.PhaseSpec{{Files: 10, FileSize: units.MiB}, {Files: 2, FileSize: units.GiB},
		{Shared: true, Files: 1, FileSize: 64 * units.GiB, Block: units.MiB, Segments: 4}}
	j := &jobfile.Job{Threads: 2, Phases: ps}
	if got, want := jobNeed(o, j), int64(2*(2*units.GiB+8*units.MiB)+2*4*units.MiB); got != want {
		t.Errorf("jobNeed = %d, want %d", got, want)
	}
}

// TestRunRefusesWhatDoesNotFit: Run and RunJob refuse a run larger than
// the free space as bad input, before they make anything.
func TestRunRefusesWhatDoesNotFit(t *testing.T) {
	dir := testenv.Tmpfs(t, "4m")
	o := small(dir)
	if err := Run(context.Background(), o, &report.Result{}); !errors.Is(err, ErrBadInput) {
		t.Errorf("Run: %v, want bad input", err)
	}
	j, err := jobfile.Parse([]byte("phases:\n  - name: fill\n    op: write\n    file_size: 16M\n"), "fill.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := RunJob(context.Background(), o, j, &report.Result{}); !errors.Is(err, ErrBadInput) {
		t.Errorf("RunJob: %v, want bad input", err)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("%s holds %v", dir, ents)
	}
}
