package cli

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/expect"
	"github.com/fsbench/fsbench/internal/io500"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/units"
)

// IO500Options are the flags of `fsbench io500`.
type IO500Options struct {
	io500.Options
	io500.Target
	RunFlags
	easyXfer string
	data     dataFlags
}

// io500Catalog is what --expect and compare may name: every phase.
func io500Catalog() expect.Catalog {
	c := expect.Catalog{Command: "io500"}
	for _, n := range io500.Order {
		c.Metrics = append(c.Metrics, expect.Metric{Name: n, Bytes: io500.Group(n) == io500.Bandwidth})
	}
	return c
}

func newIO500Cmd(app *App) *cobra.Command { return newIO500CmdWith(app, nil) }

// newIO500CmdWith builds the command; runF replaces the run in tests of
// flag parsing.
func newIO500CmdWith(app *App, runF func(context.Context, *IO500Options) error) *cobra.Command {
	o := &IO500Options{}
	z := io500.Standard()
	cmd := &cobra.Command{
		Use:   "io500 PATH",
		Short: "Run IO500's phases (ior-easy, mdtest-easy, ior-hard, mdtest-hard, find) and compute its scores",
		Long:  io500Long,
		Example: `  fsbench io500 /mnt/lustre -p 16
  fsbench io500 /mnt/jfs --quick -o json > io500.json
  fsbench io500 /mnt/cephfs -p 8 --stonewall 60s --verify
  fsbench compare before.json after.json`,
		Args: exactArgs(1, "one PATH, the directory to run in"),
	}
	cmd.RunE = hostsCommand[*IO500Options]{opts: o, flags: &o.RunFlags, runF: runF, cluster: io500Cluster, run: runIO500,
		resolve: func(cmd *cobra.Command, args []string) error {
			o.Path = args[0]
			o.SkipDropCaches = skipDropCaches(app)
			return o.resolve(cmd)
		}}.runE(app)
	f := cmd.Flags()
	f.IntVarP(&o.Threads, "threads", "p", 1, "parallel workers on each host: here ranks, threads that each do a rank's part of every phase")
	f.DurationVar(&o.Stonewall, "stonewall", io500.DefaultStonewall, "write phases stop after this `DURATION` (IO500's rule: 300s); later phases work on what was written")
	f.StringVar(&o.easyXfer, "ior-easy-xfer", units.FormatBytes(z.EasyXfer), "ior-easy's transfer `SIZE` (IOR -t)")
	f.IntVar(&o.Sizes.EasySegments, "ior-easy-transfers", z.EasySegments, "ior-easy's transfers a rank at most (IOR -b over -t)")
	f.IntVar(&o.Sizes.HardSegments, "ior-hard-segments", z.HardSegments, "ior-hard's 47008-byte transfers a rank at most (IOR -s)")
	f.IntVar(&o.Sizes.EasyFiles, "mdtest-easy-files", z.EasyFiles, "mdtest-easy's files a rank at most (mdtest -n)")
	f.IntVar(&o.Sizes.HardFiles, "mdtest-hard-files", z.HardFiles, "mdtest-hard's files a rank at most (mdtest -n)")
	f.BoolVar(&o.Verify, "verify", false, "check every byte read back (ior reads, mdtest-hard-read); off by default, as in bench (objbench's is on)")
	f.StringVar(&o.DataPacketType, "data-packet-type", io500.DataRandom, "what the writes write, as IO500's option: random (content no transfer repeats, which storage that compresses or deduplicates cannot shrink) or timestamp (one buffer written again and again, as IO500 and IOR do by default; --verify then checks each transfer against it)")
	f.StringVar(&o.DropCaches, "drop-caches", runenv.DropNever, "start each phase from a clean cache: never (IO500 runs its phases back to back), auto (drop all caches as root, else the run's files, before the phases that read or stat; write back dirty data before the others), always; SKIP_DROP_CACHES=true disables")
	f.BoolVar(&o.NoSpaceCheck, "no-space-check", false, "run even when the amounts given do not fit in PATH's free space (refused by default, exit 2): the stonewall may end the writes first; IO500's standard amounts are not refused, only warned of")
	addDataFlags(cmd, &o.data)
	f.BoolVar(&o.Target.Keep, "keep", false, "keep the run's directory with the ior files and the timestamp file (the delete phases remove mdtest's files)")
	q := io500.Quick()
	addRunFlags(cmd, &o.RunFlags, []Preset{
		{"ior-easy-transfers", fmt.Sprint(q.EasySegments)}, {"ior-hard-segments", fmt.Sprint(q.HardSegments)},
		{"mdtest-easy-files", fmt.Sprint(q.EasyFiles)}, {"mdtest-hard-files", fmt.Sprint(q.HardFiles)},
	})
	return cmd
}

