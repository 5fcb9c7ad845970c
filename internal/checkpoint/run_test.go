package checkpoint

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

func testOptions(dir string) Options {
	m, _ := FindModel("llama3-70b")
	return Options{Path: dir, Model: m, Ranks: 4, Size: 8 * units.MiB, BlockSize: 256 * units.KiB, DropCaches: runenv.DropNever}
}

// empty checks that dir holds nothing: the run removed all it made.
func empty(t *testing.T, dir string) {
	t.Helper()
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("left behind in %s: %v", dir, ents)
	}
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	res := &report.Result{}
	if err := Run(context.Background(), testOptions(dir), res); err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 3 {
		t.Fatalf("phases %+v", res.Phases)
	}
	for i, name := range []string{"seq-write", "write", "read"} {
		p := res.Phases[i]
		if p.Name != name || p.Bytes != 8*units.MiB || p.Errors != 0 || p.Incomplete || p.Value.Unit != "MiB/s" || p.Cost.Unit != "s" {
			t.Errorf("phase %d = %s: %d bytes, %d errors, value %+v, cost %+v", i, p.Name, p.Bytes, p.Errors, p.Value, p.Cost)
		}
		if p.Cost.Value != p.Seconds || p.Seconds <= 0 {
			t.Errorf("%s: cost %v, seconds %v", name, p.Cost.Value, p.Seconds)
		}
	}
	if len(res.Phases[0].Ranks) != 0 {
		t.Errorf("sequential write has rank rows: %+v", res.Phases[0].Ranks)
	}
	for _, p := range res.Phases[1:] {
		checkRanks(t, p, p.Name == "read")
	}
	empty(t, dir)
}

// checkRanks checks a phase's rank rows: every rank moved its shard, took
// no longer than the phase, and wrote its own shard or read the next
// rank's.
func checkRanks(t *testing.T, p report.PhaseResult, read bool) {
	t.Helper()
	if len(p.Ranks) != 4 {
		t.Fatalf("%s: %d rank rows", p.Name, len(p.Ranks))
	}
	for i, r := range p.Ranks {
		shard := i
		if read {
			shard = (i + 1) % 4
		}
		if r.Rank != i || r.Shard != shard || r.Bytes != 2*units.MiB || r.Incomplete || r.Seconds <= 0 || r.Seconds > p.Seconds {
			t.Errorf("%s rank %d: %+v (phase %.6f s)", p.Name, i, r, p.Seconds)
		}
	}
}

// TestCorruptShard: a shard changed between its write and its read-back
// is found, named, counted as the read phase's error and fails the run.
func TestCorruptShard(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir)
	var victim string
	o.Hooks.PhaseStart = func(_ *workload.Runner, p *workload.FilePhase, _ int64) {
		if p.Name != "read" {
			return
		}
		victim = p.Targets.Paths[2]
		f, err := os.OpenFile(victim, os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteAt([]byte{0xff, 0x00, 0xff}, units.MiB+12345); err != nil {
			t.Fatal(err)
		}
	}
	res := &report.Result{}
	err := Run(context.Background(), o, res)
	if err == nil || !strings.Contains(err.Error(), "1 of 4 shards differ") || !strings.Contains(err.Error(), victim) {
		t.Fatalf("err = %v; want the corrupted shard %s named", err, victim)
	}
	var be *runenv.Error
	if !errors.As(err, &be) || be.Phase != "Checkpoint read-back" {
		t.Errorf("error %v does not name the read-back", err)
	}
	read := res.Phases[len(res.Phases)-1]
	if read.Name != "read" || read.Errors != 1 || !strings.Contains(strings.Join(read.ErrorSamples, ";"), filepath.Base(victim)) {
		t.Errorf("read phase: %d errors, samples %v", read.Errors, read.ErrorSamples)
	}
	if read.Items != 3 {
		t.Errorf("read phase verified %d shards, want the 3 intact ones", read.Items)
	}
	empty(t, dir)
}

// TestInterruptEachPhase: cancelled in the middle of each phase, a run
// stops, marks the phase incomplete, says it was interrupted and removes
// everything it wrote.
func TestInterruptEachPhase(t *testing.T) {
	// Enough blocks (512 a rank) that no phase ends before the
	// cancellation reaches it, however late its goroutine runs.
	const size = 128 * units.MiB
	for _, name := range []string{"seq-write", "write", "read"} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			o := testOptions(dir)
			o.Size, o.BlockSize = size, 64*units.KiB
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			o.Hooks.PhaseStart = func(e *workload.Runner, p *workload.FilePhase, _ int64) {
				if p.Name == name {
					e.Live.Ops.Store(0) // not the last phase's count
					go cancelAfterFirstOp(ctx, e, cancel)
				}
			}
			res := &report.Result{}
			err := Run(ctx, o, res)
			if !errors.Is(err, context.Canceled) || !res.Interrupted {
				t.Fatalf("err %v, interrupted %v", err, res.Interrupted)
			}
			last := res.Phases[len(res.Phases)-1]
			if last.Name != name || !last.Incomplete || last.Bytes == 0 || last.Bytes >= size {
				t.Errorf("last phase %s: incomplete %v, %d bytes", last.Name, last.Incomplete, last.Bytes)
			}
			if name != "seq-write" && !anyIncomplete(last.Ranks) {
				t.Errorf("%s: no rank is marked incomplete: %+v", name, last.Ranks)
			}
			empty(t, dir)
		})
	}
}

func anyIncomplete(ranks []report.RankPhase) bool {
	for _, r := range ranks {
		if r.Incomplete {
			return true
		}
	}
	return false
}

// cancelAfterFirstOp cancels once the phase in progress has done an
// operation.
func cancelAfterFirstOp(ctx context.Context, e *workload.Runner, cancel func()) {
	for e.Live.Ops.Load() == 0 && ctx.Err() == nil {
		time.Sleep(100 * time.Microsecond)
	}
	cancel()
}

func TestRunRefusesTooLarge(t *testing.T) {
	dir := t.TempDir()
	o := testOptions(dir)
	o.Size = 1 << 60
	err := Run(context.Background(), o, &report.Result{})
	if !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "free") {
		t.Errorf("err = %v; want a bad input naming the free space", err)
	}
	empty(t, dir)
}
