package io500

import (
	"context"
	"fmt"
	"strconv"

	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/units"
)

// Note is what a result says of itself.
const Note = "IO500-style: IO500's phases, order, stonewall and scoring on fsbench's engine, not IOR, mdtest or pfind; not an official IO500 submission"

// Target is where a run happens and what it leaves.
type Target struct {
	Path string
	// RunDir, if set, is the run's directory (it must not exist), instead
	// of a new name under Path: a host's part of a run on many hosts.
	RunDir string
	// DataDir, if set, holds the suite's files instead of the run's
	// directory: on many hosts, the directory of the run they all share.
	DataDir string
	Keep    bool
	// Created and Removed are told of the run's directory (runenv.Hooks).
	Created func(left string)
	Removed func()
}

// RunAt runs the suite in a new directory of its own under t.Path, fills
// res (target, parameters, phases, scores) and removes the directory.
func RunAt(ctx context.Context, t Target, o Options, res *report.Result) error {
	if o.World == 0 {
		o.World = o.Threads
	}
	if err := o.Validate(); err != nil {
		return &runenv.Error{Phase: "prepare", Err: err}
	}
	abs, err := runenv.OpenTarget(t.Path, res)
	if err != nil {
		return err
	}
	spaceWarning, err := CheckSpace(abs, o)
	if err != nil {
		return &runenv.Error{Phase: "prepare", Err: err}
	}
	res.Parameters, res.Threads = params(o), o.Threads
	warn := func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		res.Warnings = append(res.Warnings, msg)
		if o.Warn != nil {
			o.Warn(msg)
		}
	}
	if spaceWarning != "" {
		warn("%s", spaceWarning)
	}
	dir, err := runenv.MakeRunDir(runenv.Options{RunDir: t.RunDir, Keep: t.Keep,
		Hooks: runenv.Hooks{Created: t.Created, Removed: t.Removed, Warn: o.Warn}}, abs)
	if err != nil {
		return err
	}
	defer dir.Remove(warn)
	o.Dir, o.Keep = dir.Path(), t.Keep
	if t.DataDir != "" {
		o.Dir = t.DataDir
	}
	err = Run(ctx, o, res)
	SetScores(res, o)
	if ctx.Err() != nil {
		res.Interrupted = true
		return ctx.Err()
	}
	return err
}

// SetScores computes res's scores from its phases.
func SetScores(res *report.Result, o Options) {
	s := ScoresOf(res.Phases)
	res.IO500 = &report.IO500{Bandwidth: s.Bandwidth, Metadata: s.Metadata, Score: s.Total,
		Stonewall: o.Stonewall.Seconds(), Quick: o.Quick, Note: Note}
}

func params(o Options) report.Params {
	z := o.Sizes
	num := func(k, label string, v int) report.Param {
		return report.Param{Key: k, Label: label, Value: v, Display: strconv.Itoa(v)}
	}
	return append(report.Params{
		num("threads", "NumThreads", o.Threads),
		num("ranks", "Ranks", o.World),
		{Key: "stonewall", Label: "Stonewall", Value: o.Stonewall.Seconds(), Display: o.Stonewall.String()},
		{Key: "ior_easy_xfer", Label: "ior-easy transfer", Value: z.EasyXfer, Display: units.FormatBytes(z.EasyXfer)},
		num("ior_easy_segments", "ior-easy transfers a rank (at most)", z.EasySegments),
		num("ior_hard_segments", "ior-hard 47008-byte transfers a rank (at most)", z.HardSegments),
		num("mdtest_easy_files", "mdtest-easy files a rank (at most)", z.EasyFiles),
		num("mdtest_hard_files", "mdtest-hard files a rank (at most)", z.HardFiles),
		{Key: "verify", Label: "Verify", Value: o.Verify, Display: strconv.FormatBool(o.Verify)},
		{Key: "data_packet_type", Label: "Data", Value: o.dataPacketType(), Display: o.dataPacketType()},
	}, report.DataParams(o.Data.Compress, o.Data.Dedupe)...)
}
