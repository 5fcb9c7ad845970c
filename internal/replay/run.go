package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/origin"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
)

// Options are the parameters of one replay.
type Options struct {
	Log string // the access log, plain or gzip-compressed; "-": Stdin
	// LogName is the name the result gives the log when Log is a copy of
	// it (an agent's of the coordinator's); Log when empty.
	LogName string
	// Stdin is what LOG "-" reads (os.Stdin when nil).
	Stdin io.Reader
	Path  string // the directory to replay in (in a directory of its own)
	// Speed is the pace: 0 as fast as possible, 1 as recorded, 2 twice as
	// fast.
	Speed float64
	Keep  bool
	// Data is how the content written compresses and repeats, the files
	// made before the replay and its writes (--compress-ratio,
	// --dedupe-ratio; pattern.Data).
	Data pattern.Data
	// Parts above 1 replays part Part (from 0) of the log's streams: one
	// host's share of a replay on Parts hosts.
	Part, Parts int
	// RunDir, if set, is the run's own directory (made by the run, as
	// bench's): a host's in a replay on many.
	RunDir string
	// DropCaches is how the kernel's caches are dropped once what the
	// recording used without creating it is made, before the replay
	// (runenv.DropAuto, also "", DropAlways or DropNever);
	// SkipDropCaches is SKIP_DROP_CACHES=true.
	DropCaches     string
	SkipDropCaches bool
	// Limits bound the log's text read into memory.
	Limits Limits
	Hooks  Hooks
	// Capacity, if set, replaces the one replay once the log is loaded:
	// it is given the trace and play, which replays it in a directory of
	// its own, made and removed each time, as many times as it calls it.
	Capacity func(ctx context.Context, t *Trace, play Player) error
	// due makes each operation's latency count from its recorded time at
	// Speed (an open loop) rather than from when it began.
	due bool
}

// Player replays the loaded trace once into res, at speed (0: as fast as
// possible) as an open loop: each operation is due at its recorded time
// divided by speed, whatever the storage did, and its latency counts
// from then (corrected for coordinated omission, as bench's --rate).
type Player func(ctx context.Context, speed float64, res *report.Result) error

// Hooks are the run's callbacks to its caller; all are optional.
type Hooks struct {
	// Loading is called as the log's size bytes (decompressed) begin to
	// be read into the trace, with what tells how many of them are read
	// so far; Loaded is called once the log is read, Started when the
	// replay starts, with its engine and the number of operations, and
	// Finished when it ends.
	Loading  func(size int64, read func() int64)
	Loaded   func(t *Trace)
	Started  func(e *engine.Engine, ops int64)
	Finished func(e *engine.Engine)
	// Created, Removed and Warn are runenv's (runenv.Hooks).
	Created func(left string)
	Removed func()
	Warn    func(msg string)
}

// ErrBadInput is wrapped by errors the user fixes by changing the
// command line: a log that cannot be read or holds nothing to replay, a
// PATH that is not a directory, a speed out of range.
var ErrBadInput = errors.New("bad input")

type badInput struct{ err error }

func (b *badInput) Error() string   { return b.err.Error() }
func (b *badInput) Unwrap() []error { return []error{ErrBadInput, b.err} }

// Validate checks the options before anything is read or made.
func (o *Options) Validate() error {
	switch {
	case o.Log == "":
		return errors.New("a LOG to replay is required")
	case o.Path == "":
		return errors.New("a PATH to replay in is required")
	case o.DropCaches != "" && !runenv.ValidDropCaches(o.DropCaches):
		return fmt.Errorf("--drop-caches must be auto, always or never (got %q)", o.DropCaches)
	}
	if err := o.Data.Check(); err != nil {
		return err
	}
	return CheckSpeed(o.Speed, 0)
}

// CheckSpeed checks --speed for a log whose operations span span (0: not
// read yet): 0 (no pacing) or more, and not so slow that pacing the log,
// or before it is read a microsecond of it (the finest time a log
// records), would take longer than engine.MaxPace, as bench's open loops.
func CheckSpeed(speed float64, span time.Duration) error {
	switch {
	case math.IsNaN(speed) || math.IsInf(speed, 0) || speed < 0:
		return fmt.Errorf("--speed %v: want 0 (as fast as possible) or more", speed)
	case speed == 0:
		return nil
	}
	what := "a microsecond of the log"
	if span > time.Microsecond {
		what = fmt.Sprintf("the log's %v", span.Round(time.Millisecond))
	} else {
		span = time.Microsecond
	}
	if float64(span)/speed > float64(engine.MaxPace) {
		return fmt.Errorf("--speed %g: %s would take more than a week to replay at that pace; give a higher --speed, or 0", speed, what)
	}
	return nil
}

// ReadLog reads and parses the log at path.
func ReadLog(path string) (*Trace, error) { return ReadLogPart(path, 0, 1) }

// ReadLogPart reads and parses part (from 0) of parts of the log at path:
// the streams one host of parts replays.
func ReadLogPart(path string, part, parts int) (*Trace, error) {
	return readLogPart(context.Background(), path, part, parts, Limits{}, nil)
}

