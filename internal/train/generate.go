package train

import (
	"context"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/engine"
	"github.com/fsbench/fsbench/internal/pattern"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
	"github.com/fsbench/fsbench/pkg/object"
)

// ownFiles are the dataset files this host makes: all of them on one
// host, every Hosts-th from its index on many.
func (o *Options) ownFiles(files int) []int {
	var out []int
	for f := o.Host; f < files; f += max(o.Hosts, 1) {
		out = append(out, f)
	}
	return out
}

// generator writes the dataset's files.
type generator struct {
	ds    *Dataset
	store object.Storage // the dataset's prefix in an object store, or nil
	files []int
	pat   *pattern.Pattern
	flags int
	align int
	buf   int
}

// generate writes this host's files of the dataset: a measured phase, one
// operation per file (create to close).
func (r *run) generate(ctx context.Context) (report.PhaseResult, error) {
	g := &generator{ds: r.ds, store: r.store, files: r.o.ownFiles(r.ds.Files), pat: pattern.NewData(r.ds.Seed, r.ds.Data()),
		flags: unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_CLOEXEC, align: 1}
	if r.o.Direct {
		g.flags |= sysio.DirectFlag
		g.align = r.align.Mem
	}
	g.buf = int(min(chunk, r.ds.MaxSample()*int64(r.ds.PerFile)))
	g.buf = (g.buf + int(r.ds.Align) - 1) / int(r.ds.Align) * int(r.ds.Align)
	p := engine.Phase{Name: "generate", Title: "Generate dataset", Tasks: max(len(g.files), 1),
		Setup: func(w *engine.Worker) error {
			if w.State == nil && g.store == nil {
				w.State = sysio.AlignedBuffer(g.buf, g.align)
			}
			return nil
		},
		Do: func(w *engine.Worker, task, _ int) error {
			if g.store != nil {
				return g.put(ctx, w, task)
			}
			return g.write(w, task)
		},
	}
	eng := engine.New(min(r.o.GenThreads, p.Tasks))
	res, err := r.runPhase(ctx, eng, &p, int64(len(g.files)), "files")
	out := res.Report()
	out.Value = report.Measure{Value: out.BytesPerSec / float64(units.MiB), Unit: report.UnitMiBPerSec}
	out.Cost = report.Measure{Value: out.Latency.Mean / 1e3, Unit: report.UnitMsPerFile}
	out.LatencyOf = fmt.Sprintf("write a file of %d samples (create to close)", r.ds.PerFile)
	if r.store != nil {
		out.LatencyOf = fmt.Sprintf("put an object of %d samples", r.ds.PerFile)
	}
	return out, err
}

// write creates file number task of the host's list and writes its
// samples, chunk by chunk.
func (g *generator) write(w *engine.Worker, task int) error {
	if len(g.files) == 0 {
		return nil // a host with no file of its own
	}
	st, ok := w.Begin()
	if !ok {
		return nil
	}
	f := g.files[task]
	path := g.ds.Path(f)
	fd, err := unix.Open(path, g.flags, 0o644)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	buf := w.State.([]byte)
	size := g.ds.FileSize(f)
	for off := int64(0); off < size; {
		select {
		case <-w.Cancelled():
			unix.Close(fd)
			return context.Canceled
		default:
		}
		b := buf[:min(int64(len(buf)), size-off)]
		g.pat.Fill(b, uint64(f), off)
		n, err := unix.Pwrite(fd, b, off)
		if err != nil {
			unix.Close(fd)
			return fmt.Errorf("write %s at %d: %w", path, off, err)
		}
		off += int64(n)
	}
	if err := unix.Close(fd); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	w.End(st, size)
	w.Item()
	return nil
}

// dropCaches drops the dataset from the kernel's caches after it was
// written: everything as root, else the dataset's files one by one.
func (r *run) dropCaches() {
	if !r.o.DropCaches || r.store != nil {
		return
	}
	if os.Geteuid() == 0 {
		if err := sysio.DropCaches(); err == nil {
			r.res.CacheDrop = "drop_caches"
			return
		}
	}
	// Without root, the files this host wrote: what its page cache holds.
	r.res.CacheDrop = "fadvise"
	for _, f := range r.o.ownFiles(r.ds.Files) {
		if err := sysio.DropFileCache(r.ds.Path(f)); err != nil {
			r.warn("drop page cache of %s: %v", r.ds.Path(f), err)
			return
		}
	}
}
