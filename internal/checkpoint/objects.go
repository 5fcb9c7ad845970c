package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/objstore"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// A checkpoint in an object store (Options.Storage set): every rank
// uploads its shard as one object, in PartSize parts with PartsInFlight
// of them in flight (one streamed PUT on stores without multipart
// upload); then every rank reads back another rank's shard with
// PartsInFlight ranged GETs of PartSize at a time and checks every byte.
// The objects are under a new prefix and are deleted, by their keys, at
// the end unless Keep.

// Defaults of the object-store checkpoint.
const (
	DefaultPartSize      = 16 * units.MiB
	DefaultPartsInFlight = 4
	minPartSize          = 5 * units.MiB // S3's least part but the last
	maxParts             = 10000
	maxPartsInFlight     = 256
)

// objRun is the state of a checkpoint in an object store.
type objRun struct {
	*run
	// store is base under prefix, where this host's ranks write; reads
	// is where they read back: store on one host, the next host's prefix
	// on many.
	base, store, reads object.Storage
	prefix             string
	mp                 object.MultipartUploader
	pat                *pattern.Pattern
	written            []bool // shards whose upload was begun, by local rank
}

// checkObjects checks the options of a checkpoint of plan in an object
// store.
func (o *Options) checkObjects(plan Plan) error {
	if parts := (plan.Shard + o.PartSize - 1) / max(o.PartSize, 1); parts > maxParts {
		return fmt.Errorf("shards of %s in parts of %s make %d parts, more than %d: give a larger --part-size",
			units.FormatBytes(plan.Shard), units.FormatBytes(o.PartSize), parts, maxParts)
	}
	switch {
	case o.Direct:
		return errors.New("--direct is for a file system; an object store is written with PUTs")
	case o.PartSize < minPartSize:
		return fmt.Errorf("--part-size %s is below the least part an S3 store takes, %s", units.FormatBytes(o.PartSize), units.FormatBytes(minPartSize))
	case o.PartsInFlight < 1 || o.PartsInFlight > maxPartsInFlight:
		return fmt.Errorf("--parts-in-flight must be between 1 and %d (got %d)", maxPartsInFlight, o.PartsInFlight)
	}
	return nil
}

// runObjects runs the checkpoint in the store of o.Storage at o.Path.
func (r *run) runObjects(ctx context.Context) error {
	timeout := objstore.Timeout(r.o.Object)
	cfg := r.o.Object
	if cfg.Threads == 0 {
		// A connection per request in flight.
		cfg.Threads = min(r.part.Ranks*r.o.PartsInFlight, maxPartsInFlight)
	}
	base, err := objstore.Open(ctx, timeout, func(ctx context.Context) (object.Storage, error) {
		return object.Open(ctx, r.o.Storage, r.o.Path, cfg)
	})
	switch {
	case errors.Is(err, objstore.ErrBadInput):
		return badInput{err}
	case err != nil:
		return &Error{"open", err}
	}
	defer base.Close()
	r.res.Target = report.Target{Storage: r.o.Storage, URL: base.String()}
	r.res.Parameters, r.res.Threads = r.objectParams(), r.part.Ranks
	x := &objRun{run: r, base: base, prefix: r.o.RunDir, written: make([]bool, r.part.Ranks)}
	if x.prefix == "" {
		x.prefix = objstore.NewPrefix("checkpoint")
	}
	created, err := objstore.Claim(ctx, base, x.prefix, timeout)
	if created {
		r.warn("%s", objstore.CreatedNote(base))
	}
	if err != nil {
		return &Error{"prepare", err}
	}
	x.store = object.WithPrefix(base, x.prefix)
	x.reads = x.store
	if r.o.ReadDir != "" {
		x.reads = object.WithPrefix(base, r.o.ReadDir)
	}
	if h := r.o.Hooks.Created; h != nil {
		h(objstore.Leftover(x.store))
	}
	if x.mp = object.AsMultipart(x.store); x.mp == nil {
		r.warn("%s uploads no object in parts: each shard is one streamed PUT", base.String())
	}
	seed := r.o.Seed
	if seed == 0 {
		seed = randomSeed()
	}
	x.pat = pattern.NewData(seed, r.o.Data)
	err = x.phases(ctx)
	if h := r.o.ObjectHooks.Finished; h != nil {
		h() // before the clean-up: another host may still read this one's shards
	}
	x.cleanup()
	if ctx.Err() != nil {
		r.res.Interrupted = true
		return ctx.Err()
	}
	return err
}

