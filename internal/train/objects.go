package train

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/objstore"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/pkg/object"
)

// A dataset in an object store (Options.Storage set) has the layout of one
// in a directory: an object per file of samples under the run's own key
// prefix (or --dataset's), and the description object markerName. Samples
// are read with GETs, ranged ones for the samples of a record object.

// openObjects opens the store, then the dataset to reuse or the new
// prefix of the one to generate. A bucket that does not exist is created
// and left in place.
func (r *run) openObjects(ctx context.Context) error {
	o := r.o
	cfg := o.Object
	if cfg.Threads == 0 {
		cfg.Threads = poolSize(o)
	}
	base, err := objstore.Open(ctx, objstore.Timeout(cfg), func(ctx context.Context) (object.Storage, error) {
		return object.Open(ctx, o.Storage, o.Path, cfg)
	})
	switch {
	case errors.Is(err, objstore.ErrBadInput):
		return &badInput{err}
	case err != nil:
		return fmt.Errorf("open: %w", err)
	}
	r.base = base
	r.res.Target = report.Target{Storage: o.Storage, URL: base.String()}
	if o.Dataset != "" {
		prefix := strings.TrimSuffix(o.Dataset, "/") + "/"
		r.store = object.WithPrefix(base, prefix)
		ds, err := openObjectDataset(ctx, r.store)
		if err != nil {
			return err
		}
		r.ds = ds
		_, err = NewPlan(ds.Samples(), o.ranks(), o.BatchSize)
		return err
	}
	if _, err := NewPlan(o.Files*o.SamplesPerFile, o.ranks(), o.BatchSize); err != nil {
		return err
	}
	prefix := o.RunDir // on many hosts: the run's, which every host claims before any writes
	if prefix == "" {
		prefix = objstore.NewPrefix("train")
	}
	created, err := objstore.Claim(ctx, base, prefix, objstore.Timeout(o.Object))
	if created {
		r.warn("%s", objstore.CreatedNote(base))
	}
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	r.prefix = prefix
	r.store = object.WithPrefix(base, prefix)
	if o.Hooks.Created != nil {
		o.Hooks.Created(objstore.Leftover(r.store))
	}
	r.ds = NewDataset(r.store.String(), o.Files, o.SamplesPerFile, o.SampleSize, o.SampleStdev, o.Seed, 1)
	r.ds.setData(o.Data)
	r.ds.keyed = true
	r.gen = true
	return nil
}

// poolSize is the connections to keep open to the store: one per request
// in flight, the readers of every accelerator (of the largest count
// --find-max may try), or the generation's writers.
func poolSize(o *Options) int {
	n := o.ranks() * o.ReadThreads
	if o.FindMax {
		n *= 4
	}
	return min(max(n, o.GenThreads), maxPool)
}

// maxPool bounds the connections kept open to the store.
const maxPool = 256

// openObjectDataset reads the description of a dataset an earlier run
// kept under s and checks that its objects are there at their sizes; with
// no description, every non-empty object under s is one sample.
func openObjectDataset(ctx context.Context, s object.Storage) (*Dataset, error) {
	sizes, err := listSizes(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("--dataset %s: %w", s.String(), err)
	}
	if _, ok := sizes[markerName]; !ok {
		return objectFiles(s.String(), sizes)
	}
	rc, err := s.Get(ctx, markerName, 0, -1)
	if err != nil {
		return nil, fmt.Errorf("--dataset %s: %w", s.String(), err)
	}
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("--dataset %s: %w", s.String(), err)
	}
	d, err := parseMarker(data, s.String())
	if err != nil {
		return nil, err
	}
	d.keyed = true
	for f := 0; f < d.Files; f++ {
		if got, ok := sizes[d.Key(f)]; !ok || got != d.FileSize(f) {
			return nil, badf("--dataset %s is incomplete: %s is missing or not %d bytes", d.dir, d.Key(f), d.FileSize(f))
		}
	}
	return d, nil
}

// cleanupWait bounds the removal of a dataset's objects.
const cleanupWait = 2 * time.Minute

