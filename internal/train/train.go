package train

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/origin"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// run is the state of one Run.
type run struct {
	o   *Options
	res *report.Result
	ds  *Dataset
	own *runenv.RunDir // the run's directory on one host; nil when reusing a dataset
	gen bool           // the run makes the dataset
	// complete: the dataset was generated to its end and marked so; only
	// then does Keep keep it.
	complete bool
	align    sysio.Alignment
	// probe measures where the training reads' bytes come from.
	probe *origin.Probe
	// base is the object store (Options.Storage), store the view of it
	// under the dataset's prefix; prefix is the run's own, when it made
	// one. nil on a file system.
	base, store object.Storage
	prefix      string
	// trained counts the Trainer's runs.
	trained int
}

// Run generates the dataset (or opens o.Dataset) under o.Path and trains
// on it. It returns what was measured with any error; on cancellation the
// result is marked interrupted and the error wraps ctx.Err(). What it
// creates is below one new directory, removed at the end unless Keep.
func Run(ctx context.Context, o Options, res *report.Result) error {
	if err := o.Validate(); err != nil {
		return err
	}
	r := &run{o: &o, res: res}
	err := r.run(ctx)
	if ctx.Err() != nil {
		res.Interrupted = true
		err = ctx.Err()
	}
	return err
}

func (r *run) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.res.Warnings = append(r.res.Warnings, msg)
	if r.o.Hooks.Warn != nil {
		r.o.Hooks.Warn(msg)
	}
}

func (r *run) run(ctx context.Context) error {
	if err := r.open(ctx); err != nil {
		return err
	}
	defer r.cleanup()
	r.res.Parameters, r.res.Threads = r.params(), r.o.Accelerators
	r.checkMemory()
	if r.gen {
		p, err := r.generate(ctx)
		r.res.Phases = append(r.res.Phases, p)
		if err != nil {
			return phaseError("generate", err)
		}
		if err := r.finishDataset(ctx); err != nil {
			return err
		}
	} else {
		r.dropCaches()
	}
	if r.o.FindMax {
		return r.findMax(ctx)
	}
	if r.o.Capacity != nil {
		return r.o.Capacity(ctx, r.paced)
	}
	p, t, err := r.train(ctx, r.o.Accelerators)
	r.res.Phases = append(r.res.Phases, p)
	r.res.Training = t
	return err
}

// open opens the dataset, on a file system or in an object store.
func (r *run) open(ctx context.Context) error {
	if r.o.Storage != "" {
		err := r.openObjects(ctx)
		if err != nil && r.base != nil {
			r.base.Close()
		}
		return err
	}
	abs, err := openTarget(r.o.Path, r.res)
	if err != nil {
		return err
	}
	if err := r.openDataset(abs); err != nil {
		return err
	}
	r.probe = origin.New(r.ds.Dir())
	r.probe.Direct = r.o.Direct
	return nil
}

func phaseError(name string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	return fmt.Errorf("%s: %w", name, err)
}

// openDataset opens the dataset to reuse, or makes the directory of the
// one to generate. Whether the accelerators can share it is checked
// before anything is created.
func (r *run) openDataset(abs string) error {
	o := r.o
	if o.Dataset != "" {
		ds, err := OpenDataset(o.Dataset)
		if err != nil {
			return err
		}
		r.ds = ds
		if ds.Existing() && o.Direct {
			return badf("--direct needs samples at aligned offsets and sizes; the files of --dataset %s are read through the page cache", o.Dataset)
		}
		_, err = NewPlan(ds.Samples(), o.ranks(), o.BatchSize)
		return err
	}
	if _, err := NewPlan(o.Files*o.SamplesPerFile, o.ranks(), o.BatchSize); err != nil {
		return err
	}
	dir, err := r.makeDir(abs)
	if err != nil {
		return err
	}
	if o.Direct {
		if r.align, err = sysio.ProbeDirect(dir, r.res.Target.FSType); err != nil {
			r.removeDir(dir)
			return fmt.Errorf("prepare: %w", err)
		}
	}
	r.ds = NewDataset(dir, o.Files, o.SamplesPerFile, o.SampleSize, o.SampleStdev, o.Seed, int64(r.align.Offset))
	r.ds.setData(o.Data)
	if err := r.checkSpace(abs); err != nil {
		r.removeDir(dir)
		return err
	}
	r.gen = true
	return nil
}

// checkSpace refuses a dataset whose files (this host's share) do not fit
// in the free space of the file system at abs, before any is written:
// a generation that fills the file system fails late and leaves a full
// disk to others.
func (r *run) checkSpace(abs string) error {
	var need int64
	for _, f := range r.o.ownFiles(r.ds.Files) {
		need += r.ds.FileSize(f)
	}
	free, short := sysio.Short(abs, need)
	if !short {
		return nil
	}
	return badf("the dataset needs %s and %s has %s free; give fewer --dataset-files or a smaller --sample-size, or train on a dataset kept before (--dataset)",
		units.FormatBytes(need), abs, units.FormatBytes(free))
}

