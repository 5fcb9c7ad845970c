package objbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/pkg/object"
)

// keepVersions is how many versions of a key the versioned workload
// keeps: a cycle that makes one more deletes the oldest.
const keepVersions = 3

var versionedWorkload = &Workload{Name: "versioned", Unit: "cycles",
	Help:  fmt.Sprintf("put a new version of one of --objects keys, get a random version of it, delete its oldest beyond %d: rows per operation", keepVersions),
	Check: checkVersioned, Prepare: (*run).prepareVersioned, Phase: (*run).versionedPhase, Rows: (*run).versionedRows}

func checkVersioned(o *Options) error {
	if err := checkObjects(false)(o); err != nil {
		return err
	}
	if o.Objects < o.Threads {
		return fmt.Errorf("--objects (%d) must be at least --threads (%d): each thread has keys of its own", o.Objects, o.Threads)
	}
	return nil
}

// ver is one version the workload made: its ID, its number among the
// versions of its key (which sets its content) and its size.
type ver struct {
	id   string
	n    int
	size int64
}

// versions is the versioned workload's state: the live versions of each
// key, oldest first, and the number of the next version; key i belongs to
// one thread only.
type versions struct {
	v    object.Versioner
	live [][]ver
	next []int
}

func verKey(i int) string { return "ver/" + strconv.Itoa(i) }

// contentName names the content of version n of key.
func contentName(key string, n int) string { return key + "#" + strconv.Itoa(n) }

// prepareVersioned makes sure the bucket keeps versions, turning
// versioning on only in a bucket the run created, then puts a first
// version of every key, untimed.
func (r *run) prepareVersioned(ctx context.Context) error {
	v := object.AsVersioner(r.store)
	if v == nil {
		return fmt.Errorf("%s: versioning: %w", r.base.String(), object.ErrNotSupported)
	}
	if err := r.ensureVersioning(ctx, v); err != nil {
		return err
	}
	r.x.versioned = true
	r.x.vers = &versions{v: v, live: make([][]ver, r.o.Objects), next: make([]int, r.o.Objects)}
	p := engine.Phase{Name: "prepare", Title: "prepare versions", Tasks: r.o.Objects, KeepGoing: true,
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, _ engine.Start, task int) (int64, int, error) {
			n, err := r.putVersion(ctx, w, task)
			return n, 0, err
		})}
	res, err := r.runPhase(ctx, p, 1)
	if err == nil && res.Errors > 0 {
		err = fmt.Errorf("%d of %d puts failed, e.g.: %s", res.Errors, r.o.Objects, res.Samples[0])
	}
	return err
}

func (r *run) ensureVersioning(ctx context.Context, v object.Versioner) error {
	on, err := v.VersioningEnabled(ctx)
	switch {
	case err != nil || on:
		return err
	case !r.x.createdBucket:
		return fmt.Errorf("bucket %s keeps no versions, and fsbench changes no setting of a bucket it did not create: "+
			"enable versioning on it, or name a bucket that does not exist (the run creates it and turns versioning on)", r.base.String())
	}
	if err := v.EnableVersioning(ctx); err != nil {
		return err
	}
	r.warn("turned versioning on in bucket %s, which this run created", r.base.String())
	return nil
}

// Kinds of the versioned workload's steps.
const (
	stepVPut = iota
	stepVGet
	stepVDelete
	versionSteps
)

// versionedPhase: each task is one cycle on one key of the thread's own.
func (r *run) versionedPhase(ctx context.Context) engine.Phase {
	return engine.Phase{Name: "versioned", Title: "versioned cycles", Tasks: r.o.Objects,
		Setup: r.stepsSetup(versionSteps),
		Do: r.timed(ctx, func(ctx context.Context, w *engine.Worker, s engine.Start, task int) (int64, int, error) {
			n, err := r.versionCycle(ctx, w, s, task)
			return n, 0, err
		})}
}

