package stats

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// The kernel sources read /proc through prometheus/procfs, under a root
// that tests point at a fixture tree.

// SystemSource reads system-wide CPU time (/proc/stat) and memory
// (/proc/meminfo) into sys.cpu.* (seconds) and sys.mem.* (bytes).
type SystemSource struct {
	FS   procfs.FS
	root string
}

// NewSystemSource reads under procRoot ("/proc").
func NewSystemSource(procRoot string) (*SystemSource, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", procRoot, err)
	}
	return &SystemSource{FS: fs, root: procRoot}, nil
}

// Name implements Source.
func (s *SystemSource) Name() string { return "system" }

// Collect implements Source.
func (s *SystemSource) Collect(_ context.Context, sm *Sample) error {
	var errs []string
	if st, err := s.FS.Stat(); err == nil {
		c := st.CPUTotal
		sm.Set("sys.cpu.user", c.User+c.Nice)
		sm.Set("sys.cpu.system", c.System+c.IRQ+c.SoftIRQ)
		sm.Set("sys.cpu.iowait", c.Iowait)
		sm.Set("sys.cpu.idle", c.Idle)
		sm.Set("sys.cpu.steal", c.Steal)
		// Guest time is already counted in user time.
		sm.Set("sys.cpu.total", c.User+c.Nice+c.System+c.IRQ+c.SoftIRQ+c.Iowait+c.Idle+c.Steal)
	} else {
		errs = append(errs, fmt.Sprintf("read %s: %v", filepath.Join(s.root, "stat"), err))
	}
	if mi, err := s.FS.Meminfo(); err == nil {
		kb := func(name string, p *uint64) {
			if p != nil {
				sm.Set(name, float64(*p)*1024)
			}
		}
		kb("sys.mem.total", mi.MemTotal)
		kb("sys.mem.free", mi.MemFree)
		kb("sys.mem.cached", mi.Cached)
		kb("sys.mem.dirty", mi.Dirty)
		kb("sys.mem.writeback", mi.Writeback)
		if mi.MemTotal != nil {
			avail := mi.MemAvailable
			if avail == nil && mi.MemFree != nil && mi.Cached != nil && mi.Buffers != nil {
				v := *mi.MemFree + *mi.Cached + *mi.Buffers
				avail = &v
			}
			if avail != nil && *avail <= *mi.MemTotal {
				sm.Set("sys.mem.used", float64(*mi.MemTotal-*avail)*1024)
			}
		}
	} else {
		errs = append(errs, fmt.Sprintf("read %s: %v", filepath.Join(s.root, "meminfo"), err))
	}
	if len(errs) > 0 {
		return fmt.Errorf("system: %s", strings.Join(errs, "; "))
	}
	return nil
}

// SectorSize is the unit of the sector counts of /proc/diskstats, whatever
// the device's real sector size.
const SectorSize = 512

// DiskSource reads /proc/diskstats for one device (by major:minor) or, when
// Whole is set, the sum of the whole physical disks.
type DiskSource struct {
	FS           blockdevice.FS
	Major, Minor uint32
	Whole        bool
	root         string
}

// NewDiskSource reads under procRoot; with whole false it follows the
// device major:minor.
func NewDiskSource(procRoot string, major, minor uint32, whole bool) (*DiskSource, error) {
	fs, err := blockdevice.NewFS(procRoot, procRoot)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", procRoot, err)
	}
	return &DiskSource{FS: fs, Major: major, Minor: minor, Whole: whole, root: procRoot}, nil
}

// Name implements Source.
func (d *DiskSource) Name() string { return "disk" }

// Collect implements Source.
func (d *DiskSource) Collect(_ context.Context, sm *Sample) error {
	stats, err := d.FS.ProcDiskstats()
	if err != nil {
		return fmt.Errorf("disk: read %s: %w", filepath.Join(d.root, "diskstats"), err)
	}
	found := false
	for _, ds := range stats {
		if d.Whole {
			if !WholeDisk(ds.DeviceName) {
				continue
			}
		} else if ds.MajorNumber != d.Major || ds.MinorNumber != d.Minor {
			continue
		}
		found = true
		io := ds.IOStats
		sm.Add("disk.reads", float64(io.ReadIOs))
		sm.Add("disk.writes", float64(io.WriteIOs))
		sm.Add("disk.ios", float64(io.ReadIOs+io.WriteIOs))
		sm.Add("disk.read_bytes", float64(io.ReadSectors)*SectorSize)
		sm.Add("disk.write_bytes", float64(io.WriteSectors)*SectorSize)
		sm.Add("disk.wait_ms", float64(io.ReadTicks+io.WriteTicks))
		sm.Add("disk.busy_ms", float64(io.IOsTotalTicks))
	}
	if !found && !d.Whole {
		return fmt.Errorf("disk: device %d:%d not in %s", d.Major, d.Minor, filepath.Join(d.root, "diskstats"))
	}
	return nil
}

