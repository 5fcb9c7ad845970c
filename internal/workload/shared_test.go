package workload

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fsbench/fsbench/internal/pattern"
)

// ior-hard's transfer: 47,008 bytes, aligned to nothing.
const hardXfer = 47008

func sharedPhase(e *Runner, kind Kind, l *SharedFile, xfer int64) FilePhase {
	return FilePhase{Name: kind.String(), Title: kind.String(), Kind: kind, Targets: e.NewTargets(e.cfg.Dir, []string{"shared"}),
		BlockSize: xfer, Shared: l}
}

// Four ranks interleave unaligned transfers in one file (ior-hard's
// layout): the file holds exactly what the pattern says at every byte, no
// hole and no overlap, and each rank reads back, verified, what another
// wrote.
func TestSharedStridedWriteReadVerify(t *testing.T) {
	e, dir := newRunner(t, 4, true, nil)
	const segs = 3
	r, err := e.Run(context.Background(), sharedPhase(e, Write, &SharedFile{Block: hardXfer, Segments: segs}, hardXfer))
	if err != nil || r.Ops != 4*segs || r.Items != 4*segs || r.Bytes != 4*segs*hardXfer {
		t.Fatalf("write: %+v, %v", r, err)
	}
	path := filepath.Join(dir, "shared")
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 4*segs*hardXfer)
	pattern.New(1).Fill(want, pattern.New(1).ID("shared"), 0)
	if !bytes.Equal(got, want) {
		t.Fatalf("the shared file (%d bytes) is not the pattern of %d bytes", len(got), len(want))
	}
	rd := &SharedFile{Block: hardXfer, Segments: segs}
	r, err = e.Run(context.Background(), sharedPhase(e, Read, rd, hardXfer))
	if err != nil || r.Errors != 0 || r.Bytes != int64(len(want)) || r.Items != 4*segs {
		t.Fatalf("read: %+v, %v", r, err)
	}

	// One byte wrong in rank 2's second segment: the rank that reads rank
	// 2's data (rank 1) finds it, once.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	off := (&SharedFile{Block: hardXfer, World: 4}).Offset(2, 1, 0, hardXfer) + 100
	if _, err := f.WriteAt([]byte{want[off] ^ 0xff}, off); err != nil {
		t.Fatal(err)
	}
	f.Close()
	r, err = e.Run(context.Background(), sharedPhase(e, Read, &SharedFile{Block: hardXfer, Segments: segs}, hardXfer))
	if err != nil || r.Errors != 1 || len(r.Samples) != 1 || !strings.Contains(r.Samples[0], "at byte "+strconv.FormatInt(off, 10)) {
		t.Fatalf("read of a corrupted byte: errors %d %q, %v", r.Errors, r.Samples, err)
	}
}

// offsetTracer records the offsets each worker read.
type offsetTracer struct {
	mu    sync.Mutex
	reads map[int][]int64
}

func (o *offsetTracer) Trace(w int, ev Event) {
	if ev.Op == "read" {
		o.mu.Lock()
		o.reads[w] = append(o.reads[w], ev.Offset)
		o.mu.Unlock()
	}
}

// Two hosts of two ranks each share one file (the segmented layout: one
// block of four transfers a rank): each host records its own ranks'
// segments, and at read-back a host's rank reads the other host's rank
// (IOR's -C with a rank per node's shift).
func TestSharedAcrossHostsReadsTheOtherHost(t *testing.T) {
	dir := t.TempDir()
	tr := &offsetTracer{reads: map[int][]int64{}}
	hosts := make([]*Runner, 2)
	for i := range hosts {
		cfg := Config{Dir: dir, Workers: 2, Verify: true, Seed: 7}
		if i == 0 {
			cfg.Tracer = tr
		}
		hosts[i] = NewRunner(cfg, 64<<10)
	}
	const xfer, block = 10000, 40000
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, e := range hosts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = e.Run(context.Background(), sharedPhase(e, Write, &SharedFile{Block: block, Segments: 1, Rank0: 2 * i, World: 4}, xfer))
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	counts, err := ReadSegments(filepath.Join(dir, "shared"), 4)
	if err != nil || len(counts) != 4 || counts[0] != 1 || counts[3] != 1 {
		t.Fatalf("segments = %v, %v", counts, err)
	}
	r, err := hosts[0].Run(context.Background(), sharedPhase(hosts[0], Read, &SharedFile{Block: block, Segments: 1, World: 4}, xfer))
	if err != nil || r.Errors != 0 || r.Bytes != 2*block {
		t.Fatalf("read: %+v, %v", r, err)
	}
	for w, want := range []int64{2 * block, 3 * block} { // ranks 0, 1 read ranks 2, 3
		if offs := tr.reads[w]; len(offs) != 4 || offs[0] != want {
			t.Errorf("worker %d read at %v, want from %d", w, offs, want)
		}
	}
}

