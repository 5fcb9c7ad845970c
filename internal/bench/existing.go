package bench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"

	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
)

// The phases of a read of an existing tree (RunExisting).
const (
	ExistingSmall = "read-existing-small"
	ExistingBig   = "read-existing-big"
)

// Sample chooses the files of an existing tree to read: Count files, or a
// Fraction of them, picked at random; the zero value is every file.
type Sample struct {
	Count    int
	Fraction float64
}

// ParseSample parses --sample: a count of files ("500"), a fraction
// ("0.1") or a percentage ("10%").
func ParseSample(s string) (Sample, error) {
	bad := fmt.Errorf("--sample %q: want a count of files (500), a fraction (0.1) or a percentage (10%%)", s)
	if n, err := strconv.Atoi(s); err == nil {
		if n < 1 {
			return Sample{}, bad
		}
		return Sample{Count: n}, nil
	}
	div := 1.0
	if len(s) > 1 && s[len(s)-1] == '%' {
		s, div = s[:len(s)-1], 100
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !(f > 0) || f/div > 1 {
		return Sample{}, bad
	}
	return Sample{Fraction: f / div}, nil
}

// String is the sample as --sample takes it; "" for every file.
func (s Sample) String() string {
	switch {
	case s.Count > 0:
		return strconv.Itoa(s.Count)
	case s.Fraction > 0:
		return strconv.FormatFloat(s.Fraction*100, 'g', -1, 64) + "%"
	}
	return ""
}

// pick returns the files of the sample, in path order.
func (s Sample) pick(files []workload.TreeFile, seed uint64) []workload.TreeFile {
	n := len(files)
	switch {
	case s.Count > 0:
		n = min(s.Count, n)
	case s.Fraction > 0:
		n = max(1, int(s.Fraction*float64(n)+0.5))
	}
	if n == len(files) {
		return files
	}
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	r.Shuffle(len(files), func(i, j int) { files[i], files[j] = files[j], files[i] })
	files = files[:n]
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return files
}

// validateExisting checks the options of a read of an existing tree.
func (o *Options) validateExisting() error {
	switch {
	case o.Verify:
		return errors.New("--verify checks data fsbench wrote; the files of --read-existing are not its own")
	case o.Fsync || o.Keep:
		return errors.New("--fsync and --keep apply to files fsbench writes; --read-existing writes none")
	case o.Threads < 1 || o.Threads > maxThreads:
		return fmt.Errorf("--threads must be in 1..%d (got %d)", maxThreads, o.Threads)
	case o.BlockSize <= 0 || o.BlockSize > units.GiB:
		return fmt.Errorf("--block-size must be in 1 B..1 GiB")
	case o.Path == "":
		return errors.New("a PATH to read is required")
	}
	if runenv.ValidDropCaches(o.DropCaches) {
		return nil
	}
	return fmt.Errorf("--drop-caches must be auto, always or never (got %q)", o.DropCaches)
}

// RunExisting reads the files that already exist below o.Path, or a sample
// of them (o.Sample), with o.Threads threads: files of at most a block
// timed from open to close (read-existing-small), larger files per block
// (read-existing-big). It creates, changes and removes nothing: no run
// directory, and reads open with O_NOATIME where the kernel allows it.
func RunExisting(ctx context.Context, o Options, res *report.Result) error {
	if err := o.validateExisting(); err != nil {
		return runenv.BadInput(err)
	}
	abs, _, _, err := runenv.OpenDir(o.Path, res)
	if err != nil {
		return err
	}
	l, err := workload.ListTree(ctx, abs)
	if err != nil {
		if ctx.Err() != nil {
			res.Interrupted = true
			return ctx.Err()
		}
		return &runenv.Error{Phase: "prepare", Err: err}
	}
	seed := o.Seed
	if seed == 0 {
		seed = pattern.RandomSeed()
	}
	files := o.Sample.pick(l.Files, seed)
	if len(files) == 0 {
		return &runenv.Error{Phase: "prepare", Err: runenv.BadInput(fmt.Errorf("no regular files to read below %s", abs))}
	}
	r := &benchRun{o: &o, res: res}
	r.noteSkipped(l)
	res.Parameters, res.Threads = o.existingParams(len(files), len(l.Files)), o.Threads
	var align sysio.Alignment
	if o.Direct {
		if align, err = sysio.ProbeDirectRead(abs, files[0].Name, res.Target.FSType); err == nil {
			err = align.CheckAligned([]string{"--block-size"}, []int64{o.BlockSize})
		}
		if err != nil {
			return &runenv.Error{Phase: "prepare", Err: err}
		}
	}
	r.runner = workload.NewRunner(workload.Config{
		Dir: abs, Workers: o.Threads, Direct: o.Direct, Align: align, NoAtime: true, Tracer: o.Tracer,
	}, o.BlockSize)
	if o.Hooks.Started != nil {
		o.Hooks.Started(r.runner, abs)
	}
	dropper := runenv.NewDropper(o.env(), os.Geteuid() == 0, r.warn)
	runErr := r.runPhases(ctx, dropper, existingPhases(r.runner, abs, files, o.BlockSize), abs)
	res.CacheDrop = dropper.Method()
	r.noteAtime()
	if o.Hooks.Finished != nil {
		o.Hooks.Finished(r.runner)
	}
	return runErr
}

// existingPhases splits files into those of at most a block, read whole as
// one operation each, and larger ones, read per block.
func existingPhases(e *workload.Runner, root string, files []workload.TreeFile, bs int64) []workload.FilePhase {
	var small, big []workload.TreeFile
	for _, f := range files {
		if f.Size <= bs {
			small = append(small, f)
		} else {
			big = append(big, f)
		}
	}
	var ps []workload.FilePhase
	if len(small) > 0 {
		t, largest := existingTargets(e, root, small)
		ps = append(ps, workload.FilePhase{Name: ExistingSmall, Title: "Read existing small files", Kind: workload.Read,
			Targets: t, FileSize: max(largest, 1), BlockSize: bs, PerFile: true})
	}
	if len(big) > 0 {
		t, largest := existingTargets(e, root, big)
		ps = append(ps, workload.FilePhase{Name: ExistingBig, Title: "Read existing big files", Kind: workload.Read,
			Targets: t, FileSize: largest, BlockSize: bs})
	}
	return ps
}

// existingTargets are files as targets of their own sizes, and the
// largest size.
func existingTargets(e *workload.Runner, root string, files []workload.TreeFile) (*workload.Targets, int64) {
	names := make([]string, len(files))
	sizes := make([]int64, len(files))
	var largest int64
	for i, f := range files {
		names[i], sizes[i] = f.Name, f.Size
		largest = max(largest, f.Size)
	}
	t := e.NewTargets(root, names)
	t.Sizes = sizes
	return t, largest
}

// noteSkipped warns of the entries of the tree that are not read.
func (r *benchRun) noteSkipped(l *workload.Listing) {
	if msg := l.Skipped(); msg != "" {
		r.warn("%s", msg)
	}
}

// noteAtime records in the parameters how files were opened: with
// O_NOATIME, or plainly where the kernel refused it, which lets a read
// update access times (depending on the mount's atime options).
func (r *benchRun) noteAtime() {
	how := "noatime"
	if n := r.runner.PlainOpens.Load(); n > 0 {
		how = "plain"
		r.warn("O_NOATIME refused (EPERM: not the files' owner, no CAP_FOWNER) on %d opens: those files were opened plainly, and their access times may change as the mount's atime options allow", n)
	}
	r.res.Parameters = append(r.res.Parameters, report.Param{Key: "open", Label: "Open", Value: how, Display: how})
}

func (o *Options) existingParams(files, listed int) report.Params {
	ps := report.Params{
		{Key: "read_existing", Label: "ReadExisting", Value: true, Display: "on"},
		{Key: "files", Label: "Files", Value: files, Display: strconv.Itoa(files)},
		{Key: "files_listed", Label: "Listed", Value: listed, Display: strconv.Itoa(listed)},
		{Key: "block_size", Label: "BlockSize", Value: o.BlockSize, Display: units.FormatBytes(o.BlockSize)},
		{Key: "threads", Label: "NumThreads", Value: o.Threads, Display: strconv.Itoa(o.Threads)},
		report.Switch("direct", "Direct", o.Direct),
	}
	if s := o.Sample.String(); s != "" {
		ps = append(ps, report.Param{Key: "sample", Label: "Sample", Value: s, Display: s})
	}
	return ps
}