// WholeDisk reports whether a diskstats device name is a physical disk
// rather than a partition, a loop device, a RAM disk, or a virtual device
// stacked on others (device mapper, md), so that summing them counts each
// I/O once.
func WholeDisk(name string) bool {
	for _, p := range []string{"loop", "ram", "zram", "dm-", "md", "sr", "fd", "nbd"} {
		if strings.HasPrefix(name, p) {
			return false
		}
	}
	last := name[len(name)-1]
	switch {
	case strings.HasPrefix(name, "nvme") || strings.HasPrefix(name, "mmcblk"):
		// nvme0n1 is a disk, nvme0n1p1 a partition.
		return !strings.Contains(name[4:], "p")
	case last >= '0' && last <= '9':
		// sda1, vda2, xvda1: partitions.
		return false
	}
	return true
}

// NFSSource reads the NFS client statistics of one mount from
// /proc/self/mountstats.
type NFSSource struct {
	FS         procfs.FS
	MountPoint string
	root       string
}

// NewNFSSource reads under procRoot.
func NewNFSSource(procRoot, mountPoint string) (*NFSSource, error) {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", procRoot, err)
	}
	return &NFSSource{FS: fs, MountPoint: mountPoint, root: procRoot}, nil
}

// Name implements Source.
func (n *NFSSource) Name() string { return "nfs" }

// nfsClass sorts NFS operations into the classes the nfs section shows.
func nfsClass(op string) string {
	switch strings.ToUpper(op) {
	case "READ":
		return "read"
	case "WRITE", "COMMIT":
		return "write"
	case "NULL":
		return ""
	}
	return "meta"
}

// Collect implements Source.
func (n *NFSSource) Collect(_ context.Context, sm *Sample) error {
	self, err := n.FS.Self()
	if err != nil {
		return fmt.Errorf("nfs: %s/self: %w", n.root, err)
	}
	mounts, err := self.MountStats()
	if err != nil {
		return fmt.Errorf("nfs: read %s/self/mountstats: %w", n.root, err)
	}
	var st *procfs.MountStatsNFS
	for _, m := range mounts {
		if m.Mount != n.MountPoint {
			continue
		}
		if s, ok := m.Stats.(*procfs.MountStatsNFS); ok {
			st = s // the last one wins: it is mounted on top
		}
	}
	if st == nil {
		return fmt.Errorf("nfs: no NFS statistics for %s in %s/self/mountstats", n.MountPoint, n.root)
	}
	sm.Set("nfs.read_bytes", float64(st.Bytes.ReadTotal))
	sm.Set("nfs.write_bytes", float64(st.Bytes.WriteTotal))
	var ops float64
	for _, c := range []string{"read", "write", "meta"} {
		sm.Set("nfs."+c+".ops", 0)
		sm.Set("nfs."+c+".rtt_ms", 0)
		sm.Set("nfs."+c+".exe_ms", 0)
	}
	for _, op := range st.Operations {
		c := nfsClass(op.Operation)
		if c == "" {
			continue
		}
		ops += float64(op.Requests)
		sm.Add("nfs."+c+".ops", float64(op.Requests))
		sm.Add("nfs."+c+".rtt_ms", float64(op.CumulativeTotalResponseMilliseconds))
		sm.Add("nfs."+c+".exe_ms", float64(op.CumulativeTotalRequestMilliseconds))
	}
	sm.Set("nfs.ops", ops)
	return nil
}

// ProcessSource reads the CPU time and memory of one process (the FUSE
// daemon serving a mount) from /proc/PID/stat.
type ProcessSource struct {
	Root string
	PID  int
}