// versionCycle puts a new version of key task, gets a random live version
// of it back and checks it, and deletes the oldest version when more than
// keepVersions are live. Each step is timed on its own.
func (r *run) versionCycle(ctx context.Context, w *engine.Worker, s engine.Start, task int) (int64, error) {
	st, measured := r.x.steps[w.ID], w.Measured(s)
	rec := func(kind int, t time.Time, n int64, err error) {
		if measured && !errors.Is(err, context.Canceled) {
			st.record(kind, time.Since(t), n, err)
		}
	}
	t := time.Now()
	put, err := r.putVersion(ctx, w, task)
	if rec(stepVPut, t, put, err); err != nil {
		return 0, err
	}
	live := r.x.vers.live[task]
	t = time.Now()
	got, err := r.getVersion(ctx, w, task, live[w.Rand.IntN(len(live))])
	if rec(stepVGet, t, got, err); err != nil || len(live) <= keepVersions {
		return put + got, err
	}
	t = time.Now()
	err = r.x.vers.v.DeleteVersion(ctx, verKey(task), live[0].id)
	if rec(stepVDelete, t, 0, err); err == nil {
		r.x.vers.live[task] = live[1:]
	}
	return put + got, err
}

// putVersion puts the next version of key task.
func (r *run) putVersion(ctx context.Context, w *engine.Worker, task int) (int64, error) {
	vs, key := r.x.vers, verKey(task)
	n, size := vs.next[task], r.o.Sizes.Draw(w.Rand)
	vs.next[task]++
	id, err := vs.v.PutVersion(ctx, key, r.pat.Reader(r.pat.ID(contentName(key, n)), size))
	if err != nil {
		return 0, err
	}
	vs.live[task] = append(vs.live[task], ver{id: id, n: n, size: size})
	return size, nil
}

// getVersion reads version v of key task and checks its every byte
// (unless verifying is off) and its size.
func (r *run) getVersion(ctx context.Context, w *engine.Worker, task int, v ver) (int64, error) {
	key := verKey(task)
	rc, err := r.x.vers.v.GetVersion(ctx, key, v.id, 0, -1)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	buf, id := w.State.(*thread).readBuf(), r.pat.ID(contentName(key, v.n))
	var n int64
	for {
		m, err := rc.Read(buf)
		if r.o.Verify && m > 0 {
			if bad := r.pat.Check(buf[:m], id, n); bad >= 0 {
				return n, fmt.Errorf("get %s version %s: content differs from that version's upload at byte %d", key, v.id, n+int64(bad))
			}
		}
		n += int64(m)
		switch {
		case err == io.EOF && n != v.size:
			return n, fmt.Errorf("get %s version %s: %d bytes, expected %d", key, v.id, n, v.size)
		case err == io.EOF:
			return n, nil
		case err != nil:
			return n, err
		}
	}
}

// versionedRows are the cycles' row, then the rows of its puts, gets and
// deletes.
func (r *run) versionedRows(res *engine.Result) []report.Phase {
	cycle := r.phaseRow("versioned", "versioned cycles", res)
	cycle.LatencyOf = "cycle: put, get (and delete) of versions"
	return []report.Phase{cycle,
		r.stepRow(stepVPut, "version-put", "  put versions", "put of a new version", res),
		r.stepRow(stepVGet, "version-get", "  get versions", "get of a random live version", res),
		r.stepRow(stepVDelete, "version-delete", "  delete versions", "delete of the oldest version", res),
	}
}

// purgeVersions deletes every version and delete marker under the run's
// prefix: in a bucket that keeps versions, deleting a key leaves them.
func (r *run) purgeVersions(ctx context.Context) error {
	v := object.AsVersioner(r.own)
	for range maxObjects {
		page, err := v.ListVersions(ctx, object.VersionListOptions{})
		if err != nil || len(page.Versions) == 0 {
			return err
		}
		for _, x := range page.Versions {
			if err := v.DeleteVersion(ctx, x.Key, x.ID); err != nil {
				return err
			}
		}
	}
	return errors.New("versions kept appearing")
}
