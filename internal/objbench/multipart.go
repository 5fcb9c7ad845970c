package objbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// S3's limits of multipart uploads, which every S3 store enforces: parts
// but the last are at least 5 MiB, and an object has at most 10000.
const (
	minPartSize = 5 * units.MiB
	maxParts    = 10000
	// maxPartsInFlight bounds --parts-in-flight, as --threads is bounded.
	maxPartsInFlight = 256
)

var multipartWorkload = &Workload{Name: "multipart",
	Help:  "upload new objects in --part-size parts, --parts-in-flight at a time: rows for whole objects and for parts",
	Check: checkMultipart, Prepare: (*run).prepareMultipart, Phase: (*run).multipartPhase, Rows: (*run).multipartRows}

// checkMultipart checks the options of the multipart workload.
func checkMultipart(o *Options) error {
	if err := checkObjects(false)(o); err != nil {
		return err
	}
	switch {
	case o.PartSize < minPartSize:
		return fmt.Errorf("--part-size %s is below the store's minimum part size, %s", units.FormatBytes(o.PartSize), units.FormatBytes(minPartSize))
	case o.PartsInFlight < 1 || o.PartsInFlight > maxPartsInFlight:
		return fmt.Errorf("--parts-in-flight must be between 1 and %d (got %d)", maxPartsInFlight, o.PartsInFlight)
	case partsOf(o.Sizes.Max, o.PartSize) > maxParts:
		return fmt.Errorf("objects of %s in parts of %s make more than %d parts", units.FormatBytes(o.Sizes.Max), units.FormatBytes(o.PartSize), maxParts)
	}
	return nil
}

// partsOf is how many parts an object of size bytes has (one, when empty).
func partsOf(size, part int64) int64 { return max(1, (size+part-1)/part) }

// prepareMultipart checks that the store uploads in parts.
func (r *run) prepareMultipart(ctx context.Context) error {
	if object.AsMultipart(r.store) == nil {
		return fmt.Errorf("%s: multipart upload: %w", r.base.String(), object.ErrNotSupported)
	}
	return nil
}

// Kinds of the multipart workload's steps.
const (
	stepPart = iota
	stepComplete
	multipartSteps
)

func (r *run) multipartPhase(ctx context.Context) engine.Phase {
	return engine.Phase{Name: "multipart", Title: "multipart upload objects", Tasks: r.o.Objects, Shared: true,
		Setup: r.stepsSetup(multipartSteps),
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, s engine.Start, _ int) (int64, int, error) {
			return r.putMultipart(ctx, w, s)
		})}
}

// putMultipart uploads a new object in parts and adds it to the thread's
// live set; the parts' times are recorded once the object is complete.
func (r *run) putMultipart(ctx context.Context, w *engine.Worker, s engine.Start) (int64, int, error) {
	t := w.State.(*thread)
	size := r.o.Sizes.Draw(w.Rand)
	key := objKey(w.ID, t.made)
	t.made++
	up := upload{r: r, m: object.AsMultipart(r.store), key: key, size: size}
	err := up.run(ctx)
	if w.Measured(s) {
		up.record(r.x.steps[w.ID])
	}
	if err != nil {
		return 0, 0, err
	}
	t.live = append(t.live, objRef{key, size})
	return size, r.o.Sizes.Class(size), nil
}

// upload is one multipart upload of a pattern object.
type upload struct {
	r     *run
	m     object.MultipartUploader
	key   string
	size  int64
	id    string
	parts []object.Part
	times []time.Duration // of each part
	errs  []error         // of each part
	done  time.Duration   // of the completion
	cerr  error
}

func (u *upload) run(ctx context.Context) error {
	mu, err := u.m.CreateMultipartUpload(ctx, u.key)
	if err != nil {
		return err
	}
	u.id = mu.UploadID
	n := partsOf(u.size, u.r.o.PartSize)
	if n > 1 && mu.MinPartSize > u.r.o.PartSize {
		err = fmt.Errorf("multipart upload of %s: parts of %s are below the store's minimum, %s",
			u.key, units.FormatBytes(u.r.o.PartSize), units.FormatBytes(mu.MinPartSize))
	} else {
		err = u.sendParts(ctx, int(n))
	}
	if err == nil {
		t := time.Now()
		u.cerr = u.m.CompleteUpload(ctx, u.key, u.id, u.parts)
		u.done, err = time.Since(t), u.cerr
	}
	if err != nil {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeoutOf(u.r.o.Object))
		defer cancel()
		return errors.Join(err, u.m.AbortUpload(actx, u.key, u.id))
	}
	return nil
}

// sendParts uploads the n parts, --parts-in-flight at a time.
func (u *upload) sendParts(ctx context.Context, n int) error {
	u.parts, u.times, u.errs = make([]object.Part, n), make([]time.Duration, n), make([]error, n)
	src := u.r.pat.Reader(u.r.pat.ID(u.key), u.size)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(u.r.o.PartsInFlight)
	for i := range n {
		g.Go(func() error {
			off := int64(i) * u.r.o.PartSize
			part := io.NewSectionReader(src, off, min(u.r.o.PartSize, u.size-off))
			t := time.Now()
			u.parts[i], u.errs[i] = u.m.UploadPart(gctx, u.key, u.id, i+1, part)
			u.times[i] = time.Since(t)
			return u.errs[i]
		})
	}
	return g.Wait()
}

// record adds the upload's parts and completion to the worker's steps;
// parts cancelled after another part failed are not counted.
func (u *upload) record(s *steps) {
	for i, err := range u.errs {
		if err != nil && errors.Is(err, context.Canceled) {
			continue
		}
		s.record(stepPart, u.times[i], u.parts[i].Size, err)
	}
	if u.done > 0 || u.cerr != nil {
		s.record(stepComplete, u.done, 0, u.cerr)
	}
}

// multipartRows are the whole objects' row, then the parts' and the
// completions'.
func (r *run) multipartRows(res *engine.Result) []report.PhaseResult {
	obj := r.phaseRow("multipart", "multipart upload objects", res)
	obj.LatencyOf = "whole object: create, parts, complete"
	parts := r.stepRow(stepPart, "multipart-part", "  upload parts", fmt.Sprintf("one part of up to %s", units.FormatBytes(r.o.PartSize)), res)
	done := r.stepRow(stepComplete, "multipart-complete", "  complete uploads", "complete multipart upload", res)
	return []report.PhaseResult{obj, parts, done}
}
