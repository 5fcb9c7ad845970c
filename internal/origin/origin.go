// Package origin measures where a read phase's bytes came from: how much
// of what it read reached the storage under test and how much a cache
// answered. It reads the counters of what sits under the target (the block
// device behind the mount, the NFS client, JuiceFS's .stats) through the
// metric sources of `fsbench stats`, just before and just after the phase,
// and the page cache of the phase's files just before it. Where no counter
// applies the origin is unknown, with the reason; it is never inferred.
//
// It never guesses: where no counter covers the target, the origin is
// unknown, with the reason. It writes nothing.
package origin

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/procfs"
	"golang.org/x/sys/unix"

	"github.com/fsbench/fsbench/internal/juicefs"
	"github.com/fsbench/fsbench/internal/report"
	"github.com/fsbench/fsbench/internal/stats"
	"github.com/fsbench/fsbench/internal/sysio"
	"github.com/fsbench/fsbench/internal/units"
)

// Probe is the counter of the storage under one directory.
type Probe struct {
	// Direct is set when the phases read with O_DIRECT (--direct): a
	// warning then says that it did not bypass the cache.
	Direct bool
	// Remedy, if set, is what a warning of a cache-served phase proposes,
	// instead of Remedy or DirectRemedy: a command's own way.
	Remedy string

	src      stats.Source // nil when no counter applies
	name     string       // report.Origin.Source
	storage  string       // the sample value of bytes read from the storage
	cache    string       // the client's own cache, if it counts its hits
	cacheKey string
	// used is a counter the client always exports: with it present, a
	// labelled series still missing (made on first use) is zero.
	used    string
	why     string // why no counter applies
	machine string // report.Origin.Machine
	// own is set for a block device this process reads itself (not
	// through FUSE): its count of what it fetched from storage
	// (/proc/self/io) is then the run's own figure, where the device's
	// counter counts every reader.
	own      bool
	procRoot string // where /proc is, for own
}

// New finds the counter of the storage that holds dir, from the mount
// table under sysio.ProcRoot.
func New(dir string) *Probe {
	m, err := sysio.FindMount(dir)
	if err != nil {
		return &Probe{why: err.Error()}
	}
	data, err := os.ReadFile(filepath.Join(sysio.ProcRoot, "self", "mountinfo"))
	if err != nil {
		return &Probe{why: fmt.Sprintf("read mount table: %v", err)}
	}
	p := ForMount(sysio.ProcRoot, m, sysio.ParseMountInfo(data))
	p.machine = sysio.Machine(sysio.ProcRoot)
	return p
}

// ForMount finds the counter of the storage behind mount m, reading under
// procRoot; mounts is the whole mount table, to follow a FUSE mount of a
// directory (bindfs) to the file system below it.
func ForMount(procRoot string, m sysio.Mount, mounts []sysio.Mount) *Probe {
	switch {
	case juicefs.IsJuiceFS(m.FSType):
		return &Probe{src: &stats.JuiceFSSource{MountPoint: m.MountPoint}, name: "JuiceFS object storage",
			storage: "juicefs_object_request_data_bytes_GET", cache: "JuiceFS block cache", cacheKey: "juicefs_blockcache_hit_bytes",
			used: "juicefs_object_request_errors"}
	case m.FSType == "nfs" || m.FSType == "nfs4":
		n, err := stats.NewNFSSource(procRoot, m.MountPoint)
		if err != nil {
			return &Probe{why: err.Error()}
		}
		return &Probe{src: n, name: "NFS client", storage: "nfs.read_bytes"}
	}
	dm, why := deviceMount(m, mounts)
	if why != "" {
		return &Probe{why: why}
	}
	major, minor, why := deviceNumber(dm)
	if why != "" {
		return &Probe{why: why}
	}
	d, err := stats.NewDiskSource(procRoot, major, minor, false)
	if err != nil {
		return &Probe{why: err.Error()}
	}
	name := deviceName(d, major, minor)
	if name == "" {
		return &Probe{why: fmt.Sprintf("%s on %s: device %d:%d is not in %s/diskstats (%s)",
			dm.FSType, dm.MountPoint, major, minor, procRoot, dm.Source)}
	}
	// Through FUSE, the daemon reads the device, not this process: its
	// own count says nothing then.
	own := dm.MountPoint == m.MountPoint
	return &Probe{src: d, name: fmt.Sprintf("block device %s (%d:%d)", name, major, minor), storage: "disk.read_bytes", own: own, procRoot: procRoot}
}

// maxFollow bounds how many FUSE mounts of directories are followed down.
const maxFollow = 4