// NewProcessSource reads process pid under procRoot.
func NewProcessSource(procRoot string, pid int) (*ProcessSource, error) {
	if _, err := os.Stat(filepath.Join(procRoot, strconv.Itoa(pid))); err != nil {
		return nil, fmt.Errorf("process %d: %w", pid, err)
	}
	return &ProcessSource{Root: procRoot, PID: pid}, nil
}

// Name implements Source.
func (p *ProcessSource) Name() string { return "process" }

// Collect implements Source.
func (p *ProcessSource) Collect(_ context.Context, sm *Sample) error {
	path := filepath.Join(p.Root, strconv.Itoa(p.PID), "stat")
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("process %d: %w", p.PID, err)
	}
	st, err := ParseProcStat(data)
	if err != nil {
		return fmt.Errorf("process %d: %s: %w", p.PID, path, err)
	}
	sm.Set("proc.cpu", st.CPUSeconds)
	sm.Set("proc.rss", float64(st.RSSPages)*float64(os.Getpagesize()))
	sm.Set("proc.threads", float64(st.Threads))
	sm.Set("proc.start", float64(st.StartTicks))
	return nil
}

// UserHZ is the unit of the times in /proc/PID/stat: USER_HZ, 100 on every
// Linux architecture that matters.
const UserHZ = 100

// ProcStat is what fsbench reads of /proc/PID/stat.
type ProcStat struct {
	CPUSeconds float64 // user + system time
	RSSPages   int64
	Threads    int64
	StartTicks uint64 // start time after boot, in USER_HZ ticks: identifies the process
}

// ParseProcStat parses /proc/PID/stat. The command name (field 2) may hold
// spaces and parentheses, so the fields are counted from its last ')'.
//
// The other kernel files are read through prometheus/procfs; this one is
// not, because procfs's Proc.Stat (v0.23.0) panics on a file that ends at
// the ')' of the command name (it slices past the end) and wants all 44
// leading fields where fsbench reads 24; a parser of fsbench's must not
// panic whatever it reads (FuzzProcessStat).
func ParseProcStat(data []byte) (ProcStat, error) {
	s := string(data)
	r := strings.LastIndexByte(s, ')')
	if r < 0 || !strings.Contains(s[:r], "(") {
		return ProcStat{}, fmt.Errorf("no (comm) field")
	}
	// Fields from 3 (state) on; index 0 here is field 3.
	f := strings.Fields(s[r+1:])
	const (
		utime      = 14 - 3
		stime      = 15 - 3
		numThreads = 20 - 3
		startTime  = 22 - 3
		rss        = 24 - 3
	)
	if len(f) <= rss {
		return ProcStat{}, fmt.Errorf("%d fields, want at least %d", len(f)+2, rss+3)
	}
	var out ProcStat
	u, err1 := strconv.ParseUint(f[utime], 10, 64)
	st, err2 := strconv.ParseUint(f[stime], 10, 64)
	th, err3 := strconv.ParseInt(f[numThreads], 10, 64)
	start, err4 := strconv.ParseUint(f[startTime], 10, 64)
	pages, err5 := strconv.ParseInt(f[rss], 10, 64)
	for _, err := range []error{err1, err2, err3, err4, err5} {
		if err != nil {
			return ProcStat{}, err
		}
	}
	out.CPUSeconds = float64(u+st) / UserHZ
	out.RSSPages, out.Threads, out.StartTicks = pages, th, start
	return out, nil
}

// FindFUSEDaemon looks for the process serving a FUSE mount: among the
// processes holding /dev/fuse open, the one whose command line names the
// mount point, or the only one. It returns 0 when it cannot tell.
func FindFUSEDaemon(procRoot, mountPoint string) int {
	fs, err := procfs.NewFS(procRoot)
	if err != nil {
		return 0
	}
	procs, err := fs.AllProcs()
	if err != nil {
		return 0
	}
	var holders []procfs.Proc
	for _, p := range procs {
		targets, err := p.FileDescriptorTargets()
		if err != nil {
			continue
		}
		for _, t := range targets {
			if t == "/dev/fuse" {
				holders = append(holders, p)
				break
			}
		}
	}
	for _, p := range holders {
		args, err := p.CmdLine()
		if err != nil {
			continue
		}
		for _, a := range args {
			if a == mountPoint || strings.TrimSuffix(a, "/") == mountPoint {
				return p.PID
			}
		}
	}
	if len(holders) == 1 {
		return holders[0].PID
	}
	return 0
}
