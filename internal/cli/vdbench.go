package cli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/fsbench/fsbench/internal/bench"
	"github.com/fsbench/fsbench/internal/cluster"
	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/vdbjob"
	"github.com/fsbench/fsbench/internal/workload"
)

// VdbenchOptions are the flags of `fsbench vdbench`: the parameter files
// and what changes them; the run is bench's, with a workload.
type VdbenchOptions struct {
	BenchOptions
	Files  []string
	Scale  float64
	Anchor string
	// Run is what the files ask, filled by prepare.
	Run *vdbjob.Run

	printJob bool
}

// vdbenchQuickScale is what --quick scales a parameter file by.
const vdbenchQuickScale = "0.01"

// vdbenchJobFile is the name of the workload file sent to the agents.
const vdbenchJobFile = "vdbench-job.yaml"

func newVdbenchCmd(app *App) *cobra.Command {
	return newVdbenchCmdWith(app, nil)
}

// newVdbenchCmdWith builds the command; runF replaces the run in tests of
// the reading of parameter files.
func newVdbenchCmdWith(app *App, runF func(context.Context, *BenchOptions) error) *cobra.Command {
	v := &VdbenchOptions{BenchOptions: BenchOptions{Options: bench.Defaults()}}
	o := &v.BenchOptions
	cmd := &cobra.Command{
		Use:   "vdbench [-f] PARMFILE [PARMFILE...] [NAME=VALUE...]",
		Short: "Run a vdbench parameter file as it is: its fsd tree, fwd workloads and rd runs, on this host or the hd= hosts",
		Long:  vdbenchLong,
		Example: `  fsbench vdbench examples/vdbench/local-big
  fsbench vdbench examples/vdbench/local-small --scale 0.01 -o json > result.json
  fsbench vdbench --job examples/vdbench/jfs-test --token-file token
  fsbench vdbench my.parm anchor=/mnt/jfs/vdb --print-job`,
		Args: cobra.ArbitraryArgs,
	}
	run := hostsCommand[*BenchOptions]{opts: o, flags: &o.RunFlags, runF: runF, cluster: v.cluster, run: v.run,
		resolve: func(cmd *cobra.Command, args []string) error { return v.prepare(cmd, app, args) }}.runE(app)
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if v.printJob {
			return v.print(cmd, app, args)
		}
		return run(cmd, args)
	}
	f := cmd.Flags()
	f.StringArrayVarP(&v.Files, "job", "f", nil, "the vdbench parameter `FILE` (hd=, fsd=, fwd=, rd= lines); repeatable, and more may follow as arguments: they are read as one, in order")
	f.Float64Var(&v.Scale, "scale", 1, "make the run smaller by this `FACTOR` (0 to 1): each fsd's files= and size= and each rd's elapsed=, warmup= and maxdata=; "+
		"depth, width, threads and transfer sizes stay, and a size stays a multiple of its largest transfer")
	f.StringVar(&v.Anchor, "anchor", "", "make the tree in `DIR` instead of the fsd's anchor= (a directory fsbench makes, or made before)")
	f.BoolVar(&v.printJob, "print-job", false, "print the workload the parameter files become (a --job file of bench) and exit")
	f.StringVar(&o.DropCaches, "drop-caches", runenv.DropAuto, "drop kernel caches before read phases: auto (all caches as root, else our files only), always, never; SKIP_DROP_CACHES=true disables")
	markFiles(f, fileIn, "job")
	addRunFlags(cmd, &o.RunFlags, []Preset{{"scale", vdbenchQuickScale}})
	return cmd
}