// deviceMount follows a FUSE mount whose source is a directory (bindfs,
// mergerfs of one branch) to the mount that holds that directory.
func deviceMount(m sysio.Mount, mounts []sysio.Mount) (sysio.Mount, string) {
	for range maxFollow {
		if m.FSType != "fuse" && !strings.HasPrefix(m.FSType, "fuse.") {
			return m, ""
		}
		src := m.Source
		st, err := os.Stat(src)
		if !filepath.IsAbs(src) || err != nil || !st.IsDir() {
			return m, fmt.Sprintf("%s on %s: a FUSE file system whose source %q is not a directory fsbench can follow to a device", m.FSType, m.MountPoint, src)
		}
		if r, err := filepath.EvalSymlinks(src); err == nil {
			src = r
		}
		below, ok := sysio.MountOf(mounts, src)
		if !ok || below.MountPoint == m.MountPoint {
			return m, fmt.Sprintf("%s on %s: no mount holds its source %s", m.FSType, m.MountPoint, src)
		}
		m = below
	}
	return m, fmt.Sprintf("%s on %s: more than %d FUSE mounts stacked", m.FSType, m.MountPoint, maxFollow)
}

// deviceNumber is the block device of a mount: its major:minor in the
// mount table, or for a file system with an anonymous device number
// (btrfs) the device its source names.
func deviceNumber(m sysio.Mount) (major, minor uint32, why string) {
	if m.Major != 0 {
		return uint32(m.Major), uint32(m.Minor), ""
	}
	if strings.HasPrefix(m.Source, "/dev/") {
		var st unix.Stat_t
		if err := unix.Stat(m.Source, &st); err == nil && st.Mode&unix.S_IFMT == unix.S_IFBLK {
			return unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)), ""
		}
	}
	return 0, 0, fmt.Sprintf("%s on %s has no block device (source %s)", m.FSType, m.MountPoint, m.Source)
}

// deviceName is the diskstats name of device major:minor, or "" when it
// is not there.
func deviceName(d *stats.DiskSource, major, minor uint32) string {
	all, err := d.FS.ProcDiskstats()
	if err != nil {
		return ""
	}
	for _, s := range all {
		if s.MajorNumber == major && s.MinorNumber == minor {
			return s.DeviceName
		}
	}
	return ""
}

// Source names the counter of the storage, or is "" when none applies.
func (p *Probe) Source() string { return p.name }

// Unknown says why no counter applies, or is "".
func (p *Probe) Unknown() string { return p.why }

// Reading is what was read before a phase.
type Reading struct {
	p       *Probe
	before  *stats.Sample
	err     error
	own     int64 // this process's bytes fetched from storage, before
	ownErr  error
	page    *int64
	pageWhy string
}

// NotLooked is why the page cache of a phase's files is unknown after all
// caches were dropped just before it.
const NotLooked = "not looked at after all caches were dropped: opening the files would bring back the metadata the phase's opens are timed on"

// Begin reads the counters before a phase that reads files. dropped says
// that all caches (data and metadata) were dropped just before: the files'
// page cache is then not looked at, since opening them to look would read
// their metadata back and flatter the phase. A nil probe gives a nil
// reading, whose End does nothing.
func (p *Probe) Begin(ctx context.Context, files []string, dropped bool) *Reading {
	if p == nil {
		return nil
	}
	if dropped {
		return p.begin(ctx, nil, NotLooked)
	}
	page, why := PageCache(files)
	return p.begin(ctx, page, why)
}

// BeginUnlooked is Begin without a look at the page cache, which why says
// is not taken: a file that every rank reads a part of, whose pages
// cached are not what one rank will find.
func (p *Probe) BeginUnlooked(ctx context.Context, why string) *Reading {
	if p == nil {
		return nil
	}
	return p.begin(ctx, nil, why)
}

func (p *Probe) begin(ctx context.Context, page *int64, pageWhy string) *Reading {
	r := &Reading{p: p, page: page, pageWhy: pageWhy}
	if p.own {
		r.own, r.ownErr = fetched(p.procRoot)
	}
	if p.src != nil {
		r.before = stats.NewSample(time.Now())
		r.err = p.src.Collect(ctx, r.before)
	}
	return r
}

// End reads the counters again after the phase, sets ph.Origin from what
// they moved by and read (the bytes the phase read between Begin and End,
// a warm-up included), and returns the warning of a phase served mostly
// from a cache, or "".
func (r *Reading) End(ctx context.Context, ph *report.PhaseResult, read int64) string {
	if r == nil {
		return ""
	}
	ph.Origin = r.origin(ctx, read)
	remedy := cmp.Or(r.p.Remedy, Remedy)
	if r.p.Direct {
		remedy = cmp.Or(r.p.Remedy, DirectRemedy)
	}
	return Warning(ph.Name, ph.Origin, remedy)
}

