package bench

import (
	"context"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/testenv"
	"github.com/fsbench/fsbench/internal/workload"
)

// A workload's shared-file phases: four threads interleave 47,008-byte
// transfers (ior-hard) in one file, then read it back verified, each
// thread another's part; a segmented write and read of big blocks follow.
// On tmpfs and on a FUSE mount.
func TestJobSharedFile(t *testing.T) {
	for _, fs := range []string{"tmpfs", "fuse"} {
		t.Run(fs, func(t *testing.T) {
			dir := testenv.Tmpfs(t, "256m")
			if fs == "fuse" {
				dir = testenv.Bindfs(t, t.TempDir())
			}
			j := parseJob(t, `
threads: 4
verify: true
phases:
  - {name: hard-write, op: write, shared: true, xfer_size: 47008, segments: 50}
  - {name: hard-read, op: read, shared: true, xfer_size: 47008, segments: 50}
  - {name: seg-write, op: write, shared: true, xfer_size: 64K, block_size: 1M, file_size: 8M}
  - {name: seg-read, op: read, shared: true, xfer_size: 64K, block_size: 1M, file_size: 8M}
`)
			var res report.Result
			if err := RunJob(context.Background(), jobOptions(dir), j, &res); err != nil {
				t.Fatal(err)
			}
			want := map[string]int64{"hard-write": 4 * 50 * 47008, "hard-read": 4 * 50 * 47008, "seg-write": 8 << 20, "seg-read": 8 << 20}
			for _, p := range res.Phases {
				if p.Bytes != want[p.Name] || p.Errors != 0 {
					t.Errorf("%s: %d bytes, %d errors; want %d", p.Name, p.Bytes, p.Errors, want[p.Name])
				}
			}
			if len(res.Phases) != 4 {
				t.Errorf("%d phases", len(res.Phases))
			}
			if left := leftovers(t, dir); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

// barrier holds n parties until all have arrived, again and again.
type barrier struct {
	mu    sync.Mutex
	n, in int
	gen   chan struct{}
}

func (b *barrier) wait() {
	b.mu.Lock()
	ch := b.gen
	b.in++
	if b.in == b.n {
		b.in, b.gen = 0, make(chan struct{})
		close(ch)
		b.mu.Unlock()
		return
	}
	b.mu.Unlock()
	<-ch
}

// Two hosts' runs of one workload, held together at each phase and at the
// end as agents are, share the file beside their own directories: each
// writes its threads' segments, reads the other's, and the first host
// removes the shared file at the end.
func TestJobSharedFileTwoHosts(t *testing.T) {
	base := t.TempDir()
	b := &barrier{n: 2, gen: make(chan struct{})}
	results := make([]report.Result, 2)
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for h := range 2 {
		o := jobOptions(base)
		o.RunDir, o.Host, o.Hosts, o.Seed = filepath.Join(base, "host-"+strconv.Itoa(h)), h, 2, 9
		o.Hooks.PhaseStart = func(*workload.Runner, *workload.FilePhase, int64) { b.wait() }
		o.Hooks.Finished = func(*workload.Runner) { b.wait() }
		j := parseJob(t, `
threads: 2
verify: true
phases:
  - {name: w, op: write, shared: true, xfer_size: 10000, segments: 30}
  - {name: r, op: read, shared: true, xfer_size: 10000, segments: 30}
`)
		wg.Add(1)
		go func() { defer wg.Done(); errs[h] = RunJob(context.Background(), o, j, &results[h]) }()
	}
	wg.Wait()
	for h, res := range results {
		if errs[h] != nil || len(res.Phases) != 2 {
			t.Fatalf("host %d: %v, %d phases", h, errs[h], len(res.Phases))
		}
		for _, p := range res.Phases {
			if p.Bytes != 2*30*10000 || p.Errors != 0 {
				t.Errorf("host %d %s: %d bytes, %d errors", h, p.Name, p.Bytes, p.Errors)
			}
		}
	}
	if left := leftovers(t, base); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
}