const io500Long = `Run the phases of the IO500 benchmark on the file system that holds PATH, in
IO500's order, and compute IO500's scores from them:

  ior-easy-write     each rank writes a file of its own in 2 MiB transfers
  mdtest-easy-write  each rank creates empty files in a directory of its own
  ior-hard-write     every rank writes 47008-byte transfers, interleaved, into ONE shared file
  mdtest-hard-write  every rank creates 3901-byte files in ONE shared directory
  find               a parallel walk of everything, matching -newer -size 3901c -name "*01*"
  ior-easy-read, mdtest-easy-stat, ior-hard-read, mdtest-hard-stat,
  mdtest-easy-delete, mdtest-hard-read, mdtest-hard-delete

Write phases stop at the stonewall (--stonewall, IO500's 300 s by default) or
when their amount is done; IO500 asks that they run the whole stonewall, and a
write that ends earlier is warned of. As IO500's do, they end with what they
wrote on the storage, inside their time: each rank fsyncs its ior file before
closing it (IOR's -e) and writes back the file system after its creates
(mdtest's -Y). Every later phase works on exactly what
was written: rank r reads, stats and deletes what rank r+1 made, so that no
rank is served by what it just wrote. The bandwidth score is the geometric mean
of the four ior phases in GiB/s, the metadata score that of the eight others in
thousands of operations a second (kIOPS), and the total their geometric mean,
as IO500's calc_score computes them.

The phases run back to back, as IO500 runs them, so on a client whose memory
holds what was written the reads are answered by the page cache: each read
phase says how much of what it read came from the storage (under the table,
and "origin" in JSON), and warns when it was under half. --drop-caches auto
starts each phase from a clean cache: it drops the caches before the phases
that read or stat, and writes back what earlier phases left dirty before the
others, so that a write phase does not pay for the writes before it.

The writes write content that no transfer repeats (IO500's dataPacketType
random, in effect), so storage that compresses or deduplicates cannot shrink
it. IO500 and IOR write one buffer again and again by default (timestamp):
--data-packet-type timestamp does the same, for figures beside theirs on such
storage. --compress-ratio and --dedupe-ratio make the random content compress
and repeat as bench's does.

This is IO500-style, NOT an official IO500 result: the phases are run by
fsbench's engine, not by IOR, mdtest and pfind, and the run is no submission.
A run whose amounts (--quick's, or those given) do not fit in the free space of
PATH is refused before anything is written, exit 2; --no-space-check runs it
anyway, where the stonewall ends the writes before they fill it. IO500's
standard amounts (about 10 TiB a rank) are meant to outlast the stonewall:
they are warned of, not refused.
--quick is a smoke run with small amounts. Everything is removed at the end.`

func (o *IO500Options) resolve(cmd *cobra.Command) error {
	if err := o.Cluster.resolve(cmd); err != nil {
		return err
	}
	if err := o.CI.resolve(cmd, io500Catalog()); err != nil {
		return err
	}
	if err := parseSizes(sizeArg{"ior-easy-xfer", o.easyXfer, &o.Sizes.EasyXfer, 0}); err != nil {
		return err
	}
	o.Quick = o.CI.Quick
	var err error
	if o.Data, err = o.data.resolve(cmd); err != nil {
		return err
	}
	if o.Sizes.EasyXfer < 1 {
		return Usagef("--ior-easy-xfer must be greater than 0")
	}
	if o.Sizes.EasyXfer > units.GiB {
		return Usagef("--ior-easy-xfer %s is larger than 1 GiB", o.easyXfer)
	}
	if err := o.Options.Validate(); err != nil {
		return &UsageError{Err: err}
	}
	if st, err := os.Stat(o.Path); err == nil && !st.IsDir() && !o.Cluster.active() {
		return Usagef("PATH %s is not a directory: give the directory to run in", o.Path)
	}
	return o.Output.resolve()
}