// sortedKeys are the keys of m in byte order.
func sortedKeys(m map[string]int64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// listSizes lists every object under s with its size.
func listSizes(ctx context.Context, s object.Storage) (map[string]int64, error) {
	sizes := map[string]int64{}
	opt := object.ListOptions{}
	for {
		page, err := s.List(ctx, opt)
		if err != nil {
			return nil, err
		}
		for _, ob := range page.Objects {
			if !ob.IsDir {
				sizes[ob.Key] = ob.Size
			}
		}
		if !page.Truncated {
			return sizes, nil
		}
		opt.StartAfter = page.Next
	}
}

// objectFiles is a dataset of the existing objects listed, one sample
// each: they are read, never written or deleted.
func objectFiles(dir string, sizes map[string]int64) (*Dataset, error) {
	d := &Dataset{Version: datasetVersion, PerFile: 1, Align: 1, dir: dir, keyed: true}
	for _, k := range sortedKeys(sizes) {
		if sizes[k] > 0 {
			d.paths = append(d.paths, k)
			d.off = append(d.off, 0, sizes[k])
			d.Bytes += sizes[k]
			d.max = max(d.max, sizes[k])
		}
	}
	return d, d.checkExisting()
}

// putMarker records that the dataset under s is complete.
func (d *Dataset) putMarker(ctx context.Context, s object.Storage) error {
	data, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := s.Put(ctx, markerName, bytes.NewReader(append(data, '\n'))); err != nil {
		return fmt.Errorf("write %s%s: %w", d.dir, markerName, err)
	}
	return nil
}

// put uploads file number task of the host's list as one object of
// pattern bytes, streamed from the pattern: no buffer of its size.
func (g *generator) put(ctx context.Context, w *engine.Worker, task int) error {
	st, ok := w.Begin()
	if !ok {
		return nil
	}
	f := g.files[task]
	size := g.ds.FileSize(f)
	ctx, cancel := workerContext(ctx, w)
	defer cancel()
	if err := g.store.Put(ctx, g.ds.Key(f), g.pat.Reader(uint64(f), size)); err != nil {
		return fmt.Errorf("put %s: %w", g.ds.Path(f), err)
	}
	w.End(st, size)
	w.Item()
	return nil
}

// getSample reads sample i with one GET (ranged within a record object),
// into buf chunk by chunk.
func (t *trainer) getSample(ctx context.Context, i int, buf []byte) (int64, error) {
	f, off, size := t.ds.Locate(i)
	limit := size
	if t.ds.PerFile == 1 {
		limit = -1 // the whole object: a plain GET
	}
	rc, err := t.store.Get(ctx, t.ds.Key(f), off, limit)
	if err != nil {
		return 0, fmt.Errorf("get %s: %w", t.ds.Path(f), err)
	}
	defer objstore.Close(rc)
	for done := int64(0); done < size; {
		n, err := io.ReadFull(rc, buf[:min(int64(len(buf)), size-done)])
		done += int64(n)
		if err != nil {
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("%w (the object is shorter than the dataset says)", io.ErrUnexpectedEOF)
			}
			return done, fmt.Errorf("get %s at %d: %w", t.ds.Path(f), off+done, err)
		}
	}
	return size, nil
}

// removeObjects deletes the objects this host wrote, by their keys, and
// nothing else: the description (host 0), then the files; on file-system
// stores also the prefix's directory, once empty.
func (r *run) removeObjects() {
	var keys []string
	if r.o.Host == 0 {
		keys = append(keys, markerName)
	}
	for _, f := range r.o.ownFiles(r.ds.Files) {
		keys = append(keys, r.ds.Key(f))
	}
	if left, err := objstore.Remove(r.base, r.prefix, keys, cleanupWait); left > 0 {
		r.warn("clean up: %d of %d objects under %s are left: %v", left, len(keys), r.ds.Dir(), err)
		return
	}
	if r.o.Hooks.Removed != nil {
		r.o.Hooks.Removed()
	}
}
