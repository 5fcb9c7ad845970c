package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/fsbench/fsbench/internal/jobfile"
	"github.com/fsbench/fsbench/internal/origin"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// RunJob runs a workload (from a workload file or from the ad-hoc flags of
// bench) on o.Path: its phases in order, on files of the run's own
// directory or on the job's tree. Of o it uses Path, Threads (when the job
// does not set them), Direct, Fsync and Verify (added to the job's), Keep,
// DropCaches, SkipDropCaches, Tracer and Hooks. Like Run, it returns what
// was measured with any error, and removes what it created unless Keep is
// set; a tree in a directory the job names (tree.dir) is kept for reuse.
func RunJob(ctx context.Context, o Options, j *jobfile.Job, res *report.Result) error {
	if j.Threads > 0 {
		o.Threads = j.Threads
	}
	o.Direct = o.Direct || j.Direct
	o.Fsync = o.Fsync || j.Fsync
	o.Verify = o.Verify || j.Verify
	if err := validateJob(&o, j); err != nil {
		return runenv.BadInput(err)
	}
	if err := probeEngines(j); err != nil {
		return runenv.BadInput(err)
	}
	r := &jobRun{o: o, j: j, res: res, laid: map[string]int64{}}
	r.warn = func(format string, args ...any) {
		msg := fmt.Sprintf(format, args...)
		res.Warnings = append(res.Warnings, msg)
		if o.Hooks.Warn != nil {
			o.Hooks.Warn(msg)
		}
	}
	err := r.run(ctx)
	if ctx.Err() != nil {
		// Interrupted in a phase or in the clean-up.
		res.Interrupted = true
		err = ctx.Err()
	}
	return err
}

func validateJob(o *Options, j *jobfile.Job) error {
	switch {
	case o.Threads < 1:
		return fmt.Errorf("--threads must be at least 1 (got %d)", o.Threads)
	case o.Threads > maxThreads:
		return fmt.Errorf("--threads %d is more than %d", o.Threads, maxThreads)
	case o.Path == "":
		return errors.New("a PATH to benchmark is required")
	}
	if !runenv.ValidDropCaches(o.DropCaches) {
		return fmt.Errorf("--drop-caches must be auto, always or never (got %q)", o.DropCaches)
	}
	return j.Validate()
}

// jobRun is the state of one RunJob: where things are and what exists.
type jobRun struct {
	o    Options
	j    *jobfile.Job
	res  *report.Result
	warn func(string, ...any)

	dir      string         // the run's own directory
	own      *runenv.RunDir // and a handle to remove it by
	runner   *workload.Runner
	drop     *runenv.Dropper
	origin   *origin.Probe    // where read phases' bytes come from
	laid     map[string]int64 // job files that exist, by name: their size (-1: unknown)
	tree     *workload.TreeRun
	reusable bool   // the tree is in tree.dir, kept after the run
	unpin    func() // closes the kept tree's directory, opened beneath PATH
	treeName string // the kept tree's directory as the user names it
	formats  int    // automatic format phases so far
}