// A stonewall ends the write early; the status file says how many whole
// segments each rank wrote, and the read phase reads exactly those.
func TestSharedStonewallReadsWhatWasWritten(t *testing.T) {
	e, dir := newRunner(t, 2, true, nil)
	w := sharedPhase(e, Write, &SharedFile{Block: 4096, Segments: 1 << 30}, 4096)
	w.Duration = 100 * time.Millisecond
	r, err := e.Run(context.Background(), w)
	if err != nil || r.Items == 0 || r.Items >= 2<<30 {
		t.Fatalf("stonewalled write: %+v, %v", r, err)
	}
	counts, err := ReadSegments(filepath.Join(dir, "shared"), 2)
	if err != nil || counts[0]+counts[1] != r.Items || counts[0] != w.Shared.Written[0] {
		t.Fatalf("segments %v, written %v, items %d: %v", counts, w.Shared.Written, r.Items, err)
	}
	rd := sharedPhase(e, Read, &SharedFile{Block: 4096, Segments: 1 << 30}, 4096)
	r2, err := e.Run(context.Background(), rd)
	if err != nil || r2.Errors != 0 || r2.Items != r.Items || r2.Bytes != 4096*r.Items {
		t.Fatalf("read after the stonewall: %+v, %v (wrote %d segments)", r2, err, r.Items)
	}
	// Rank 0 read rank 1's segments, rank 1 rank 0's.
	if rd.Shared.Written[0] != counts[1] || rd.Shared.Written[1] != counts[0] {
		t.Fatalf("read %v segments, written %v", rd.Shared.Written, counts)
	}
}

func TestSharedBadLayouts(t *testing.T) {
	e, _ := newRunner(t, 2, false, nil)
	for _, c := range []struct {
		l    SharedFile
		kind Kind
		want string
	}{
		{SharedFile{Block: 1000, Segments: 1}, Write, "not a multiple"},
		{SharedFile{Block: 4096, Segments: 0}, Write, "segments must be"},
		{SharedFile{Block: 4096, Segments: 1, Rank0: 3, World: 4}, Write, "not within a world"},
		{SharedFile{Block: 4096, Segments: 1}, Stat, "written or read"},
		{SharedFile{Block: 4096, Segments: 1}, Read, "read the segments written"},
	} {
		_, err := e.Run(context.Background(), sharedPhase(e, c.kind, &c.l, 4096/4*3))
		if c.want != "not a multiple" {
			_, err = e.Run(context.Background(), sharedPhase(e, c.kind, &c.l, 4096))
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.l, err, c.want)
		}
	}
}

// With a file per rank (ior-easy), each rank's file holds its segments in
// order, and rank r reads back rank r+1's file, verified.
func TestSharedFilePerRank(t *testing.T) {
	e, dir := newRunner(t, 3, true, &offsetTracer{reads: map[int][]int64{}})
	const xfer, block, segs = 8192, 3 * 8192, 4
	r, err := e.Run(context.Background(), sharedPhase(e, Write, &SharedFile{Block: block, Segments: segs, PerRank: true}, xfer))
	if err != nil || r.Bytes != 3*segs*block {
		t.Fatalf("write: %+v, %v", r, err)
	}
	for rank := range 3 {
		st, err := os.Stat(RankFile(filepath.Join(dir, "shared"), rank))
		if err != nil || st.Size() != segs*block {
			t.Fatalf("rank %d's file: %v, %v", rank, st, err)
		}
	}
	r, err = e.Run(context.Background(), sharedPhase(e, Read, &SharedFile{Block: block, Segments: segs, PerRank: true}, xfer))
	if err != nil || r.Errors != 0 || r.Bytes != 3*segs*block {
		t.Fatalf("read: %+v, %v", r, err)
	}
	// Each rank's file has its own content: rank 0's file read as rank 1's
	// is a mismatch.
	os.Rename(RankFile(filepath.Join(dir, "shared"), 0), RankFile(filepath.Join(dir, "shared"), 1))
	r, _ = e.Run(context.Background(), sharedPhase(e, Read, &SharedFile{Block: block, Segments: segs, PerRank: true}, xfer))
	if r.Errors == 0 {
		t.Fatalf("rank 0's data under rank 1's name verified: %+v", r)
	}
}

