package objbench

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	"github.com/fsbench/fsbench/internal/origin"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/runenv"
)

// localReads makes the file store's gets read the storage, as bench's
// read phases do: its objects are files that the puts just left in the
// page cache, so a get of them would measure memory. Before the items that
// get objects the caches are dropped (--drop-caches: all of them as root,
// else the objects' own pages), and the figures of where the bytes came
// from (origin) are taken around them. Other stores have no local files:
// their reads are the store's own.
type localReads struct {
	dir   string // the run's objects, "" when the store is not a directory
	drop  *runenv.Dropper
	probe *origin.Probe
}

// setupLocalReads prepares the drops of a file store, from the store's
// URL (file:///PATH/) and the run's prefix.
func (r *run) setupLocalReads() {
	root, ok := strings.CutPrefix(r.base.String(), "file://")
	if !ok {
		return
	}
	l := &r.local
	l.dir = filepath.Join(root, filepath.FromSlash(r.prefix))
	l.drop = runenv.NewDropper(runenv.Options{DropCaches: r.o.DropCaches, SkipDropCaches: r.o.SkipDropCaches},
		os.Geteuid() == 0, r.warn)
	l.probe = origin.New(root)
	l.probe.Remedy = "to measure the storage, drop the caches before the gets (--drop-caches auto, as root, or always)"
	r.res.CacheDrop = l.drop.Method()
}

// beforeGets drops the objects of keys from the caches before item, and
// begins the reading of the storage's counters; nil for other stores.
func (r *run) beforeGets(ctx context.Context, item string, keys []string) *origin.Reading {
	l := &r.local
	if l.dir == "" {
		return nil
	}
	files := make([]string, len(keys))
	for i, k := range keys {
		files[i] = filepath.Join(l.dir, filepath.FromSlash(k))
	}
	l.drop.Drop(item, files)
	r.res.CacheDrop = l.drop.Method() // after any fallback
	return l.probe.Begin(ctx, files, l.drop.Method() == "drop_caches")
}

// afterGets sets the origin of ph from the reading begun before it, and
// warns of a phase the page cache served.
func (r *run) afterGets(ctx context.Context, reading *origin.Reading, ph *report.PhaseResult) {
	if w := reading.End(ctx, ph, ph.Bytes); w != "" {
		r.warn("%s", w)
	}
}
