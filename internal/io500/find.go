package io500

import (
	"context"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/sysio"
)

// Match is what a find looks for, as IO500's find phase asks for it:
// `-newer FILE -size 3901c -name "*01*"`. A zero field matches anything.
type Match struct {
	Name  string    // a shell pattern for the entry's name (path.Match)
	Size  int64     // exact size in bytes; negative: any
	Newer time.Time // modified after this
}

// FindResult is what a walk saw.
type FindResult struct {
	Scanned int64 // entries looked at: files and directories
	Found   int64 // files that matched
	Dirs    int64
	Errors  int64
	Elapsed time.Duration
	Err     error // the first error, if any
	CPUs    int   // the CPUs the walkers ran on; 0: not known
}

// spread gives the walkers the CPUs this thread may run on and idle
// (another rank's core on this machine, as a launcher bound it), and
// enough of Go's Ps to run one walker a CPU at once: a rank that mpirun
// bound to one core starts with one P, and its walkers would take turns
// there while the cores of the ranks waiting for them stood still. wider
// is false when idle adds no CPU: the walkers run where they would anyway.
// restore gives the Ps back.
func spread(workers int, idle []int) (cpus []int, wider bool, restore func()) {
	cpus = sysio.CPUs()
	own := len(cpus)
	for _, c := range idle {
		if !slices.Contains(cpus, c) {
			cpus = append(cpus, c)
		}
	}
	if own == 0 || len(cpus) == own {
		return cpus[:own], false, func() {}
	}
	slices.Sort(cpus)
	prev := runtime.GOMAXPROCS(0)
	if want := min(workers, len(cpus)); want > prev {
		runtime.GOMAXPROCS(want)
		return cpus, true, func() { runtime.GOMAXPROCS(prev) }
	}
	return cpus, true, func() {}
}

// Find walks the tree under root with workers goroutines, each taking the
// next directory not yet read (as pfind does), and counts what matches m.
// A name is matched before anything is asked of the file system about the
// entry; only a file whose name matches is stat'ed. Find ends early, with
// what it counted, when ctx is cancelled. seen, if not nil, counts the
// entries looked at as the walk goes, for progress. The walkers run on
// the CPUs this thread may run on and on idle (see spread).
func Find(ctx context.Context, root string, m Match, workers int, idle []int, seen *atomic.Int64) FindResult {
	f := &finder{m: m, within: within(m.Name), ctx: ctx, seen: seen}
	f.cond = sync.NewCond(&f.mu)
	f.queue = []string{root}
	f.pending = 1
	workers = max(workers, 1)
	cpus, wider, restore := spread(workers, idle)
	defer restore()
	f.res.CPUs = len(cpus)
	t0 := time.Now()
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if wider {
				// Walker i on the i-th CPU, as a launcher binds rank i
				// to a core: the kernel moves the thread there at once,
				// where a wider set would wait for its balancing to
				// pull the thread to an idle core. The thread ends with
				// the goroutine, still locked, so that no other
				// goroutine runs there.
				runtime.LockOSThread()
				_ = sysio.RunOn(cpus[i%len(cpus) : i%len(cpus)+1])
			}
			f.work()
		}()
	}
	stop := context.AfterFunc(ctx, func() { f.mu.Lock(); f.cond.Broadcast(); f.mu.Unlock() })
	wg.Wait()
	stop()
	f.res.Elapsed = time.Since(t0)
	if f.res.Err == nil && ctx.Err() != nil {
		f.res.Err = ctx.Err()
	}
	return f.res
}

type finder struct {
	m       Match
	within  string // within(m.Name)
	ctx     context.Context
	mu      sync.Mutex
	cond    *sync.Cond
	queue   []string
	pending int // directories queued or being read
	res     FindResult
	seen    *atomic.Int64
}

// next takes a directory to read; false when there are none left.
func (f *finder) next() (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(f.queue) == 0 && f.pending > 0 && f.ctx.Err() == nil {
		f.cond.Wait()
	}
	if len(f.queue) == 0 || f.ctx.Err() != nil {
		return "", false
	}
	d := f.queue[len(f.queue)-1]
	f.queue = f.queue[:len(f.queue)-1]
	return d, true
}

// dirBuf is the bytes a walker reads a directory's entries into at once.
const dirBuf = 64 << 10

func (f *finder) work() {
	buf := make([]byte, dirBuf)
	for {
		dir, ok := f.next()
		if !ok {
			return
		}
		var c FindResult
		subdirs, err := f.readDir(dir, buf, &c)
		if f.seen != nil {
			f.seen.Add(c.Scanned)
		}
		f.mu.Lock()
		f.res.Scanned += c.Scanned
		f.res.Found += c.Found
		f.res.Dirs++
		f.res.Errors += c.Errors
		if err != nil {
			f.res.Errors++
			if f.res.Err == nil {
				f.res.Err = err
			}
		}
		f.queue = append(f.queue, subdirs...)
		f.pending += len(subdirs) - 1
		f.cond.Broadcast()
		f.mu.Unlock()
	}
}

// nameMatches tells whether a file's name matches.
func (f *finder) nameMatches(name string) bool {
	if f.m.Name == "" {
		return true
	}
	if f.within != "" {
		return strings.Contains(name, f.within)
	}
	ok, _ := path.Match(f.m.Name, name)
	return ok
}

// within is what a pattern of the form *TEXT* (IO500's "*01*") asks a
// name to contain, where TEXT holds no other wildcard or escape: such a
// pattern matches exactly the names that contain TEXT, which
// strings.Contains tells several times faster than path.Match.
func within(pattern string) string {
	if len(pattern) < 3 || pattern[0] != '*' || pattern[len(pattern)-1] != '*' {
		return ""
	}
	text := pattern[1 : len(pattern)-1]
	if strings.ContainsAny(text, `*?[\`) {
		return ""
	}
	return text
}

// needsStat tells whether a match asks more than the name.
func (f *finder) needsStat() bool { return f.m.Size >= 0 || !f.m.Newer.IsZero() }

// statMatches tells whether a file whose name matched matches by its size
// and time.
func (f *finder) statMatches(st *unix.Stat_t) bool {
	if f.m.Size >= 0 && st.Size != f.m.Size {
		return false
	}
	return f.m.Newer.IsZero() || time.Unix(st.Mtim.Unix()).After(f.m.Newer)
}