func (r *jobRun) run(ctx context.Context) (err error) {
	o, res := r.o, r.res
	abs, _, _, err := runenv.OpenTargetMount(o.Path, res)
	if err != nil {
		return err
	}
	if err := CheckSpace(o, r.j); err != nil {
		return err
	}
	r.origin = origin.New(abs)
	r.origin.Direct = o.Direct
	if r.own, err = runenv.MakeRunDir(o.env(), abs); err != nil {
		return err
	}
	r.dir = r.own.Path()
	defer r.cleanup()
	// Before the clean-up removes it: was the directory gone already?
	defer func() {
		if err != nil && ctx.Err() == nil {
			err = runenv.ExplainVanished(r.dir, err)
		}
	}()

	seed := o.Seed
	if seed == 0 {
		seed = pattern.RandomSeed()
	}
	if t := r.j.Tree; t != nil {
		if err := r.openTree(abs, seed); err != nil {
			return &runenv.Error{Phase: "prepare", Err: err}
		}
		seed = r.tree.Info.Seed
	}
	res.Parameters, res.Threads = r.params(), r.o.Threads

	var align sysio.Alignment
	if o.Direct {
		align, err = sysio.ProbeDirect(r.dir, res.Target.FSType)
		if err == nil {
			var names []string
			var sizes []int64
			for i, p := range r.j.Phases {
				names = append(names, "xfer_size of "+p.Name, "file size of "+p.Name)
				sizes = append(sizes, p.XferSize, r.j.FileSize(i))
			}
			err = align.CheckAligned(names, sizes)
		}
		if err != nil {
			return &runenv.Error{Phase: "prepare", Err: err}
		}
	}
	r.runner = workload.NewRunner(workload.Config{
		Dir: r.dir, Workers: o.Threads, Direct: o.Direct, Align: align,
		Fsync: o.Fsync, Verify: o.Verify, Seed: seed, Tracer: o.Tracer, Data: o.Data,
	}, r.maxBlock())
	if o.Hooks.Started != nil {
		o.Hooks.Started(r.runner, r.dir)
	}
	if o.Hooks.Finished != nil {
		defer o.Hooks.Finished(r.runner)
	}
	r.drop = runenv.NewDropper(o.env(), os.Geteuid() == 0, r.warn)
	defer func() { res.CacheDrop = r.drop.Method() }() // after any fallback, as in bench

	for i := range r.j.Phases {
		if err := r.phase(ctx, &r.j.Phases[i]); err != nil {
			return err
		}
	}
	return nil
}

// maxBlock is the largest transfer of the run: its phases', and the 1 MiB
// writes (or whole files, if smaller) of layouts and formats.
func (r *jobRun) maxBlock() int64 {
	var file int64
	for i := range r.j.Phases {
		file = max(file, r.j.FileSize(i))
	}
	return max(r.j.MaxXfer(), min(units.MiB, file), 4096)
}

// openTree finds or makes the job's tree: in tree.dir under PATH (kept and
// reused) or in the run directory. A kept tree is opened once, beneath
// PATH (as the agent pinned it, or as given here), and every phase works
// through that descriptor: a directory swapped for a link between two
// phases leads none of them elsewhere.
func (r *jobRun) openTree(abs string, seed uint64) error {
	t := r.j.Tree
	root := filepath.Join(r.dir, "tree")
	name, made := root, false
	if t.Dir != "" {
		name, r.reusable = filepath.Join(abs, filepath.Clean(t.Dir)), true
		pinned, mk, unpin, err := sysio.PinDir(cmp.Or(r.o.PinnedPath, abs), filepath.Clean(t.Dir))
		if err != nil {
			return fmt.Errorf("tree %s: %w", name, sysio.PathCause(err))
		}
		root, made, r.unpin, r.treeName = pinned, mk, unpin, name
	}
	open := workload.OpenTreeRun
	if made {
		open = workload.NewTreeRun
	}
	tree, err := open(root, t.Shape, seed, t.Format == "yes")
	if err != nil {
		return err
	}
	if tree, err = r.sameData(tree, open, name); err != nil {
		return err
	}
	if t.Format == "no" && !tree.Complete() {
		return fmt.Errorf("tree %s (format: no) is not a complete tree of this shape; run with format: restart first", name)
	}
	if r.reusable && tree.Complete() {
		r.warn("reusing the tree in %s: %d files of %s (format: %s)", name, t.NumFiles(), units.FormatBytes(t.FileSize), t.Format)
	}
	r.tree = tree
	return nil
}