// makeDir makes the run's own directory, or on many hosts the run's
// shared dataset directory (any host may make it first).
func (r *run) makeDir(abs string) (string, error) {
	if r.o.RunDir != "" {
		if err := os.Mkdir(r.o.RunDir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return "", fmt.Errorf("prepare: create %s: %w", r.o.RunDir, sysio.PathCause(err))
		}
		return r.o.RunDir, nil
	}
	own, err := runenv.MakeRunDir(runenv.Options{Hooks: runenv.Hooks{Created: r.o.Hooks.Created, Removed: r.o.Hooks.Removed}}, abs)
	if err != nil {
		return "", err
	}
	r.own = own
	return own.Path(), nil
}

// removeDir removes the run's directory before a dataset is in it.
func (r *run) removeDir(dir string) {
	if r.own == nil {
		_ = os.Remove(dir) // shared by hosts: the last one's removal succeeds
		return
	}
	r.own.Remove(r.warn)
}

// finishDataset marks the dataset complete (for --keep and --dataset)
// and drops it from the caches before training.
func (r *run) finishDataset(ctx context.Context) error {
	switch {
	case r.o.Host != 0: // host 0 describes the dataset
	case r.store != nil:
		if err := r.ds.putMarker(ctx, r.store); err != nil {
			return err
		}
	default:
		if err := r.ds.writeMarker(); err != nil {
			return err
		}
	}
	r.complete = true
	r.dropCaches()
	return nil
}

// cleanup removes what the run made, unless Keep: the run's directory on
// one host; this host's files on many (the last host removes the
// directory).
func (r *run) cleanup() {
	if r.o.Hooks.Finished != nil {
		r.o.Hooks.Finished()
		r.o.Hooks.Finished = nil
	}
	if r.base != nil {
		defer r.base.Close()
	}
	switch {
	case !r.gen:
	case r.o.Hold && r.complete && r.store == nil && r.own == nil && !r.o.Keep:
	case r.o.Keep && r.complete && r.store != nil:
		r.warn("keeping the dataset in %s (train on it again with --dataset %s)", r.ds.Dir(), r.prefix)
	case r.store != nil:
		if r.o.Keep {
			r.warn("not keeping the dataset in %s: its generation did not finish, and --dataset takes only a complete one", r.ds.Dir())
		}
		r.removeObjects()
	case r.o.Keep && r.complete:
		r.warn("keeping the dataset in %s (train on it again with --dataset %s)", r.ds.Dir(), r.ds.Dir())
		if r.own != nil {
			r.own.Close()
		}
	default:
		if r.o.Keep {
			r.warn("not keeping the dataset in %s: its generation did not finish, and --dataset takes only a complete one", r.ds.Dir())
		}
		if r.own != nil {
			r.removeDir(r.own.Path())
		} else {
			r.removeShare()
		}
	}
	r.gen = false
}

// RemoveShare removes this host's files of the dataset that hosts made
// in o.RunDir and held (Options.Hold), host 0 its description too; the
// last host to remove its files removes the directory. ready is called
// once the dataset is open, before anything is removed: the caller waits
// there for every host to have opened it.
func RemoveShare(o Options, ready func()) error {
	ds, err := OpenDataset(o.RunDir)
	if err != nil {
		return err
	}
	if ds.Existing() {
		return fmt.Errorf("%s holds no dataset of fsbench's: nothing removed", o.RunDir)
	}
	r := &run{o: &o, ds: ds, res: &report.Result{}}
	if ready != nil {
		ready()
	}
	r.removeShare()
	if len(r.res.Warnings) > 0 {
		return errors.New(strings.Join(r.res.Warnings, "; "))
	}
	return nil
}

// removeShare removes this host's files of a dataset shared by hosts.
func (r *run) removeShare() {
	for _, f := range r.o.ownFiles(r.ds.Files) {
		if err := os.Remove(r.ds.Path(f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			r.warn("clean up %s: %v", r.ds.Path(f), sysio.PathCause(err))
		}
	}
	if r.o.Host == 0 {
		_ = os.Remove(filepath.Join(r.ds.Dir(), markerName))
	}
	_ = os.Remove(r.ds.Dir()) // the last host's succeeds
}

// runPhase runs an engine phase between the hooks.
func (r *run) runPhase(ctx context.Context, eng *engine.Engine, p *engine.Phase, total int64, unit string) (*engine.Result, error) {
	if h := r.o.Hooks.PhaseStart; h != nil {
		h(p.Name, eng, total, unit)
	}
	res, err := eng.Run(ctx, *p)
	if h := r.o.Hooks.PhaseEnd; h != nil {
		h(p.Name)
	}
	return res, err
}

// openTarget checks that path is a directory and records where it lives.
func openTarget(path string, res *report.Result) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", badf("path %s: %v", abs, sysio.PathCause(err))
	case !st.IsDir():
		return "", badf("path %s is not a directory", abs)
	}
	res.Target = report.Target{Path: abs}
	if mnt, err := sysio.FindMount(abs); err == nil {
		res.Target.FSType, res.Target.MountPoint, res.Target.MountSource, res.Target.MountOptions = mnt.FSType, mnt.MountPoint, mnt.Source, mnt.Options
	}
	return abs, nil
}
