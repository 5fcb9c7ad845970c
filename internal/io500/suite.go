package io500

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/origin"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// suite is the state of one run.
type suite struct {
	o      Options
	res    *report.Result
	runner *workload.Runner
	stamp  time.Time // the timestamp file's time, which find's -newer compares with
	// wrote is set once the run's directories exist: cleanup removes them.
	wrote bool
	// gate is the phase's start (Options.PhaseStart), until ready calls it.
	gate func()
	// seen counts the entries find has looked at, for progress.
	seen atomic.Int64
	// Found is what the find phase found, and Expected what it should
	// find: the mdtest-hard files whose names match.
	Found, Expected int64
	// drop drops caches before the phases that read or stat; probe and
	// reading measure where a read phase's bytes came from.
	drop    *runenv.Dropper
	probe   *origin.Probe
	reading *origin.Reading
	// cached is the warning of the last phase, served from a cache, which
	// Run gives once the phase's end is shown.
	cached string
}

// Remedy is what the warning of a read phase served from a cache proposes.
const Remedy = "to measure the storage, run with --drop-caches auto (as root it drops all caches, else the run's files), or write more than memory holds before reading (a longer --stonewall and larger amounts)"

// sharedUnlooked is why the page cache of ior-hard's file is not looked
// at: a rank reads only its part of it.
const sharedUnlooked = "not looked at: every rank reads a part of one shared file"

func newSuite(o Options, res *report.Result) *suite {
	runner := workload.NewRunner(workload.Config{Dir: o.Dir, Workers: o.Threads, Verify: o.Verify, Seed: o.Seed, Repeat: o.dataPacketType() == DataTimestamp, Data: o.Data}, max(o.Sizes.EasyXfer, HardXfer, 4096))
	s := &suite{o: o, res: res, runner: runner, probe: origin.New(o.Dir)}
	s.probe.Remedy = Remedy
	s.drop = runenv.NewDropper(runenv.Options{DropCaches: cmp.Or(o.DropCaches, runenv.DropNever), SkipDropCaches: o.SkipDropCaches},
		os.Geteuid() == 0, s.warn)
	return s
}

// start runs phase p on files: it drops the caches first if p reads or
// stats, else writes back what earlier phases left dirty (both only when
// caches are dropped), and reads the counters of where its bytes come from
// if it reads (not looking at the page cache of a file all ranks share).
// record ends the reading.
func (s *suite) start(ctx context.Context, p workload.FilePhase, files []string, shared bool) (*workload.Result, error) {
	if p.Kind == workload.Read || p.Kind == workload.Stat {
		s.drop.Drop(p.Name, files)
	} else {
		s.drop.Flush(p.Name, s.o.Dir)
	}
	switch {
	case p.Kind != workload.Read:
	case shared:
		s.reading = s.probe.BeginUnlooked(ctx, sharedUnlooked)
	default:
		s.reading = s.probe.Begin(ctx, files, s.drop.Method() == "drop_caches")
	}
	return s.runner.Run(ctx, p)
}

// ready passes the phase's start, once: a FilePhase's Ready, or the
// find phase's start.
func (s *suite) ready() {
	if f := s.gate; f != nil {
		s.gate = nil
		f()
	}
}

func rankDir(r int) string { return "rank." + strconv.Itoa(r) }

// easyName and hardName are mdtest-easy's and mdtest-hard's file i of
// rank r, relative to the run's directory: a directory a rank, and one
// directory for all.
func easyName(r, i int) string { return mdEasy + "/" + rankDir(r) + "/" + mdtestName(r, i) }
func hardName(r, i int) string { return mdHard + "/" + mdtestName(r, i) }