// sameData rebuilds a complete tree whose files were written with other
// data ratios than the run's (or, with format: no, refuses it): its
// reads would not verify, and would not read the data asked for.
func (r *jobRun) sameData(tree *workload.TreeRun, open func(string, workload.Shape, uint64, bool) (*workload.TreeRun, error), name string) (*workload.TreeRun, error) {
	t, want := r.j.Tree, r.o.Data
	if tree.Complete() && tree.Info.Data != want {
		if t.Format == "no" {
			return nil, fmt.Errorf("tree %s (format: no) was written with other data ratios (compress %g, dedupe %g); run with format: restart to rebuild it",
				name, max(tree.Info.Data.Compress, 1), max(tree.Info.Data.Dedupe, 1))
		}
		r.warn("the tree in %s was written with other data ratios: rebuilding it", name)
		var err error
		if tree, err = open(tree.Root, t.Shape, tree.Info.Seed, true); err != nil {
			return nil, err
		}
	}
	tree.Info.Data = want // written with the tree's next state
	return tree, nil
}

func (r *jobRun) cleanup() {
	if r.unpin != nil {
		defer r.unpin()
	}
	r.removeShared()
	if r.tree != nil && !r.reusable && !r.o.Keep && !runenv.Vanished(r.dir) {
		done := r.o.Hooks.Waiting(fmt.Sprintf("cleaning up %s in %s", units.CountGrouped(r.j.Tree.Shape.NumFiles(), "file"), r.tree.Root))
		err := r.tree.Remove()
		done()
		if err != nil {
			r.warn("clean up %s: %v", r.tree.Root, err)
		}
	}
	r.own.Remove(r.warn) // and what is left of the tree
}

// jobFileNames are the files of a phase without a tree: Files per thread,
// thread by thread, so worker w owns its own as with fio's numjobs.
func (r *jobRun) jobFileNames(p *jobfile.PhaseSpec) []string {
	out := make([]string, 0, r.o.Threads*p.Files)
	for w := 0; w < r.o.Threads; w++ {
		for i := 0; i < p.Files; i++ {
			out = append(out, "job."+strconv.Itoa(w)+"."+strconv.Itoa(i))
		}
	}
	return out
}

// phase runs one phase of the job, after making what it needs exist.
func (r *jobRun) phase(ctx context.Context, p *jobfile.PhaseSpec) error {
	kind := p.Kind()
	var tg *workload.Targets
	fileSize := p.FileSize
	var after func(complete bool) error
	var shared *workload.SharedFile
	if p.Shared {
		tg, shared, fileSize = r.sharedTarget(p)
	} else if r.tree != nil {
		fileSize = r.j.Tree.FileSize
		var err error
		if tg, after, err = r.treeTargets(ctx, p); err != nil {
			return err
		}
	} else {
		names := r.jobFileNames(p)
		if err := r.layout(ctx, p, names); err != nil {
			return err
		}
		tg = r.runner.NewTargets(r.dir, names)
		after = func(complete bool) error {
			for _, n := range names {
				switch {
				case kind == workload.Unlink:
					delete(r.laid, n)
				case kind == workload.Create:
					r.laid[n] = p.FileSize
				case kind == workload.Write || kind == workload.Mixed:
					if r.laid[n] != p.FileSize && !(complete && p.OnePass()) {
						r.laid[n] = -1 // partly written
					} else {
						r.laid[n] = p.FileSize
					}
				}
			}
			return nil
		}
	}
	if tg == nil {
		return nil // nothing to do (a format of a reused tree)
	}
	wp := workload.FilePhase{
		Name: p.Name, Title: p.Name, Kind: kind, Targets: tg,
		FileSize: fileSize, BlockSize: p.XferSize, PerFile: kind == workload.Create,
		Access: p.Access, Select: p.Select, Skew: p.Distribution, ReadPct: p.ReadPct, Ops: p.Ops,
		Duration: p.Duration, Once: p.Once, Warmup: p.Warmup, Rate: p.Rate, Interval: p.Interval, Shared: shared,
		IOEngine: p.IOEngine, IODepth: p.IODepth,
	}
	if fileSize > 0 {
		wp.BlockSize = min(p.XferSize, fileSize)
	}
	if wp.Interval == 0 {
		wp.Interval = r.o.Interval
	}
	if !kind.IsData() {
		wp.BlockSize = min(wp.BlockSize, r.runner.MaxBlock())
	}
	res, reading, err := r.runPhase(ctx, &wp, true)
	if res != nil {
		ph := jobPhase(res, &wp, p, fileSize)
		if w := reading.End(ctx, &ph, r.readBytes(&wp)); w != "" {
			r.warn("%s", w)
		}
		if s := ph.Shortfall(); s != "" {
			r.warn("%s: %s", p.Name, s)
		}
		r.res.Phases = append(r.res.Phases, ph)
	}
	if after != nil && (err == nil || res != nil) {
		if aerr := after(err == nil && !res.Incomplete); aerr != nil && err == nil {
			err = aerr
		}
	}
	return err
}