func runIO500(ctx context.Context, app *App, o *IO500Options) error {
	if err := missingPath(o.Path, o.Cluster.active()); err != nil {
		return err
	}
	var prog *Progress
	o.Warn = func(msg string) { app.Warnf("%s", msg) }
	o.PhaseStart = func(name string, ops func() int64) {
		prog = app.StartProgress(name, -1, "ops", ops)
	}
	o.PhaseEnd = func(string) {
		if prog != nil {
			prog.Done()
			prog = nil
		}
	}
	if !o.Cluster.active() {
		if _, err := io500.CheckSpace(o.Path, o.Options); err != nil { // its warning comes with the run's
			return &UsageError{Err: err}
		}
	}
	o.Created, o.Removed = app.Left.Set, app.Left.Clear
	if !app.Globals.Quiet {
		fmt.Fprintf(app.IO.Err, "IO500-style run (not an official IO500 result) in %s with %d ranks, stonewall %s\n", o.Path, o.Threads, o.Stonewall)
	}
	res, err := app.measure(ctx, "io500", o.Repeat, func(ctx context.Context, res *report.Result) error {
		opts := o.Options
		opts.PhaseEnd = func(name string) {
			// The last line's count and time are the phase's own.
			if p := res.FindPhase(name); p != nil && prog != nil {
				// Rounded, not truncated: the line's rate is then Ops over
				// the very Seconds the table's rate divides by.
				prog.measured(p.Ops, time.Duration(math.Round(p.Seconds*float64(time.Second))))
			}
			o.PhaseEnd(name)
		}
		return io500.RunAt(ctx, o.Target, opts, res)
	})
	if prog != nil {
		prog.Done()
	}
	if res.IO500 == nil || len(res.Runs) > 0 {
		io500.SetScores(res, o.Options) // of the runs' medians
	}
	if err != nil && !res.Interrupted {
		return app.writeFailed(res, &o.Output, err)
	}
	return app.finishRun(res, &o.Output, &o.CI)
}

// io500Cluster makes the run of io500 on the agents: -p ranks on each,
// every host's ranks in the files and directories the suite shares, so
// PATH must be one file system every host mounts.
func io500Cluster(cmd *cobra.Command, args []string, o *IO500Options) (*clusterRun, error) {
	c, err := o.newClusterRun("io500", cmd, args)
	if err != nil {
		return nil, err
	}
	c.left = runDirLeft(o.Path)
	if !o.NoSpaceCheck && o.Sizes != io500.Standard() { // every agent's free space is the one file system all share
		opts := o.Options
		opts.World = o.Threads * len(o.Cluster.Hosts)
		c.job.Need = io500.NeedOf(opts).All
	}
	c.finish = func(res *report.Result, parts []cluster.HostResult) error {
		for i := range res.Phases {
			io500.SetValue(&res.Phases[i])
		}
		o.World = o.Threads * len(parts)
		io500.SetScores(res, o.Options)
		return nil
	}
	return c, nil
}

// io500OnAgent is host i's part of io500: ranks i*p.. of all hosts' n*p,
// in the run's directory that every host shares.
func io500OnAgent(ctx context.Context, gate cluster.Gate, o *IO500Options, job *cluster.Job) (*report.Result, error) {
	base, err := runBase(o.Path, job)
	if err != nil {
		return nil, err
	}
	o.RunDir = filepath.Join(base, cluster.HostDir(job.Index))
	o.DataDir = base
	o.Rank0, o.World, o.Seed = job.Index*o.Threads, job.Hosts*o.Threads, job.Seed
	o.IdleCPUs = job.IdleCPUs
	o.PhaseStart = func(name string, _ func() int64) { _ = gate(ctx, name) }
	o.PhaseEnd = func(name string) { _ = gate(ctx, cluster.EndOf(name)) }
	o.Finish = func() { _ = gate(ctx, cluster.FinishPhase) }
	return agentRun("io500", func(res *report.Result) error { return io500.RunAt(ctx, o.Target, o.Options, res) })
}