func (r *Reading) origin(ctx context.Context, read int64) *report.Origin {
	p := r.p
	o := &report.Origin{Source: p.name, ReadBytes: read, PageCacheBytes: r.page, PageCacheUnknown: r.pageWhy, Unknown: p.why, Machine: p.machine}
	if p.src != nil {
		after := stats.NewSample(time.Now())
		err := r.err
		if err == nil {
			err = p.src.Collect(ctx, after)
		}
		if err != nil {
			o.Unknown = err.Error()
		} else {
			o.StorageBytes, o.Unknown = delta(r.before, after, p.storage, p.used)
			r.ownBytes(o)
			if p.cacheKey != "" {
				o.CacheBytes, _ = delta(r.before, after, p.cacheKey, p.used)
				o.Cache = p.cache
			}
		}
	}
	o.SetFromStorage()
	return o
}

// ownBytes makes the bytes from storage of o this process's own when the
// kernel counts them, keeping the device's growth in DeviceBytes; it
// marks the device Shared when the device's counter grew well beyond what
// the process fetched, or without the process's count, beyond what the
// phase read (report.SharedMargin).
func (r *Reading) ownBytes(o *report.Origin) {
	if !r.p.own || o.StorageBytes == nil {
		return
	}
	dev := *o.StorageBytes
	after, err := fetched(r.p.procRoot)
	if err != nil || r.ownErr != nil || after < r.own {
		o.Shared = dev > report.SharedMargin(o.ReadBytes)
		return
	}
	// The kernel's count is of every device the process read from (its
	// own program's pages, faulted in again after caches were dropped,
	// come from the root disk): of this one it fetched at most what the
	// device's counter grew by.
	d := min(after-r.own, dev)
	o.StorageBytes, o.DeviceBytes, o.Own, o.PID = &d, &dev, true, os.Getpid()
	o.Shared = dev > report.SharedMargin(d)
}

// fetched is what this process has had fetched from storage so far: the
// kernel's read_bytes of /proc/self/io (under procRoot), every thread's
// reads that went below the page cache (to a block device) together.
func fetched(procRoot string) (int64, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return 0, err
	}
	self, err := fs.Proc(os.Getpid())
	if err != nil {
		return 0, err
	}
	io, err := self.IO()
	if err != nil {
		return 0, err
	}
	return int64(io.ReadBytes), nil
}

// delta is how much a counter grew between two samples. A counter missing
// from the first was zero then (JuiceFS makes labelled series on first
// use), and so is one missing from both while the counter used is there
// (no such request yet); one missing otherwise, or that went backwards
// (the client restarted), is unknown.
func delta(before, after *stats.Sample, key, used string) (*int64, string) {
	v1, ok := after.Values[key]
	if _, client := after.Values[used]; !ok && used != "" && client {
		v1, ok = 0, true
	}
	if !ok {
		return nil, "counter " + key + " is missing"
	}
	v0 := before.Values[key]
	if v1 < v0 {
		return nil, "counter " + key + " went backwards (the client restarted?)"
	}
	d := int64(v1 - v0)
	return &d, ""
}

// Mostly is the share of a phase's bytes, in percent, below which the
// storage did not serve it mostly, and above which a cache did.
const Mostly = report.MostlyFromStorage

// Remedy is what a warning of a cache-served read phase proposes;
// DirectRemedy what it proposes when the phase read with --direct already
// (a FUSE file system may read through a page cache below it).
const (
	Remedy       = "to measure the storage, drop the caches before reading (as root; not with --drop-caches never), read a dataset larger than memory, or use --direct"
	DirectRemedy = "--direct did not bypass it (a FUSE file system may read through the page cache of what is below it); to measure the storage, drop the caches before reading (as root; not with --drop-caches never) or read a dataset larger than memory"
)

// Warning is the warning for a read phase served mostly from a cache, or
// "" when the storage served most of it or nothing says otherwise; it ends
// with remedy (Remedy, DirectRemedy after O_DIRECT reads, or a command's
// own).
func Warning(phase string, o *report.Origin, remedy string) string {
	if o == nil || o.ReadBytes <= 0 {
		return ""
	}
	if o.FromStorage != nil {
		if *o.FromStorage >= Mostly {
			return ""
		}
		return fmt.Sprintf("%s: only %.1f%% of the %s it read came from the storage (%s): %s served the rest; %s",
			phase, *o.FromStorage, units.FormatBytes(o.ReadBytes), o.Source, cacheName(o), remedy)
	}
	if o.PageCacheBytes == nil {
		return ""
	}
	pct := min(100, float64(*o.PageCacheBytes)*100/float64(o.ReadBytes))
	if pct < Mostly {
		return ""
	}
	return fmt.Sprintf("%s: %.1f%% of the %s it read was in the page cache before it began (from storage unknown: %s); %s",
		phase, pct, units.FormatBytes(o.ReadBytes), o.Unknown, remedy)
}

// cacheName names the cache that served a phase the storage did not.
func cacheName(o *report.Origin) string {
	switch {
	case o.CacheBytes != nil && *o.CacheBytes*2 >= o.ReadBytes:
		return o.Cache
	case o.Source == "NFS client":
		return "the NFS client's cache"
	}
	return "the page cache"
}
