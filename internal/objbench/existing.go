package objbench

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/internal/workload"
	"github.com/fsbench/fsbench/pkg/object"
)

// GetExisting is the phase of a run over the objects already in a store
// (RunExisting).
const GetExisting = "get-existing"

// checkExisting checks the options of RunExisting.
func (o *Options) checkExisting() error {
	switch {
	case o.URL == "":
		return errors.New("a storage URL (or directory) is required")
	case o.Threads < 1 || o.Threads > maxThreads:
		return fmt.Errorf("--threads must be between 1 and %d (got %d)", maxThreads, o.Threads)
	case o.Workload != "":
		return errors.New("--list-existing downloads the objects that are there; it does not combine with --workload")
	case o.Keep:
		return errors.New("--keep applies to objects objbench writes; --list-existing writes none")
	case o.Verify:
		return errors.New("--verify checks objects objbench uploaded; the objects --list-existing reads are not its own (give --verify=false)")
	case o.Duration < 0, o.Warmup < 0, o.Ops < 0, o.Interval < 0:
		return errors.New("--duration, --warmup, --ops and --interval must not be negative")
	case o.Warmup > 0 && o.Duration == 0:
		return errors.New("--warmup needs --duration")
	}
	return o.checkEndpoints()
}

// RunExisting lists the objects under o.ExistingPrefix and downloads each
// of them (one pass, or until --ops or --duration), as warp's
// --list-existing does. It writes nothing: no bucket is created, no object
// put or deleted; sizes come from the listing.
func RunExisting(ctx context.Context, o Options, res *report.Result) error {
	if err := o.checkExisting(); err != nil {
		return &badInput{err}
	}
	r := &run{o: o, res: res}
	if r.o.Seed == 0 {
		r.o.Seed = pattern.RandomSeed()
	}
	if r.o.Object.Threads == 0 {
		r.o.Object.Threads = r.o.Threads
	}
	res.Target = report.Target{Storage: o.Storage, URL: object.RedactURL(o.URL)}
	base, err := r.openStore(ctx, res)
	if err != nil {
		return err
	}
	defer base.Close()
	r.base, r.own = base, base
	res.Target.URL = base.String()
	r.info("Listing " + base.String() + " under " + strconv.Quote(o.ExistingPrefix) + " ...")
	var skipped workload.Listing
	if r.objs, err = listObjects(ctx, base, o.ExistingPrefix, &skipped); err != nil {
		if ctx.Err() != nil {
			res.Interrupted = true
			return ctx.Err()
		}
		return &Error{"list", err}
	}
	if msg := skipped.Skipped(); msg != "" {
		r.warn("%s", msg)
	}
	if len(r.objs) == 0 {
		return &Error{"list", &badInput{fmt.Errorf("no objects under %q in %s", o.ExistingPrefix, base.String())}}
	}
	var total int64
	for _, obj := range r.objs {
		total += obj.size
	}
	res.Parameters, res.Threads = r.o.existingParams(len(r.objs), total), r.o.Threads
	r.seed, r.pat = r.o.Seed, pattern.New(r.o.Seed)
	r.newEngine()
	return r.getExisting(ctx)
}

// getExisting runs the timed phase over r.objs on the watched store.
func (r *run) getExisting(ctx context.Context) error {
	wctx, down := context.WithCancelCause(ctx)
	defer down(nil)
	r.store = watch(r.base, r.base.String(), down)
	r.info("Start get of existing objects ...")
	p := engine.Phase{Name: GetExisting, Title: "get existing objects", Tasks: len(r.objs), Classes: 1,
		Do: r.timed(wctx, func(ctx context.Context, w *engine.Worker, s engine.Start, task int) (int64, int, error) {
			return r.getObj(ctx, w, s, r.objs[task%len(r.objs)])
		})}
	r.limits(&p)
	res, err := r.runPhase(wctx, p, 1)
	if err != nil && wctx.Err() == nil {
		r.warn("%s: %v", p.Title, err)
	}
	r.ended(&p, res)
	row := r.phaseRow(p.Name, p.Title, res)
	row.LatencyOf = "get (whole object)"
	r.res.Phases = append(r.res.Phases, row)
	r.warnErrors(&row)
	switch {
	case ctx.Err() != nil:
		r.res.Interrupted = true
		return ctx.Err()
	case wctx.Err() != nil:
		err := context.Cause(wctx)
		r.warn("stopped the get of existing objects: %v", err)
		return &Error{"get", err}
	}
	return nil
}

// listObjects lists every object under prefix, page by page, leaving out the
// directory entries of file-system stores, and counting in skipped, as
// bench --read-existing does, their entries that are not regular files:
// a symbolic link is never followed (it may lead out of the tree, or to
// /dev/zero), nor a FIFO or a device read (it may block, or never end).
func listObjects(ctx context.Context, s object.Storage, prefix string, skipped *workload.Listing) ([]objRef, error) {
	var out []objRef
	after := ""
	for {
		page, err := s.List(ctx, object.ListOptions{Prefix: prefix, StartAfter: after, Limit: 1000})
		if err != nil {
			return nil, err
		}
		for _, obj := range page.Objects {
			switch {
			case obj.IsDir:
			case obj.Mode&fs.ModeSymlink != 0:
				skipped.Symlinks++
			case !obj.Mode.IsRegular():
				skipped.Special++
			default:
				out = append(out, objRef{obj.Key, obj.Size})
			}
		}
		if !page.Truncated || page.Next == "" || page.Next == after {
			return out, nil
		}
		after = page.Next
	}
}

func (o *Options) existingParams(objects int, bytes int64) report.Params {
	return report.Params{
		{Key: "list_existing", Label: "ListExisting", Value: true, Display: "on"},
		{Key: "prefix", Label: "Prefix", Value: o.ExistingPrefix, Display: strconv.Quote(o.ExistingPrefix)},
		{Key: "objects", Label: "Objects", Value: objects, Display: strconv.Itoa(objects)},
		{Key: "listed_bytes", Label: "Bytes", Value: bytes, Display: units.FormatBytes(bytes)},
		{Key: "threads", Label: "NumThreads", Value: o.Threads, Display: strconv.Itoa(o.Threads)},
		{Key: "seed", Label: "", Value: o.Seed, Display: strconv.FormatUint(o.Seed, 10)},
	}
}