// mdtestName is the name mdtest gives rank r's file i: file.mdtest.R.I.
// A directory's entries are then as long as mdtest's, and so as many fit
// in a block: ext4 scans a directory's leaf block entry by entry for the
// name and for room for it, under the directory's lock, and with the
// shorter file.R.I its blocks held 40% more entries, which made each of
// mdtest-hard-write's creates hold the shared directory's lock longer
// than mdtest's (benchmarks/records/hpc-io500.md).
func mdtestName(r, i int) string {
	return "file.mdtest." + strconv.Itoa(r) + "." + strconv.Itoa(i)
}

// findMatch is IO500's find: -newer timestamp -size 3901c -name "*01*".
const findName = "*01*"

func (s *suite) run(ctx context.Context, name string) error {
	if !s.wrote {
		s.wrote = true
		if err := s.mkdirs(); err != nil {
			return err
		}
	}
	z := s.o.Sizes
	var (
		r   *workload.Result
		err error
	)
	switch name {
	case "ior-easy-write", "ior-easy-read":
		r, err = s.ior(ctx, name, easyDir+"/ior_file_easy", z.EasyXfer, z.EasySegments, true)
	case "ior-hard-write", "ior-hard-read":
		r, err = s.ior(ctx, name, hardDir+"/ior_file_hard", HardXfer, z.HardSegments, false)
	case "mdtest-easy-write":
		r, err = s.create(ctx, name, easyName, z.EasyFiles, 0)
		if err == nil && s.o.Rank0 == 0 {
			err = s.timestamp() // find runs on the first host
		}
	case "mdtest-hard-write":
		r, err = s.create(ctx, name, hardName, z.HardFiles, HardFileSize)
	case "mdtest-easy-stat", "mdtest-easy-delete":
		r, err = s.meta(ctx, name, easyName, z.EasyFiles, 0)
	case "mdtest-hard-stat", "mdtest-hard-read", "mdtest-hard-delete":
		r, err = s.meta(ctx, name, hardName, z.HardFiles, HardFileSize)
	case "find":
		return s.find(ctx)
	default:
		return fmt.Errorf("no phase %q", name)
	}
	if r != nil {
		s.record(ctx, name, r)
	}
	s.reading = nil
	return err
}

// ior runs an IOR phase: a file per rank (easy) or one shared file of
// interleaved transfers (hard), each read back by another rank.
func (s *suite) ior(ctx context.Context, name, file string, xfer int64, segs int, perRank bool) (*workload.Result, error) {
	kind := workload.Read
	p := workload.FilePhase{Name: name, Title: name, Targets: s.runner.NewTargets(s.o.Dir, []string{file}), BlockSize: xfer,
		Shared: &workload.SharedFile{Block: xfer, Segments: segs, Rank0: s.o.Rank0, World: s.o.World, PerRank: perRank}, Ready: s.ready}
	if name[len(name)-5:] == "write" {
		// Each rank fsyncs its file before it closes it, in the phase's
		// time, as IO500 runs IOR (-e).
		kind, p.Duration, p.Fsync = workload.Write, s.o.Stonewall, true
	}
	p.Kind = kind
	return s.start(ctx, p, p.Shared.ReadFiles(p.Targets.Paths[0], s.o.Threads), !perRank)
}

// create runs a stonewalled mdtest create phase: each rank creates its
// files in order (size bytes each) until done or the stonewall, then
// writes back the file system, in the phase's time, as IO500 runs mdtest
// (-Y).
func (s *suite) create(ctx context.Context, phase string, name func(r, i int) string, n int, size int64) (*workload.Result, error) {
	if err := s.mdDirs(phase); err != nil {
		return nil, err
	}
	names := make([]string, 0, n*s.o.Threads)
	for w := range s.o.Threads {
		for i := range n {
			names = append(names, name(s.o.Rank0+w, i))
		}
	}
	p := workload.FilePhase{Name: phase, Title: phase, Kind: workload.Create, PerFile: true, Targets: s.runner.NewTargets(s.o.Dir, names),
		FileSize: size, BlockSize: max(size, 1), Duration: s.o.Stonewall, Once: true, SyncFS: true, Ready: s.ready}
	return s.start(ctx, p, nil, false)
}