// Error is a failure of a stage of a checkpoint in an object store.
type Error struct {
	Stage string
	Err   error
}

func (e *Error) Error() string { return e.Stage + ": " + e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// phases runs the ranks' uploads, then their read-back.
func (x *objRun) phases(ctx context.Context) error {
	if _, err := x.phase(ctx, "write", "Checkpoint write", x.upload); err != nil {
		return err
	}
	res, err := x.phase(ctx, "read", "Checkpoint read-back", x.readBack)
	if err == nil && res.Errors > 0 {
		err = &Error{"Checkpoint read-back", fmt.Errorf("%d of %d shards differ from what was written: %s",
			res.Errors, x.part.Ranks, res.Samples[0])}
	}
	return err
}

// phase runs one rank task per local rank on an engine and adds the
// phase, with a row per rank, to the result.
func (x *objRun) phase(ctx context.Context, name, title string, do func(context.Context, int) (int64, error)) (*engine.Result, error) {
	rows := make([]report.RankPhase, x.part.Ranks)
	p := engine.Phase{Name: name, Title: title, Tasks: x.part.Ranks, KeepGoing: true,
		Do: func(w *engine.Worker, task, _ int) error {
			st, ok := w.Begin()
			if !ok {
				return nil
			}
			t0 := time.Now()
			n, err := do(ctx, task)
			row := &rows[task]
			row.Rank, row.Shard, row.Bytes, row.Seconds = x.part.First+task, x.shardOf(task, name == "read"), n, time.Since(t0).Seconds()
			row.BytesPerSec, row.Incomplete = float64(n)/max(row.Seconds, 1e-9), n < x.plan.Shard
			if err != nil {
				row.Errors = 1
				return err
			}
			w.End(st, n)
			w.Item()
			return nil
		}}
	eng := engine.New(x.part.Ranks)
	h := x.o.ObjectHooks
	if h.PhaseStart != nil {
		h.PhaseStart(name, title, eng, int64(x.part.Ranks))
	}
	res, err := eng.Run(ctx, p)
	if h.PhaseEnd != nil {
		h.PhaseEnd(name)
	}
	rp := res.Report()
	rp.Value = report.Measure{Value: rp.BytesPerSec / float64(units.MiB), Unit: report.UnitMiBPerSec}
	rp.Cost = report.Measure{Value: rp.Seconds, Unit: report.UnitSeconds}
	rp.LatencyOf = "a rank's whole shard: " + map[string]string{"write": "parts uploaded and completed", "read": "ranged GETs, checked"}[name]
	rp.Ranks = rows
	x.res.Phases = append(x.res.Phases, rp)
	if err != nil && ctx.Err() == nil {
		return res, &Error{title, err}
	}
	if err == nil && name == "write" && res.Errors > 0 {
		err = &Error{title, fmt.Errorf("%d of %d shards failed: %s", res.Errors, x.part.Ranks, res.Samples[0])}
	}
	return res, err
}

// shardOf is the shard local rank i writes, or with read reads back.
func (x *objRun) shardOf(i int, read bool) int {
	if read {
		return x.part.Reads(i)
	}
	return x.part.First + i
}

// upload writes local rank i's shard: in parts, PartsInFlight at a time,
// or as one streamed PUT.
func (x *objRun) upload(ctx context.Context, i int) (int64, error) {
	key := ShardName(x.part.First + i)
	size := x.plan.Shard
	src := x.pat.Reader(x.pat.ID(key), size)
	x.written[i] = true
	if x.mp == nil {
		if err := x.store.Put(ctx, key, src); err != nil {
			return 0, err
		}
		return size, nil
	}
	mu, err := x.mp.CreateMultipartUpload(ctx, key)
	if err != nil {
		return 0, err
	}
	n := int((size + x.o.PartSize - 1) / x.o.PartSize)
	parts := make([]object.Part, n)
	var sent atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(x.o.PartsInFlight)
	for j := range n {
		g.Go(func() error {
			off := int64(j) * x.o.PartSize
			part := io.NewSectionReader(src, off, min(x.o.PartSize, size-off))
			p, err := x.mp.UploadPart(gctx, key, mu.UploadID, j+1, part)
			parts[j] = p
			if err == nil {
				sent.Add(part.Size())
			}
			return err
		})
	}
	err = g.Wait()
	if err == nil {
		err = x.mp.CompleteUpload(ctx, key, mu.UploadID, parts)
	}
	if err != nil {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), objstore.Timeout(x.o.Object))
		defer cancel()
		return sent.Load(), errors.Join(err, x.mp.AbortUpload(actx, key, mu.UploadID))
	}
	return size, nil
}