const vdbenchLong = `Run a vdbench parameter file of a file system benchmark, unchanged: its
fsd= tree, its fwd= workloads and its rd= runs, one after another, as fsbench
phases, through the engine of "fsbench bench --job" and with its result,
table and checks.

The file is read with vdbench's syntax, defaults and units (sizes 1024-based,
times in seconds): comments (*, / or # first), defaults (fsd=default,...),
continuation lines (a line ending or starting with a comma), lists (a,b),
wildcards (fwd=fwd*) and $NAME, given as NAME=VALUE after the files. A
parameter fsbench cannot honour is refused by name, with its line, before
anything runs: see docs/vdbench.md for the table.

The tree is made in the fsd's anchor (kept, and reused by format=restart);
fsbench makes that directory and refuses one it did not make. With hd=
lines naming other hosts, the run is the many-host run of --hosts: start
"fsbench agent" on each (system=HOST, port 7781, or system=HOST:PORT); the
hosts split the tree (shared=yes), each its part in a directory of its own.

--scale makes a long run short, --print-job shows the workload the file
becomes.`

// prepare reads the parameter files into the workload, and the hosts of
// their hd= lines, and checks the command line.
func (v *VdbenchOptions) prepare(cmd *cobra.Command, app *App, args []string) error {
	if err := v.Cluster.resolve(cmd); err != nil { // --hosts, --hosts-file, a launcher
		return err
	}
	given := len(v.Cluster.Hosts)
	if env := v.Cluster.Launch.env; env != nil {
		given = env.Size
	}
	run, err := v.read(cmd, args, given)
	if err != nil {
		return err
	}
	v.Run, v.Path = run, run.Path
	if len(run.Hosts) > 0 {
		if v.Cluster.active() {
			return Usagef("the hd= lines of %s name the hosts; give them there or with --hosts, not both", run.Job.File)
		}
		v.Cluster.Hosts = run.Hosts
		if err := v.Cluster.resolve(cmd); err != nil {
			return err
		}
	}
	if !v.Cluster.active() {
		if err := checkAnchor(run.Anchor); err != nil {
			return err
		}
		if err := checkSpace(run); err != nil {
			return err
		}
	}
	return v.useJob(cmd, app, run.Job)
}

// read reads the files of -f and the arguments, for a run on hosts hosts
// unless their hd= lines say; NAME=VALUE arguments are the values of
// $NAME in them.
func (v *VdbenchOptions) read(cmd *cobra.Command, args []string, hosts int) (*vdbjob.Run, error) {
	if v.CI.Quick && !cmd.Flags().Changed("scale") {
		v.Scale, _ = strconv.ParseFloat(vdbenchQuickScale, 64)
	}
	if !(v.Scale > 0 && v.Scale <= 1) {
		return nil, Usagef("--scale %g: want a factor above 0 and at most 1", v.Scale)
	}
	files := append([]string{}, v.Files...)
	vars := map[string]string{}
	for _, a := range args {
		if name, value, ok := strings.Cut(a, "="); ok && name != "" && !strings.ContainsAny(name, "/.") {
			vars[strings.ToLower(name)] = value
			continue
		}
		files = append(files, a)
	}
	if len(files) == 0 {
		return nil, Usagef("give a vdbench parameter file: fsbench vdbench -f FILE")
	}
	var srcs []vdbjob.Source
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			return nil, Usagef("-f %s: %v", name, sysio.PathCause(err))
		}
		srcs = append(srcs, vdbjob.Source{Name: name, Data: b})
	}
	anchor := v.Anchor
	if anchor != "" {
		abs, err := filepath.Abs(anchor)
		if err != nil {
			return nil, Usagef("--anchor %s: %v", anchor, err)
		}
		anchor = abs
	}
	run, err := vdbjob.Read(srcs, vdbjob.Options{Vars: vars, Scale: v.Scale, Anchor: anchor, Hosts: hosts})
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	return run, nil
}

// checkAnchor refuses an anchor that exists and is not a tree fsbench
// made, before anything is written: fsbench neither uses nor removes it.
func checkAnchor(anchor string) error {
	if _, err := os.Stat(anchor); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if _, err := workload.ReadTreeInfo(anchor); err != nil {
		if errors.Is(err, workload.ErrNotOurs) {
			return Usagef("anchor %s exists and is not a tree fsbench made: give anchor= (or --anchor) a new directory below the mount, such as %s",
				anchor, filepath.Join(anchor, "vdbench"))
		}
		return Usagef("anchor %s: %v", anchor, sysio.PathCause(err))
	}
	return nil
}