// LoadLog reads and parses the log at path within lim, stopped by ctx
// while it reads.
func LoadLog(ctx context.Context, path string, lim Limits) (*Trace, error) {
	return readLogPart(ctx, path, 0, 1, lim, nil)
}

// readLogPart is ReadLogPart within lim, stopped by ctx while the log is
// read, calling loading (when not nil) as it begins to parse the log
// (Hooks.Loading).
func readLogPart(ctx context.Context, path string, part, parts int, lim Limits, loading func(int64, func() int64)) (*Trace, error) {
	var data []byte
	st, err := os.Stat(path)
	if err == nil && st.Mode().IsRegular() {
		var f *os.File
		if f, err = os.Open(path); err == nil {
			defer f.Close()
			var mapped bool
			if data, mapped = mapLog(f); mapped {
				defer func() { _ = unix.Munmap(data) }()
				if err := lim.check(data); err != nil {
					return nil, &badInput{fmt.Errorf("log %s: %w", path, err)}
				}
			} else {
				data, err = readText(ctx, openLog(f), st.Size(), lim)
			}
		}
	} else if err == nil { // a FIFO, a device: read as it comes, within lim
		data, err = readText(ctx, openStream(path), 0, lim)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &badInput{fmt.Errorf("read log %s: %w", path, err)}
	}
	t, err := loadMapped(data, part, parts, watch(len(data), loading))
	if err != nil {
		return nil, &badInput{fmt.Errorf("log %s: %w", path, err)}
	}
	return t, nil
}

// watch is what a load of size bytes keeps its progress in, told to
// loading; nil when there is no loading to tell.
func watch(size int, loading func(int64, func() int64)) *atomic.Int64 {
	if loading == nil {
		return nil
	}
	read := new(atomic.Int64)
	loading(int64(size), read.Load)
	return read
}

// StdinLog is the name of the log read from standard input.
const StdinLog = "-"

// loadLog reads and parses the run's part of o.Log, from o.Stdin when it
// is StdinLog.
func (o Options) loadLog(ctx context.Context) (*Trace, error) {
	if o.Log != StdinLog {
		return readLogPart(ctx, o.Log, o.Part, o.Parts, o.Limits, o.Hooks.Loading)
	}
	in := o.Stdin
	if in == nil {
		in = os.Stdin
	}
	data, err := readText(ctx, openLog(in), 0, o.Limits)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, &badInput{fmt.Errorf("read log from standard input: %w", err)}
	}
	t, err := loadWatched(data, o.Part, o.Parts, watch(len(data), o.Hooks.Loading))
	if err != nil {
		return nil, &badInput{fmt.Errorf("log from standard input: %w", err)}
	}
	return t, nil
}

// Run replays o.Log in a new directory under o.Path and fills res. It
// returns what was measured with any error; on cancellation the result is
// marked interrupted and the error wraps ctx.Err(). Everything it makes is
// below that directory, removed at the end unless Keep is set.
func Run(ctx context.Context, o Options, res *report.Result) error {
	if err := o.Validate(); err != nil {
		return &badInput{err}
	}
	t, err := o.loadLog(ctx)
	if err != nil {
		if ctx.Err() != nil {
			res.Interrupted = true
		}
		return err
	}
	if err := CheckSpeed(o.Speed, t.Span); err != nil {
		return &badInput{err}
	}
	if o.Hooks.Loaded != nil {
		o.Hooks.Loaded(t)
	}
	if o.Capacity != nil {
		return o.Capacity(ctx, t, func(ctx context.Context, speed float64, res *report.Result) error {
			if err := CheckSpeed(speed, t.Span); err != nil {
				return &badInput{err}
			}
			po := o
			po.Speed, po.due = speed, speed > 0
			return po.play(ctx, t, res)
		})
	}
	return o.play(ctx, t, res)
}