// runPhase runs a file phase with the hooks; measured phases drop the
// caches first when they read, and a measured read phase's reading of the
// counters of the storage is begun (origin), for its caller to end.
func (r *jobRun) runPhase(ctx context.Context, wp *workload.FilePhase, measured bool) (*workload.Result, *origin.Reading, error) {
	var reading *origin.Reading
	switch wp.Kind {
	case workload.Read, workload.Mixed, workload.Stat, workload.Open, workload.Readdir:
		if measured {
			var files []string
			if wp.Kind.IsData() {
				files = wp.Targets.Paths
			}
			r.drop.Drop(wp.Name, files)
		}
	}
	if measured && (wp.Kind == workload.Read || wp.Kind == workload.Mixed) {
		reading = r.origin.Begin(ctx, wp.Targets.Paths, r.drop.Method() == "drop_caches")
	}
	if h := r.o.Hooks.Interval; h != nil && wp.Interval > 0 {
		wp.OnInterval = func(s workload.Sample) { h(wp, s.Report()) }
	}
	if h := r.o.Hooks.PhaseStart; h != nil {
		total := progressTotal(wp, r.o.Threads)
		wp.Ready = func() { h(r.runner, wp, total) } // at the start, as bench's phases
	}
	res, err := r.runner.Run(ctx, *wp)
	if r.o.Hooks.PhaseEnd != nil {
		r.o.Hooks.PhaseEnd(r.runner, wp)
	}
	if err != nil && ctx.Err() == nil {
		if r.treeName != "" {
			err = sysio.Renamed(err, r.tree.Root, r.treeName)
		}
		err = &runenv.Error{Phase: wp.Name, Err: err}
	}
	return res, reading, err
}

// readBytes is what the phase just run read, its warm-up included as in
// the counters read around it: the reads of a mixed phase, all bytes of a
// read phase.
func (r *jobRun) readBytes(wp *workload.FilePhase) int64 {
	if wp.Kind == workload.Mixed {
		return r.runner.Live.ReadBytes.Load()
	}
	return r.runner.Live.Bytes.Load()
}

// progressTotal is the operations a phase will do, or -1 when it runs for
// a time.
func progressTotal(p *workload.FilePhase, threads int) int64 {
	if p.Duration > 0 {
		return -1
	}
	if l := p.Shared; l != nil {
		return int64(threads) * int64(l.Segments) * (l.Block / p.BlockSize)
	}
	if p.Ops > 0 {
		return p.Ops
	}
	n := int64(p.Targets.Len())
	switch {
	case p.Kind.IsData():
		return n * ceilDiv(p.FileSize, p.BlockSize)
	case p.Kind == workload.Rename:
		return 2 * n
	}
	return n
}