// treeBytes is what the tree of j holds when it is complete.
func treeBytes(j *jobfile.Job) int64 {
	return sysio.MulCapped(int64(j.Tree.NumFiles()), j.Tree.FileSize)
}

// checkSpace refuses, before anything is written, a tree that does not fit
// in the free space where it is to be made (a parameter file's tree is
// easily hundreds of GiB), unless the anchor holds an fsbench tree already.
func checkSpace(run *vdbjob.Run) error {
	if _, err := workload.ReadTreeInfo(run.Anchor); err == nil {
		return nil
	}
	dir := run.Anchor
	for {
		if _, err := os.Stat(dir); err == nil || filepath.Dir(dir) == dir {
			break
		}
		dir = filepath.Dir(dir)
	}
	need := treeBytes(run.Job)
	free, short := sysio.Short(dir, need)
	if !short {
		return nil
	}
	t := run.Job.Tree
	return Usagef("the tree of %s needs %s (%s of %s) and %s has %s free: make it smaller with --scale %g, or with files= and size=",
		run.Job.File, units.FormatBytes(need), units.CountGrouped(t.NumFiles(), "file"), units.FormatBytes(t.FileSize),
		dir, units.FormatBytes(free), fitScale(free, need))
}

// fitScale is a --scale, of one significant digit, under which a tree of
// need bytes takes at most 90% of free.
func fitScale(free, need int64) float64 {
	s := 0.9 * float64(max(free, 1)) / float64(need)
	exp := math.Floor(math.Log10(s))
	digit := math.Floor(s/math.Pow(10, exp) + 1e-9)
	v, _ := strconv.ParseFloat(fmt.Sprintf("%de%d", int(digit), int(exp)), 64)
	return v
}

// run runs the workload on this host, as bench --job does.
func (v *VdbenchOptions) run(ctx context.Context, app *App, o *BenchOptions) error {
	return runBench(ctx, app, o)
}

// cluster is the run on the agents: each runs the workload file the
// parameter files became with bench, in its own directory of the run.
func (v *VdbenchOptions) cluster(cmd *cobra.Command, _ []string, o *BenchOptions) (*clusterRun, error) {
	b, err := vdbjob.YAML(o.Job.Job)
	if err != nil {
		return nil, err
	}
	args := []string{"--job=" + vdbenchJobFile}
	if cmd.Flags().Changed("drop-caches") {
		args = append(args, "--drop-caches="+o.DropCaches)
	}
	command := coordinatedAs[cmd.Name()]
	c := &clusterRun{command: command, hosts: &o.Cluster, output: &o.Output, ci: &o.CI, repeat: o.Repeat,
		job: cluster.Job{Command: command, Args: append(args, o.Path), Files: map[string][]byte{vdbenchJobFile: b}}}
	c.left = runDirLeft(o.Path)
	c.job.Need = treeBytes(o.Job.Job) // each host's part: agents check their free space
	return c, nil
}

// print prints the workload the parameter files become, as a workload
// file of bench, and where and on which hosts it would run.
func (v *VdbenchOptions) print(cmd *cobra.Command, app *App, args []string) error {
	run, err := v.read(cmd, args, len(v.Cluster.Hosts))
	if err != nil {
		return err
	}
	b, err := vdbjob.YAML(run.Job)
	if err != nil {
		return err
	}
	where := "# fsbench bench " + run.Path + " --job FILE"
	if len(run.Hosts) > 0 {
		where += " --hosts " + strings.Join(run.Hosts, ",")
	}
	_, err = fmt.Fprintf(app.IO.Out, "%s\n%s", where, b)
	return err
}