// meta runs an mdtest phase on the files that exist: rank r works on
// those of rank r+1 (of the next host's first rank, with more than one
// host), as mdtest -N does, so that no rank finds its own in its cache.
func (s *suite) meta(ctx context.Context, phase string, name func(r, i int) string, n int, size int64) (*workload.Result, error) {
	var names []string
	for w := range s.o.Threads {
		src := s.source(s.o.Rank0 + w)
		c, err := s.created(name, src, n)
		if err != nil {
			return nil, err
		}
		for i := range c {
			names = append(names, name(src, i))
		}
	}
	if len(names) == 0 {
		return nil, errors.New("no files to work on: the create phase made none")
	}
	p := workload.FilePhase{Name: phase, Title: phase, Targets: s.runner.NewTargets(s.o.Dir, names), FileSize: size, BlockSize: max(size, 1), Ready: s.ready}
	switch phase[len(phase)-4:] {
	case "stat":
		p.Kind = workload.Stat
	case "read":
		p.Kind, p.PerFile = workload.Read, true
	default:
		p.Kind = workload.Unlink
	}
	return s.start(ctx, p, p.Targets.Paths, false)
}

// source is the rank whose files rank r works on in a metadata phase.
func (s *suite) source(r int) int {
	shift := 1
	if s.o.World > s.o.Threads {
		shift = s.o.Threads
	}
	return (r + shift) % s.o.World
}

// created counts the files rank r created of its n: a rank creates its
// files in order, so they are a prefix, found by a binary search.
func (s *suite) created(name func(r, i int) string, r, n int) (int, error) {
	lo, hi := 0, n // files [0, lo) exist, [hi, n) do not
	for lo < hi {
		mid := (lo + hi) / 2
		var st unix.Stat_t
		err := unix.Lstat(filepath.Join(s.o.Dir, name(r, mid)), &st)
		switch {
		case err == nil:
			lo = mid + 1
		case err == unix.ENOENT:
			hi = mid
		default:
			return 0, &os.PathError{Op: "stat", Path: filepath.Join(s.o.Dir, name(r, mid)), Err: err}
		}
	}
	return lo, nil
}

// timestamp makes the file whose time find's -newer compares with.
func (s *suite) timestamp() error {
	p := filepath.Join(s.o.Dir, "timestampfile")
	if err := os.WriteFile(p, nil, 0o644); err != nil {
		return err
	}
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	s.stamp = st.ModTime()
	return nil
}

// maxWalkers is the most walkers find starts: IO500's find runs on every
// rank of every node, fsbench's on one client, where a few dozen
// directory reads in flight already keep a server busy.
const maxWalkers = 64

// walkers is how many walkers find starts: one a rank of the world (as
// IO500's pfind runs on every rank), at most maxWalkers unless this host
// alone has more threads. Ranks started by a launcher are one a process,
// and the first rank's process walks for all of them.
func walkers(o Options) int {
	return max(min(max(o.World, o.Threads), maxWalkers), o.Threads)
}

// onCPUs says on how many CPUs find's walkers ran, when it is known.
func onCPUs(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(" on %d CPUs", n)
}