// layout writes the job files a phase needs that do not exist at its file
// size yet (as fio lays out files before reading them). It is not part of
// the result.
func (r *jobRun) layout(ctx context.Context, p *jobfile.PhaseSpec, names []string) error {
	kind := p.Kind()
	var need []string
	switch kind {
	case workload.Create:
		// Create makes new files: earlier phases' files go first.
		var old []string
		for _, n := range names {
			if _, ok := r.laid[n]; ok {
				old = append(old, n)
			}
		}
		if len(old) > 0 {
			r.warn("%s: removing %d files of earlier phases first", p.Name, len(old))
			if err := removeIn(r.dir, old); err != nil {
				return &runenv.Error{Phase: p.Name, Err: err}
			}
			for _, n := range old {
				delete(r.laid, n)
			}
		}
		return nil
	case workload.Write:
		return nil // writes make their files
	case workload.Read, workload.Mixed:
		for _, n := range names {
			if r.laid[n] != p.FileSize {
				need = append(need, n)
			}
		}
	default: // metadata operations on existing files of any size
		for _, n := range names {
			if _, ok := r.laid[n]; !ok {
				need = append(need, n)
			}
		}
	}
	if len(need) == 0 {
		return nil
	}
	var stale []string
	for _, n := range need {
		if _, ok := r.laid[n]; ok {
			stale = append(stale, n)
		}
	}
	if err := removeIn(r.dir, stale); err != nil {
		return &runenv.Error{Phase: p.Name, Err: err}
	}
	size := p.FileSize
	wp := workload.FilePhase{
		Name: p.Name + ".layout", Title: "Lay out files", Kind: workload.Create, PerFile: true,
		Targets: r.runner.NewTargets(r.dir, need), FileSize: size, BlockSize: min(max(p.XferSize, units.MiB), size, r.runner.MaxBlock()),
	}
	if size == 0 {
		wp.BlockSize = 4096
	}
	if _, _, err := r.runPhase(ctx, &wp, false); err != nil {
		return err
	}
	for _, n := range need {
		r.laid[n] = size
	}
	return nil
}

// treeTargets readies the tree for a phase and returns the phase's
// targets, and what to record in the tree's marker after it.
func (r *jobRun) treeTargets(ctx context.Context, p *jobfile.PhaseSpec) (*workload.Targets, func(bool) error, error) {
	if err := r.tree.Ready(); err != nil {
		return nil, nil, phaseErr(p, err)
	}
	kind, format := p.Kind(), p.Op == jobfile.OpFormat
	if r.tree.NeedsFormat(kind) {
		if err := r.autoFormat(ctx); err != nil {
			return nil, nil, err
		}
	}
	if format && r.tree.Complete() {
		r.warn("%s: the tree is complete already (format=restart): skipped", p.Name)
		return nil, nil, nil
	}
	names, done, err := r.tree.ForPhase(kind, format)
	if err != nil {
		return nil, nil, phaseErr(p, err)
	}
	return r.runner.NewTargets(r.tree.Root, names), done, nil
}

func phaseErr(p *jobfile.PhaseSpec, err error) error {
	return &runenv.Error{Phase: p.Name, Err: fmt.Errorf("%v", err)}
}

// autoFormat creates the tree's files before a phase that needs them: a
// measured phase of its own, named format (vdbench reports its format
// too).
func (r *jobRun) autoFormat(ctx context.Context) error {
	if err := r.tree.Clean(); err != nil {
		return &runenv.Error{Phase: "format", Err: err}
	}
	r.formats++
	name := "format"
	if r.formats > 1 {
		name += "-" + strconv.Itoa(r.formats)
	}
	for _, p := range r.j.Phases {
		if p.Name == name {
			name = "auto-" + name
		}
	}
	p := jobfile.PhaseSpec{Name: name, Op: jobfile.OpFormat, XferSize: min(units.MiB, r.runner.MaxBlock()), ReadPct: -1}
	return r.phase(ctx, &p)
}

// removeIn removes the files names in dir, each beneath dir (os.Root): a
// directory of the run swapped for a symbolic link leads no removal out
// of it. A name already gone is not an error.
func removeIn(dir string, names []string) error {
	if len(names) == 0 {
		return nil
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, sysio.PathCause(err))
	}
	defer root.Close()
	for _, n := range names {
		if err := root.Remove(n); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("unlink %s: %w", filepath.Join(dir, n), sysio.PathCause(err))
		}
	}
	return nil
}