// play replays the loaded trace t once in a new directory under o.Path.
func (o Options) play(ctx context.Context, t *Trace, res *report.Result) error {
	abs, err := runenv.OpenTarget(o.Path, res)
	if err != nil {
		return err
	}
	if err := checkSpace(t, abs); err != nil {
		return err
	}
	res.Parameters = params(o, t)
	bo := runenv.Options{Keep: o.Keep, RunDir: o.RunDir,
		Hooks: runenv.Hooks{Created: o.Hooks.Created, Removed: o.Hooks.Removed, Warn: o.Hooks.Warn}}
	dir, err := runenv.MakeRunDir(bo, abs)
	if err != nil {
		return err
	}
	warn := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		res.Warnings = append(res.Warnings, msg)
		if o.Hooks.Warn != nil {
			o.Hooks.Warn(msg)
		}
	}
	defer dir.Remove(warn)
	root, err := sysio.OpenRootNoFollow(dir.Path())
	if err != nil {
		return &runenv.Error{Phase: "prepare", Err: err}
	}
	defer root.Close()
	p := newPlayer(t, root, o.Speed, pattern.NewData(pattern.RandomSeed(), o.Data))
	p.due = o.due
	if err := p.makeInitial(ctx); err != nil {
		if ctx.Err() != nil {
			res.Interrupted = true
			return ctx.Err()
		}
		var bad *badInput
		if errors.As(err, &bad) {
			return err
		}
		return &runenv.Error{Phase: "prepare", Err: err}
	}
	reading := p.dropAndLook(ctx, o, res, warn)
	eng := engine.New(len(t.Streams))
	if o.Hooks.Started != nil {
		o.Hooks.Started(eng, t.Ops())
	}
	r, err := eng.Run(ctx, p.phase())
	p.closeAll()
	if o.Hooks.Finished != nil {
		o.Hooks.Finished(eng)
	}
	fill(res, r, t, o)
	res.Replay.Differed = p.diffs.list()
	if ph := res.FindPhase("replay-read"); ph != nil {
		if w := reading.End(ctx, ph, ph.Bytes); w != "" {
			warn("%s", w)
		}
	}
	if ctx.Err() != nil {
		res.Interrupted = true
		return ctx.Err()
	}
	if err != nil {
		return &runenv.Error{Phase: "replay", Err: err}
	}
	return nil
}

// makeInitial makes what the recording used without creating it, before
// the replay starts.
func (p *player) makeInitial(ctx context.Context) error {
	buf := make([]byte, min(p.bufSize, 1<<20))
	for _, e := range p.t.Initial {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err := p.make(e, buf, ctx.Done()); err != nil {
			if errors.Is(err, unix.EEXIST) { // made already: the log used it as a file and as a directory
				return &badInput{fmt.Errorf("the log contradicts itself: it uses %s both as a file and as a directory before it creates it", e.Path)}
			}
			return fmt.Errorf("make %s: %w", p.dir+e.Path, bare(err))
		}
	}
	return nil
}

// checkSpace refuses a log whose files, made before the replay, do not
// fit in the free space of the file system at abs: a preparation that
// fills the file system fails late and leaves a full disk to others.
func checkSpace(t *Trace, abs string) error {
	var need int64
	for _, es := range [][]Entry{t.Initial, t.Implied} {
		for _, e := range es {
			need += e.Size
		}
	}
	free, short := sysio.Short(abs, need)
	if !short {
		return nil
	}
	return &badInput{fmt.Errorf("the log reads files it did not create, made first with the sizes it needs: %s, and %s has %s free; replay a shorter log, or on a larger file system",
		units.FormatBytes(need), abs, units.FormatBytes(free))}
}

// Remedies of a replay whose reads the storage served under half of: the
// caches kept, or dropped before it began, when what was cached is what
// the recording read again after reading or writing it.
const (
	KeptRemedy    = "to measure the storage, let the replay drop the caches before it begins (as root; not with --drop-caches never)"
	DroppedRemedy = "the caches were dropped before the replay began, so these are the recording's own reads of what it had read or written before, which the application finds in its cache too"
)

// dropAndLook drops the caches once the files the recording used without
// creating them are made, and reads the counters of where the replay's
// reads will come from.
func (p *player) dropAndLook(ctx context.Context, o Options, res *report.Result, warn func(string, ...any)) *origin.Reading {
	drop := runenv.NewDropper(runenv.Options{DropCaches: cmp.Or(o.DropCaches, runenv.DropAuto), SkipDropCaches: o.SkipDropCaches},
		os.Geteuid() == 0, warn)
	res.CacheDrop = drop.Method()
	var files []string
	for _, e := range p.t.Initial {
		if !e.Dir {
			files = append(files, p.dir+e.Path)
		}
	}
	drop.Drop("the replay", files)
	probe := origin.New(p.dir)
	probe.Remedy = KeptRemedy
	if drop.Method() != "none" {
		probe.Remedy = DroppedRemedy
	}
	return probe.Begin(ctx, files, drop.Method() == "drop_caches")
}

// closeAll closes the handles the recording left open.
func (p *player) closeAll() {
	for i := range p.fds {
		if fd := p.fds[i].Swap(-1); fd >= 0 {
			unix.Close(int(fd))
		}
	}
}

// logName is the log's name in the result.
func (o Options) logName() string {
	if o.LogName != "" {
		return o.LogName
	}
	return o.Log
}

// params are the replay's parameters.
func params(o Options, t *Trace) report.Params {
	speed := "as fast as possible"
	if o.Speed > 0 {
		speed = fmt.Sprintf("%.4gx as recorded", o.Speed)
	}
	return append(report.Params{
		{Key: "log", Label: "Log", Value: o.logName(), Display: o.logName()},
		{Key: "format", Label: "Format", Value: t.Format, Display: t.Format},
		{Key: "streams", Label: "Streams", Value: len(t.Streams), Display: fmt.Sprint(len(t.Streams))},
		{Key: "speed", Label: "Speed", Value: o.Speed, Display: speed},
	}, report.DataParams(o.Data.Compress, o.Data.Dedupe)...)
}