// readBack reads local rank i's other shard with PartsInFlight ranged
// GETs at a time, each into a buffer of its own reused for the next,
// and checks every byte against the pattern it was written with.
func (x *objRun) readBack(ctx context.Context, i int) (int64, error) {
	key := ShardName(x.part.Reads(i))
	id, size, step := x.pat.ID(key), x.plan.Shard, x.o.PartSize
	n := int((size + step - 1) / step)
	bufs := make(chan []byte, x.o.PartsInFlight)
	for range x.o.PartsInFlight {
		bufs <- make([]byte, min(step, size))
	}
	var got atomic.Int64
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(x.o.PartsInFlight)
	for j := range n {
		g.Go(func() error {
			buf := <-bufs
			defer func() { bufs <- buf }()
			off := int64(j) * step
			b := buf[:min(step, size-off)]
			rc, err := x.reads.Get(gctx, key, off, int64(len(b)))
			if err != nil {
				return err
			}
			k, err := io.ReadFull(rc, b)
			objstore.Close(rc)
			got.Add(int64(k))
			if err != nil {
				return fmt.Errorf("get %s at %d: %w", key, off+int64(k), err)
			}
			if bad := x.pat.Check(b, id, off); bad >= 0 {
				return fmt.Errorf("%s differs from what was written at byte %d", key, off+int64(bad))
			}
			return nil
		})
	}
	err := g.Wait()
	return got.Load(), err
}

// cleanup deletes the shards the run began to write, by their keys,
// unless Keep; on file-system stores also the prefix's directory.
func (x *objRun) cleanup() {
	if x.o.Keep {
		x.warn("keeping the checkpoint's shards under %s", x.store.String())
		return
	}
	var keys []string
	for i, w := range x.written {
		if w {
			keys = append(keys, ShardName(x.part.First+i))
		}
	}
	if left, err := objstore.Remove(x.base, x.prefix, keys, 2*time.Minute); left > 0 {
		x.warn("clean up: %d of %d shards under %s are left: %v", left, len(keys), x.store.String(), err)
		return
	}
	if h := x.o.Hooks.Removed; h != nil {
		h()
	}
}

// objectParams are the parameters of a checkpoint in an object store:
// parts instead of blocks.
func (r *run) objectParams() report.Params {
	ps := r.params()
	for i, p := range ps {
		if p.Key == "block_size" {
			ps[i] = report.Param{Key: "part_size", Label: "PartSize", Value: r.o.PartSize, Display: units.FormatBytes(r.o.PartSize)}
		}
	}
	return append(ps,
		report.Param{Key: "parts_in_flight", Label: "PartsInFlight", Value: r.o.PartsInFlight, Display: strconv.Itoa(r.o.PartsInFlight)},
		report.Param{Key: "storage", Label: "Storage", Value: r.o.Storage, Display: r.o.Storage})
}