// find runs IO500's find phase on the first host: a parallel walk of the
// run's directory, a walker for each rank (walkers). Other hosts record
// the phase with nothing done, so that every host's result has the same
// phases.
func (s *suite) find(ctx context.Context) error {
	ph := report.PhaseResult{Name: "find", Title: "find"}
	s.ready()
	if s.o.Rank0 == 0 {
		n := walkers(s.o)
		f := Find(ctx, s.o.Dir, Match{Name: findName, Size: HardFileSize, Newer: s.stamp}, n, s.o.IdleCPUs, &s.seen)
		if f.Err != nil {
			return f.Err
		}
		ph.Ops, ph.Items, ph.Errors, ph.Seconds = f.Scanned, f.Scanned, f.Errors, f.Elapsed.Seconds()
		ph.SetRates()
		SetValue(&ph)
		ph.Cost = report.Measure{Value: ph.Seconds, Unit: report.UnitSeconds}
		ph.LatencyOf = fmt.Sprintf("entries looked at by %d walkers%s; %d of them matched -newer -size %dc -name %q", n, onCPUs(f.CPUs), f.Found, HardFileSize, findName)
		s.Found = f.Found
		exp, err := s.expected()
		if err != nil {
			return err
		}
		if s.Expected = exp; exp != f.Found {
			s.warn("find found %d files, where mdtest-hard made %d that match", f.Found, exp)
		}
	}
	s.res.Phases = append(s.res.Phases, ph)
	return nil
}

// expected counts the mdtest-hard files whose names match find's pattern.
func (s *suite) expected() (int64, error) {
	var n int64
	for r := range s.o.World {
		c, err := s.created(hardName, r, s.o.Sizes.HardFiles)
		if err != nil {
			return 0, err
		}
		for i := range c {
			if ok, _ := path.Match(findName, path.Base(hardName(r, i))); ok {
				n++
			}
		}
	}
	return n, nil
}

func (s *suite) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.res.Warnings = append(s.res.Warnings, msg)
	if s.o.Warn != nil {
		s.o.Warn(msg)
	}
}

// record adds a phase's measurement to the result with IO500's figure as its
// value.
func (s *suite) record(ctx context.Context, name string, r *workload.Result) {
	ph := r.Report()
	s.cached = s.reading.End(ctx, &ph, ph.Bytes)
	SetValue(&ph)
	ph.Cost = report.Measure{Value: ph.Latency.Mean / 1e3, Unit: report.UnitMsPerOp}
	ph.LatencyOf = latencyOf(name, s.o.Sizes)
	s.res.Phases = append(s.res.Phases, ph)
	if len(name) > 6 && name[len(name)-6:] == "-write" && r.Elapsed < s.o.Stonewall && !s.o.Quick {
		s.warn("%s was done in %.1fs, before the stonewall of %s: IO500's rules want it to run that long (more files or segments)", name, r.Elapsed.Seconds(), s.o.Stonewall)
	}
}

func latencyOf(name string, z Sizes) string {
	switch name {
	case "ior-easy-write", "ior-easy-read":
		return units.FormatBytes(z.EasyXfer) + " transfer, a file per rank"
	case "ior-hard-write", "ior-hard-read":
		return "47008-byte transfer, interleaved in one shared file"
	case "mdtest-easy-write":
		return "create+close of an empty file, a directory per rank"
	case "mdtest-hard-write":
		return "create, write 3901 bytes, close, in one shared directory"
	case "mdtest-hard-read":
		return "open, read 3901 bytes, close"
	}
	return name[len("mdtest-easy-"):] + " of a file"
}

// SetValue sets a phase's value to IO500's figure: GiB/s for an ior
// phase, thousands of items a second for the others.
func SetValue(ph *report.PhaseResult) {
	if Group(ph.Name) == Bandwidth {
		ph.Value = report.Measure{Value: ph.BytesPerSec / float64(units.GiB), Unit: report.UnitGiBPerSec}
	} else {
		ph.Value = report.Measure{Value: ph.ItemsPerSec / 1000, Unit: report.UnitKIOPS}
	}
}

// cleanup removes what the run made: the first host does, once every
// host is done (Options.Finish).
func (s *suite) cleanup() error {
	if s.o.Finish != nil {
		s.o.Finish()
	}
	if !s.wrote || s.o.Rank0 != 0 || s.o.Keep {
		return nil
	}
	var errs []error
	for _, d := range []string{easyDir, hardDir, mdEasy, mdHard, "timestampfile"} {
		errs = append(errs, os.RemoveAll(filepath.Join(s.o.Dir, d)))
	}
	return errors.Join(errs...)
}
