// Package io500 is `fsbench io500`: the phases of the IO500 benchmark
// (ior-easy, mdtest-easy, ior-hard, mdtest-hard, find) in IO500's order,
// with stonewalled write phases, on fsbench's engine, and IO500's scores
// computed from them. It is IO500-style, not an official IO500 run: the
// phases do what IOR, mdtest and pfind do in IO500's configuration, but
// the programs are not IO500's, and the run is not a submission.
//
// It is not IO500's program and makes no official IO500 result; it writes
// and removes nothing outside the run's own directory.
package io500

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// Sizes are the amounts of the suite's phases. A write phase does at most
// its amount, and stops earlier at the stonewall.
type Sizes struct {
	EasyXfer     int64 // ior-easy's transfer and block (IOR -t 2m)
	EasySegments int   // ior-easy's transfers a rank (IOR -b / -t)
	HardSegments int   // ior-hard's 47,008-byte transfers a rank (IOR -s)
	EasyFiles    int   // mdtest-easy's files a rank
	HardFiles    int   // mdtest-hard's files a rank
}

// IO500's own figures.
const (
	HardXfer     = 47008 // ior-hard's transfer (IOR -t 47008 -b 47008)
	HardFileSize = 3901  // mdtest-hard's files (mdtest -w 3901 -e 3901)
	// DefaultStonewall is IO500's rule: a write phase runs 300 s.
	DefaultStonewall = 300 * time.Second
)

// Standard are the amounts of a full run: more than a rank writes in the
// stonewall's time on most storage (IO500 sets ior-easy's block to
// 9,920,000 MiB and ior-hard's segments to 10,000,000).
func Standard() Sizes {
	return Sizes{EasyXfer: 2 * units.MiB, EasySegments: 4_960_000, HardSegments: 10_000_000, EasyFiles: 1_000_000, HardFiles: 1_000_000}
}

// Quick are the amounts of a smoke run (--quick): seconds, not minutes,
// yet enough operations a rank for a verdict on every phase's rate (20,
// verdict.MinOps) and on a p99 of ior-hard and the mdtest phases (1,000).
func Quick() Sizes {
	return Sizes{EasyXfer: 2 * units.MiB, EasySegments: 32, HardSegments: 1024, EasyFiles: 1000, HardFiles: 1000}
}

// Options are a run's settings.
type Options struct {
	// Dir is the run's own directory, which exists and is empty: every
	// file of the run is made below it, and removed at the end.
	Dir     string
	Threads int // ranks on this host
	Rank0   int // global rank of this host's first thread
	World   int // ranks of all hosts; 0: Threads
	// IdleCPUs are CPUs of this machine that the other ranks on it run on
	// (cluster.Job.IdleCPUs): they wait while the first rank's find walks
	// for all, and its walkers run there too.
	IdleCPUs  []int
	Stonewall time.Duration
	Sizes     Sizes
	Verify    bool
	// DataPacketType is what the writes write, named as IO500's option:
	// DataRandom (the default, "" too) is content that no transfer
	// repeats, DataTimestamp one buffer written again and again, as
	// IO500 and IOR do by default (workload.Config.Repeat).
	DataPacketType string
	// Data is how the content of the write phases compresses and repeats
	// (--compress-ratio, --dedupe-ratio; pattern.Data), with
	// DataRandom only: DataTimestamp's one buffer repeats by itself.
	Data  pattern.Data
	Quick bool // a smoke run: no warning that a write ended before the stonewall
	Seed  uint64
	// PhaseStart, if set, is called at each phase's start (a host's
	// barrier): after what the phase prepares (its list of files, its
	// workers' buffers, a collection), just before its clock starts, so
	// that hosts start their clocks together. It gets a count of the
	// run's operations so far, for progress. Warn is called with what
	// a reader of the result should know.
	PhaseStart func(name string, ops func() int64)
	// PhaseEnd, if set, is called when a phase ends, before the next one
	// prepares: the phase's count is still there to read.
	PhaseEnd func(name string)
	Warn     func(msg string)
	// Finish, if set, is called after the last phase, before the clean-up
	// (a host's barrier: the first host removes the files all share).
	Finish func()
	// Keep leaves the ior files and the timestamp file (the delete phases
	// have removed mdtest's files).
	Keep bool
	// DropCaches is how the kernel's caches are dropped before the phases
	// that read or stat (runenv.DropNever, the default as IO500 runs its
	// phases back to back, DropAuto or DropAlways); unless never, the
	// others start after the file system's dirty data is written back.
	// SkipDropCaches is SKIP_DROP_CACHES=true.
	DropCaches     string
	SkipDropCaches bool
	// NoSpaceCheck runs even when the amounts do not fit in the free
	// space (CheckSpace): the stonewall may end the writes first.
	NoSpaceCheck bool
}

// The values of Options.DataPacketType.
const (
	DataRandom    = "random"
	DataTimestamp = "timestamp"
)

// dataPacketType is o.DataPacketType with its default filled in.
func (o *Options) dataPacketType() string {
	if o.DataPacketType == "" {
		return DataRandom
	}
	return o.DataPacketType
}