// A big file per rank is written from the worker's stream: read back
// verified, and a byte changed in it is found.
func TestSharedBigFileFromStream(t *testing.T) {
	e, dir := newRunner(t, 2, true, nil)
	const xfer, segs = 64 << 10, 80 // 5 MiB a rank: above pattern.StreamMin
	l := &SharedFile{Block: xfer, Segments: segs, PerRank: true}
	if _, err := e.Run(context.Background(), sharedPhase(e, Write, l, xfer)); err != nil || !l.big {
		t.Fatalf("write: %v (big %v)", err, l.big)
	}
	r, err := e.Run(context.Background(), sharedPhase(e, Read, &SharedFile{Block: xfer, Segments: segs, PerRank: true}, xfer))
	if err != nil || r.Errors != 0 || r.Bytes != 2*segs*xfer {
		t.Fatalf("read: %+v, %v", r, err)
	}
	f, err := os.OpenFile(RankFile(filepath.Join(dir, "shared"), 1), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 1)
	f.ReadAt(b, 3<<20+5)
	f.WriteAt([]byte{b[0] ^ 1}, 3<<20+5)
	f.Close()
	r, _ = e.Run(context.Background(), sharedPhase(e, Read, &SharedFile{Block: xfer, Segments: segs, PerRank: true}, xfer))
	if r.Errors != 1 {
		t.Fatalf("a changed byte: %d errors", r.Errors)
	}
}

// A shared-file phase is not run through io_uring: asked to, it is
// refused before anything is written.
func TestSharedRefusesIOUring(t *testing.T) {
	e, dir := newRunner(t, 2, false, nil)
	p := sharedPhase(e, Write, &SharedFile{Block: 4096, Segments: 1}, 4096)
	p.IOEngine, p.IODepth = IOUring, 8
	if _, err := e.Run(context.Background(), p); err == nil || !strings.Contains(err.Error(), "use the sync engine") {
		t.Fatalf("a shared phase on io_uring: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "shared")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the shared file was made: %v", err)
	}
}

// TestSharedReadFiles: the files a host's workers read are those of the
// ranks they read from, as the read phase picks them.
func TestSharedReadFiles(t *testing.T) {
	for _, tc := range []struct {
		l       SharedFile
		workers int
		want    []string
	}{
		{SharedFile{PerRank: true}, 3, []string{"f.1", "f.2", "f.0"}},
		{SharedFile{PerRank: true, Rank0: 2, World: 4}, 2, []string{"f.0", "f.1"}},
		{SharedFile{PerRank: true, World: 4, Shift: -1}, 2, []string{"f.0", "f.1"}},
		{SharedFile{PerRank: true, World: 4, Shift: 3}, 2, []string{"f.3", "f.0"}},
		{SharedFile{World: 4}, 2, []string{"f"}},
	} {
		if got := tc.l.ReadFiles("f", tc.workers); !slices.Equal(got, tc.want) {
			t.Errorf("%+v with %d workers reads %v, want %v", tc.l, tc.workers, got, tc.want)
		}
	}
}

// TestWarmCache: warmCache reads the first byte of every 64-byte line of
// a block of any length, and those bytes alone.
func TestWarmCache(t *testing.T) {
	for _, n := range []int{0, 1, 63, 64, 65, 47008} {
		b := make([]byte, n)
		for i := range b {
			b[i] = 1 + byte(i%64) // line starts hold 1, the rest more
		}
		if got, want := warmCache(b), byte((n+63)/64); got != want {
			t.Errorf("%d bytes: %d, want %d", n, got, want)
		}
	}
}