// Validate checks the options before anything is written.
func (o *Options) Validate() error {
	s := o.Sizes
	switch {
	case o.Threads < 1:
		return fmt.Errorf("--threads must be at least 1 (got %d)", o.Threads)
	case o.Stonewall <= 0:
		return fmt.Errorf("--stonewall must be greater than 0 (got %s)", o.Stonewall)
	case o.DataPacketType != "" && o.DataPacketType != DataRandom && o.DataPacketType != DataTimestamp:
		return fmt.Errorf("--data-packet-type must be %s or %s (got %q)", DataRandom, DataTimestamp, o.DataPacketType)
	case !o.Data.Plain() && o.dataPacketType() != DataRandom:
		return fmt.Errorf("--data-packet-type %s writes one buffer again and again: --compress-ratio and --dedupe-ratio shape the content of random", o.DataPacketType)
	case o.Data.Check() != nil:
		return o.Data.Check()
	case o.DropCaches != "" && !runenv.ValidDropCaches(o.DropCaches):
		return fmt.Errorf("--drop-caches must be auto, always or never (got %q)", o.DropCaches)
	case s.EasyXfer < 1 || s.EasySegments < 1 || s.HardSegments < 1 || s.EasyFiles < 1 || s.HardFiles < 1:
		return errors.New("the amounts of the phases must be at least 1")
	case int64(s.EasyFiles)+int64(s.HardFiles) > workload.MaxTreeFiles/int64(max(o.World, o.Threads)):
		return fmt.Errorf("%d and %d files a rank on %d ranks are more than %d files", s.EasyFiles, s.HardFiles, max(o.World, o.Threads), workload.MaxTreeFiles)
	}
	return nil
}

// Phase names, in IO500's order.
var Order = []string{
	"ior-easy-write", "mdtest-easy-write", "ior-hard-write", "mdtest-hard-write", "find",
	"ior-easy-read", "mdtest-easy-stat", "ior-hard-read", "mdtest-hard-stat",
	"mdtest-easy-delete", "mdtest-hard-read", "mdtest-hard-delete",
}

// Group is the score group of a phase: bandwidth for IOR's, metadata for
// the others.
func Group(name string) string {
	if len(name) > 3 && name[:3] == "ior" {
		return Bandwidth
	}
	return Metadata
}

// Run runs the suite and appends its phases to res, with IO500's figure
// (GiB/s or kIOPS) as each phase's value. It returns on the first error,
// with the phases measured until then; Run removes the files it made, also
// then, but not Dir itself.
func Run(ctx context.Context, o Options, res *report.Result) (err error) {
	if o.World == 0 {
		o.World = o.Threads
	}
	if err := o.Validate(); err != nil {
		return err
	}
	s := newSuite(o, res)
	res.CacheDrop = s.drop.Method()
	defer func() {
		if cerr := s.cleanup(); cerr != nil && err == nil {
			err = cerr
		}
	}()
	for _, name := range Order {
		if o.PhaseStart != nil {
			ops := s.runner.Live.Ops.Load
			if name == "find" {
				ops = s.seen.Load
			}
			s.gate = func() { o.PhaseStart(name, ops) }
		}
		err := s.run(ctx, name)
		s.ready() // a phase that failed before its start still passes it
		if o.PhaseEnd != nil {
			o.PhaseEnd(name)
		}
		if s.cached != "" {
			s.warn("%s", s.cached)
			s.cached = ""
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	return nil
}

// Scores computes the scores of a result's IO500 phases.
func ScoresOf(phases []report.PhaseResult) Scores {
	var ps []PhaseScore
	for _, p := range phases {
		ps = append(ps, PhaseScore{Name: p.Name, Group: Group(p.Name), Value: p.Value.Value})
	}
	return Score(ps)
}

// dirs of the run below Dir.
const (
	easyDir = "ior-easy"
	hardDir = "ior-hard"
	mdEasy  = "mdtest-easy"
	mdHard  = "mdtest-hard"
)

// mkdirs makes the ior phases' directories, before the first phase.
func (s *suite) mkdirs() error {
	for _, d := range []string{easyDir, hardDir} {
		if err := os.MkdirAll(filepath.Join(s.o.Dir, d), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// mdDirs makes the directories a create phase puts its files in, as the
// phase is prepared (as mdtest makes its tree when it starts). Made before
// the ior files, they sat where those files then took the free blocks
// around them: on ext4 (whose allocator puts a new directory in a group
// with room, and a file's blocks near its directory) mdtest-hard-write
// made 2.2 thousand files a second, its sync included, where IO500's
// program made about 4 (benchmarks/records/hpc-io500.md). Every host makes them;
// MkdirAll lets all but the first find them made.
func (s *suite) mdDirs(phase string) error {
	if phase == "mdtest-hard-write" {
		return os.MkdirAll(filepath.Join(s.o.Dir, mdHard), 0o755)
	}
	for w := range s.o.Threads {
		if err := os.MkdirAll(filepath.Join(s.o.Dir, mdEasy, rankDir(s.o.Rank0+w)), 0o755); err != nil {
			return err
		}
	}
	return nil
}
